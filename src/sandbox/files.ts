// File access through the Docker archive API (works for stopped containers and needs no tools
// inside the image). Writes unpack at "/" with full paths so missing parents get created.
import { statSync } from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import * as tar from 'tar-stream';
import { docker } from './client';
import { SandboxInputError, infra, isNotFound } from './errors';
import { globIgnore, packEntries, walkDir, type DirEntry } from './tar';

export interface FileToWrite {
  /** Relative to destDir (no ".." segments). */
  path: string;
  /** the bytes to write; or `hostFile`, a file on this host streamed in (agent binaries are large) */
  content?: Buffer | string;
  hostFile?: string;
  mode?: number;
}

export interface OwnerOptions {
  /** Owner of the written entries inside the container; default root. */
  uid?: number;
  gid?: number;
}

export function containerPath(p: string): string {
  if (!p.startsWith('/')) throw new SandboxInputError(`container path must be absolute: ${p}`);
  return path.posix.normalize(p);
}

/** Contents of a regular file, following symlinks; null when it does not exist. */
export async function readFile(container: string, filePath: string, opts: { maxBytes?: number } = {}): Promise<Buffer | null> {
  let p = containerPath(filePath);
  for (let hops = 0; hops < 8; hops++) {
    const r = await readEntry(container, p, opts.maxBytes);
    if (r === null) return null;
    if (r.kind === 'file') return r.data;
    if (r.kind === 'dir') throw new SandboxInputError(`readFile: ${p} in ${container} is a directory`);
    p = path.posix.resolve(path.posix.dirname(p), r.target);
  }
  throw new SandboxInputError(`readFile: too many symlinks resolving ${filePath} in ${container}`);
}

type Entry = { kind: 'file'; data: Buffer } | { kind: 'dir' } | { kind: 'link'; target: string };

async function readEntry(container: string, p: string, maxBytes?: number): Promise<Entry | null> {
  let archive: NodeJS.ReadableStream;
  try {
    archive = await docker().getContainer(container).getArchive({ path: p });
  } catch (err) {
    // The daemon says "No such container: <id>" for a missing container, "Could not find the file" otherwise.
    if (isNotFound(err) && !/No such container:/i.test(String((err as Error).message))) return null;
    throw infra(`reading ${p} from ${container}`, err);
  }
  const extract = tar.extract();
  const done = new Promise<Entry>((resolve, reject) => {
    let settled = false;
    const settle = (e: Entry) => {
      if (!settled) {
        settled = true;
        resolve(e);
      }
    };
    extract.on('entry', (header, stream, next) => {
      if (settled) {
        stream.resume();
        return next();
      }
      if (header.type === 'directory') settle({ kind: 'dir' });
      else if (header.type === 'symlink' || header.type === 'link') settle({ kind: 'link', target: header.linkname ?? '' });
      if (settled) {
        stream.resume();
        return next();
      }
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (chunk: unknown) => {
        const b = chunk as Buffer;
        if (maxBytes !== undefined && size >= maxBytes) return;
        const take = maxBytes === undefined ? b : b.subarray(0, maxBytes - size);
        chunks.push(take);
        size += take.length;
      });
      stream.on('end', () => {
        settle({ kind: 'file', data: Buffer.concat(chunks) });
        next();
      });
    });
    extract.on('finish', () => (settled ? undefined : reject(new Error(`empty archive for ${p}`))));
    extract.on('error', (err) => (settled ? undefined : reject(err)));
  });
  (archive as Readable).pipe(extract);
  try {
    return await done;
  } catch (err) {
    throw infra(`reading ${p} from ${container}`, err);
  } finally {
    (archive as Readable).destroy?.();
  }
}

export async function writeFiles(container: string, destDir: string, files: FileToWrite[], opts: OwnerOptions = {}): Promise<void> {
  const dest = containerPath(destDir);
  const rels = files.map((f) => relativeIn(dest, f.path));
  const streamed: DirEntry[] = [];
  const extra = [];
  for (const [i, f] of files.entries()) {
    if (f.hostFile !== undefined) {
      let st;
      try {
        st = statSync(f.hostFile);
      } catch (err) {
        throw new SandboxInputError(`writeFiles: cannot read host file ${f.hostFile}: ${(err as Error).message}`, { cause: err });
      }
      streamed.push({ rel: rels[i], abs: f.hostFile, type: 'file', mode: f.mode ?? 0o644, size: st.size, mtime: st.mtime });
    } else {
      const c = f.content ?? '';
      extra.push({ name: rels[i], content: Buffer.isBuffer(c) ? c : Buffer.from(c), mode: f.mode ?? 0o644, uid: opts.uid, gid: opts.gid });
    }
  }
  await putAtRoot(container, packEntries(streamed, { prefix: dest === '/' ? '' : dest, extra, uid: opts.uid, gid: opts.gid }), dest);
}

/** `p` relative to `dest`, refusing anything that would land outside it. */
export function relativeIn(dest: string, p: string): string {
  const rel = path.posix.normalize(p).replace(/^\/+/, '');
  if (rel === '..' || rel.startsWith('../') || rel === '.' || rel === '') {
    throw new SandboxInputError(`writeFiles: path ${JSON.stringify(p)} escapes ${dest}`);
  }
  return rel;
}

/** Copies a host directory's contents into destDir (symlinks kept as symlinks). */
export async function copyDirInto(
  container: string,
  hostDir: string,
  destDir: string,
  opts: { exclude?: string[] } & OwnerOptions = {},
): Promise<void> {
  const dest = containerPath(destDir);
  let entries;
  try {
    entries = await walkDir(path.resolve(hostDir), globIgnore(opts.exclude ?? []));
  } catch (err) {
    throw new SandboxInputError(`copyDirInto: cannot read host directory ${hostDir}: ${(err as Error).message}`, { cause: err });
  }
  await putAtRoot(container, packEntries(entries, { prefix: dest === '/' ? '' : dest, uid: opts.uid, gid: opts.gid }), dest);
}

async function putAtRoot(container: string, archive: Readable, dest: string): Promise<void> {
  try {
    await docker().getContainer(container).putArchive(archive, { path: '/' });
  } catch (err) {
    throw infra(`writing into ${dest} in ${container}`, err);
  }
}
