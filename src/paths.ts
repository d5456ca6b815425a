/** Where the project lives on disk, for code that reads its own files (data, tools, caches). */
import * as fs from 'node:fs';
import * as path from 'node:path';

let cachedRoot: string | undefined;

/**
 * The saasbench repo root: the nearest ancestor of `start` (default: this file's directory, which
 * is `dist/src` once compiled) holding a package.json whose name is "saasbench".
 */
export function repoRoot(start: string = __dirname): string {
  if (start === __dirname && cachedRoot) return cachedRoot;
  let dir = path.resolve(start);
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    try {
      const parsed = JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: unknown };
      if (parsed.name === 'saasbench') {
        if (start === __dirname) cachedRoot = dir;
        return dir;
      }
    } catch {
      // no package.json here (or unreadable): keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`cannot find the saasbench repo root (a package.json named "saasbench") above ${start}`);
    }
    dir = parent;
  }
}
