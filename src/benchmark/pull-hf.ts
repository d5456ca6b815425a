import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import type http from 'node:http';
import { z } from 'zod';
import { hfGet, hfJson, networkCause, nextLink, statusCause, TransientError, type HfTarget } from './hf-http';
import { humanSize, PullError } from './pull-error';
import { zodIssueText } from '../zod-issues';

/**
 * A Hugging Face dataset read through the Hub's HTTP file API (what huggingface_hub speaks):
 *   GET {endpoint}/api/datasets/{repo}/revision/{rev}          → {sha}: the commit a branch/tag names
 *   GET {endpoint}/api/datasets/{repo}/tree/{commit}/{path}?recursive=true
 *       → [{type, path, size, oid, lfs?: {oid, size}}], paginated through a Link rel="next" header;
 *         `oid` is the git blob sha1, `lfs.oid` the sha256 of the content of an LFS/Xet file
 *   GET {endpoint}/datasets/{repo}/resolve/{commit}/{path}     → the bytes (LFS files redirect to a CDN)
 * Downloads go to `<dest>.incomplete`, resume with a Range request after a dropped connection,
 * and are renamed to `dest` only once their size and hash match the tree listing.
 */

const Entry = z.object({
  type: z.string(),
  path: z.string(),
  size: z.number().int().nonnegative().optional(),
  oid: z.string().optional(),
  lfs: z.object({ oid: z.string(), size: z.number().int().nonnegative() }).passthrough().optional(),
}).passthrough();

export interface HfFileEntry {
  path: string;
  size: number;
  /** git blob sha1 of the file (of its pointer, for an LFS file) */
  oid: string;
  /** sha256 and size of the content of an LFS/Xet file */
  lfs?: { oid: string; size: number };
}

const RETRIES = 4;

const encPath = (p: string) => p.split('/').map(encodeURIComponent).join('/');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** git's object id of a blob: sha1 over "blob <size>\0" and the bytes. */
export function gitBlobSha1(data: Buffer): string {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
}

export class HfDataset {
  constructor(
    readonly target: HfTarget,
    readonly repo: string,
  ) {}

  /** How failure lines name the dataset. */
  get label(): string {
    return `${this.target.endpoint}/datasets/${this.repo}`;
  }

  private api(...parts: string[]): string {
    return `${this.target.endpoint}/api/datasets/${encPath(this.repo)}/${parts.join('/')}`;
  }

  /** The commit a revision (branch, tag or commit) names. */
  async resolveRevision(rev: string): Promise<string> {
    const { json, res } = await hfJson(this.target, this.api('revision', encodeURIComponent(rev)), `${this.label} @ ${rev}`);
    const sha = (json as { sha?: unknown })?.sha ?? res.headers['x-repo-commit'];
    if (typeof sha !== 'string' || !/^[0-9a-f]{40}$/.test(sha)) throw new PullError(`${this.label} @ ${rev}`, 'the revision API named no commit sha');
    return sha;
  }

  /** Every file under `path` at `commit`, with size and hashes. */
  async listTree(commit: string, path: string): Promise<HfFileEntry[]> {
    const what = `${this.label} tree ${path} @ ${commit.slice(0, 12)}`;
    const files: HfFileEntry[] = [];
    let url: string | null = `${this.api('tree', commit, encPath(path))}?recursive=true`;
    for (let page = 0; url; page++) {
      if (page > 10_000) throw new PullError(what, 'the listing does not end');
      const { json, res } = await hfJson(this.target, url, what);
      const r = z.array(Entry).safeParse(json);
      if (!r.success) throw new PullError(what, `unexpected answer: ${zodIssueText(r.error, { max: 1 })}`);
      for (const e of r.data) {
        if (e.type !== 'file') continue;
        if (e.size === undefined || !e.oid) throw new PullError(what, `${e.path}: no size or oid in the listing`);
        files.push({ path: e.path, size: e.size, oid: e.oid, ...(e.lfs ? { lfs: { oid: e.lfs.oid, size: e.lfs.size } } : {}) });
      }
      url = nextLink(res, new URL(url));
    }
    return files;
  }

