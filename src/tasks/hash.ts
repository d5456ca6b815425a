import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const SKIP = new Set(['node_modules', '.git', '__pycache__']);

/** Content hash of a folder: stable across machines (sorted relative paths + bytes). */
export function hashTree(root: string, files?: string[]): string {
  const h = createHash('sha256');
  const list = files ?? listFiles(root);
  for (const f of [...list].sort()) {
    h.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
  }
  return h.digest('hex');
}

export function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(p));
    else if (e.isFile() || statSync(p).isFile()) out.push(p);
  }
  return out;
}
