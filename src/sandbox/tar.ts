// Host-directory walking and tar packing shared by image builds (context + hash) and
// copyDirInto. Streams file contents so node_modules-sized trees never sit in memory.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import picomatch from 'picomatch';
import * as tar from 'tar-stream';

export interface DirEntry {
  /** Path relative to the walked root, with "/" separators. */
  rel: string;
  abs: string;
  type: 'file' | 'directory' | 'symlink';
  mode: number;
  size: number;
  mtime: Date;
  linkTarget?: string;
}

/** Decides whether a relative path is left out. */
export type IgnoreFn = (rel: string, isDir: boolean) => boolean;

/** Glob excludes for copyDirInto: a pattern without "/" matches a basename at any depth. */
export function globIgnore(patterns: string[]): IgnoreFn {
  if (patterns.length === 0) return () => false;
  const match = picomatch(patterns, { dot: true, basename: true });
  return (rel) => match(rel);
}

/** .dockerignore rules: anchored globs, `!` re-includes, the last matching rule wins. */
export function dockerignore(text: string): { ignore: IgnoreFn; hasNegation: boolean } {
  const rules = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pat = path.posix.normalize((negate ? l.slice(1) : l).trim()).replace(/^\/+/, '').replace(/\/+$/, '');
      // A rule matching a directory also matches everything below it.
      const m = picomatch([pat, `${pat}/**`], { dot: true });
      return { negate, m };
    });
  return {
    hasNegation: rules.some((r) => r.negate),
    ignore: (rel) => {
      let out = false;
      for (const r of rules) if (r.m(rel)) out = !r.negate;
      return out;
    },
  };
}

/** Depth-first walk in sorted order (stable hashes); symlinks are reported, never followed. */
export async function walkDir(root: string, ignore: IgnoreFn, keepDirs?: (rel: string) => boolean): Promise<DirEntry[]> {
  const out: DirEntry[] = [];
  const visit = async (relDir: string): Promise<void> => {
    const absDir = relDir ? path.join(root, relDir) : root;
    const names = (await fs.promises.readdir(absDir)).sort();
    for (const name of names) {
      const rel = relDir ? `${relDir}/${name}` : name;
      const abs = path.join(absDir, name);
      const st = await fs.promises.lstat(abs);
      const isDir = st.isDirectory();
      if (ignore(rel, isDir) && !(isDir && keepDirs?.(rel))) continue;
      if (st.isSymbolicLink()) {
        out.push({ rel, abs, type: 'symlink', mode: st.mode & 0o7777, size: 0, mtime: st.mtime, linkTarget: await fs.promises.readlink(abs) });
      } else if (isDir) {
        out.push({ rel, abs, type: 'directory', mode: st.mode & 0o7777, size: 0, mtime: st.mtime });
        await visit(rel);
      } else if (st.isFile()) {
        out.push({ rel, abs, type: 'file', mode: st.mode & 0o7777, size: st.size, mtime: st.mtime });
      }
      // sockets, fifos and devices are skipped: they cannot be meaningfully copied
    }
  };
  await visit('');
  return out;
}

export interface PackExtra {
  name: string;
  content: Buffer;
  mode?: number;
  uid?: number;
  gid?: number;
}

/**
 * A tar stream of `entries` (names prefixed with `prefix`) followed by `extra` in-memory files.
 * The pack is fed asynchronously; errors surface on the returned stream.
 */
export function packEntries(entries: DirEntry[], opts: { prefix?: string; extra?: PackExtra[]; uid?: number; gid?: number } = {}): Readable {
  const pack = tar.pack();
  const prefix = opts.prefix ? opts.prefix.replace(/^\/+/, '').replace(/\/+$/, '') + '/' : '';
  const owner = { uid: opts.uid ?? 0, gid: opts.gid ?? 0 };
  (async () => {
    for (const e of entries) {
      const name = prefix + e.rel;
      if (e.type === 'directory') {
        await addEntry(pack, { name, type: 'directory', mode: e.mode, mtime: e.mtime, ...owner });
      } else if (e.type === 'symlink') {
        await addEntry(pack, { name, type: 'symlink', linkname: e.linkTarget ?? "", mode: e.mode, mtime: e.mtime, ...owner });
      } else {
        const entry = pack.entry({ name, type: 'file', size: e.size, mode: e.mode, mtime: e.mtime, ...owner });
        await pipeline(fs.createReadStream(e.abs), entry);
      }
    }
    for (const x of opts.extra ?? []) {
      await addEntry(pack, { name: prefix + x.name.replace(/^\/+/, ''), type: 'file', mode: x.mode ?? 0o644, uid: x.uid ?? owner.uid, gid: x.gid ?? owner.gid }, x.content);
    }
    pack.finalize();
  })().catch((err) => pack.destroy(err as Error));
  return pack as unknown as Readable;
}

function addEntry(pack: tar.Pack, header: Partial<tar.Header> & { name: string }, content?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(header, content ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve()));
  });
}