  /**
   * Download `entry` at `commit` into `dest` (verified). Returns the sha256 and size written.
   * `log` gets one line per resumed attempt.
   */
  async download(commit: string, entry: HfFileEntry, dest: string, log: (line: string) => void): Promise<{ sha256: string; size: number }> {
    const what = `${this.repo} ${entry.path}`;
    const size = entry.lfs?.size ?? entry.size;
    const part = `${dest}.incomplete`;
    const url = `${this.target.endpoint}/datasets/${encPath(this.repo)}/resolve/${commit}/${encPath(entry.path)}`;
    for (let attempt = 1; ; attempt++) {
      let have = existsSync(part) ? statSync(part).size : 0;
      if (have > size) {
        rmSync(part);
        have = 0;
      }
      if (have === size && existsSync(part)) break;
      try {
        await this.fetchInto(url, part, have, what);
      } catch (e) {
        if (!(e instanceof TransientError)) throw e;
        if (attempt >= RETRIES) throw new PullError(what, `${e.message}; gave up after ${RETRIES} attempts`);
        const now = existsSync(part) ? statSync(part).size : 0;
        log(`${entry.path}: ${e.message} at ${humanSize(now)} of ${humanSize(size)}; resuming`);
        await sleep(200 * attempt);
      }
    }
    const data = readFileSync(part);
    const sha256 = createHash('sha256').update(data).digest('hex');
    const [algo, expected, got] = entry.lfs ? ['sha256', entry.lfs.oid.replace(/^sha256:/, ''), sha256] : ['git blob sha1', entry.oid, gitBlobSha1(data)];
    if (data.length !== size || expected !== got) {
      rmSync(part, { force: true });
      throw new PullError(what, data.length !== size ? `size mismatch: expected ${size} bytes, got ${data.length}` : `${algo} mismatch: expected ${expected}, got ${got}`);
    }
    renameSync(part, dest);
    return { sha256, size };
  }

  /** One GET of the rest of the file (from byte `have`), appended to `part`. */
  private async fetchInto(url: string, part: string, have: number, what: string): Promise<void> {
    let res: http.IncomingMessage;
    try {
      ({ res } = await hfGet(this.target, url, have > 0 ? { range: `bytes=${have}-` } : {}));
    } catch (e) {
      if (e instanceof PullError) throw e;
      const err = e as NodeJS.ErrnoException;
      // a refused or unresolvable host is not a dropped download: say so at once
      if (err.code === 'ECONNRESET' || err.code === 'ETIMEDOUT') throw new TransientError(networkCause(err));
      throw new PullError(what, networkCause(err));
    }
    const status = res.statusCode ?? 0;
    if (status === 416 && have > 0) {
      res.resume();
      rmSync(part, { force: true }); // what we have does not fit the file any more: start over
      throw new TransientError('range not satisfiable');
    }
    if (status >= 500 || status === 429) {
      res.resume();
      throw new TransientError(statusCause(res, !!this.target.token));
    }
    if (status !== 200 && status !== 206) {
      res.resume();
      throw new PullError(what, statusCause(res, !!this.target.token));
    }
    if (status === 206) {
      const m = /^bytes (\d+)-/.exec(String(res.headers['content-range'] ?? ''));
      if (!m || Number(m[1]) !== have) {
        res.resume();
        throw new PullError(what, `the server answered a range from ${m?.[1] ?? '?'} when asked from ${have}`);
      }
    }
    // 200: the whole file again (the server ignored the range); 206: the rest of it
    const fd = openSync(part, status === 206 ? 'a' : 'w');
    const expectLen = Number(res.headers['content-length'] ?? NaN);
    let got = 0;
    try {
      await new Promise<void>((resolvePromise, reject) => {
        let done = false;
        const fail = (why: string) => {
          if (!done) reject(new TransientError(why));
          done = true;
        };
        res.on('data', (c: Buffer) => {
          writeSync(fd, c);
          got += c.length;
        });
        res.on('end', () => {
          if (done) return;
          done = true;
          if (Number.isFinite(expectLen) && got < expectLen) reject(new TransientError('connection closed early'));
          else resolvePromise();
        });
        res.on('aborted', () => fail('connection lost'));
        res.on('error', (e: NodeJS.ErrnoException) => fail(e.code === 'ECONNRESET' || e.message === 'aborted' ? 'connection lost' : networkCause(e)));
        res.on('close', () => fail('connection lost'));
      });
    } finally {
      closeSync(fd);
    }
  }
}
