// A fake Hugging Face Hub (datasets only) on 127.0.0.1, speaking the routes `benchmark pull` uses:
//   GET /api/datasets/<owner>/<name>/revision/<rev>            → {id, sha, siblings}; X-Repo-Commit
//   GET /api/datasets/<owner>/<name>/tree/<rev>/<path>?recursive=true[&cursor=n]
//                                                               → [{type, oid, size, path, lfs?}], Link rel="next" pages
//   GET /datasets/<owner>/<name>/resolve/<rev>/<path>           → bytes (Range → 206); LFS files 302 to a second
//                                                                 listener (another origin, the "CDN")
// Faults: a required token (401 without it), dropping the connection after N bytes of a file,
// serving corrupt bytes. Every request is recorded — whether a credential came, never its value.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeHfOptions {
  /** e.g. SaaSBench/SaaSBench */
  repo: string;
  /** commit sha → (path → content) */
  commits: Record<string, Record<string, string | Buffer>>;
  /** branch/tag → commit sha */
  refs: Record<string, string>;
  /** paths stored as LFS files: listed with lfs {oid: sha256}, resolve redirects to the CDN listener */
  lfs?: string[];
  /** when set, every hub request must carry `Authorization: Bearer <token>` (401 otherwise); the CDN never checks */
  requireToken?: string;
  /** tree entries per page (Link rel="next" pagination); default: everything on one page */
  pageSize?: number;
  /** close the connection after `bytes` bytes of the body of these paths, `times` times */
  dropAfter?: Record<string, { bytes: number; times: number }>;
  /** serve these paths with one byte changed (same size) */
  corrupt?: string[];
}

export interface HfRequest {
  server: 'hub' | 'cdn';
  method: string;
  path: string;
  range?: string;
  /** 'none' when no Authorization header came; 'ok'/'wrong' against requireToken ('sent' when none is required) */
  auth: 'none' | 'ok' | 'wrong' | 'sent';
  status: number;
  /** the body was cut short on purpose */
  dropped?: boolean;
}

export interface FakeHf {
  url: string;
  cdnUrl: string;
  requests: HfRequest[];
  options: FakeHfOptions;
  close(): Promise<void>;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const gitSha1 = (b: Buffer) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');
const lfsPointer = (b: Buffer) => Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(b)}\nsize ${b.length}\n`);

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; port: number; sockets: Set<Socket> }> {
  const server = http.createServer(handler);
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}

export async function startFakeHf(options: FakeHfOptions): Promise<FakeHf> {
  const requests: HfRequest[] = [];
  const o = options;
  const buf = (v: string | Buffer) => (typeof v === 'string' ? Buffer.from(v) : v);
  const commitOf = (rev: string) => o.refs[rev] ?? (o.commits[rev] ? rev : undefined);
  const isLfs = (p: string) => (o.lfs ?? []).includes(p);

  /** Serve `data` (honouring Range), applying the drop/corrupt faults of `path`. */
  const serve = (req: http.IncomingMessage, res: http.ServerResponse, rec: HfRequest, path: string, data: Buffer, extra: Record<string, string> = {}) => {
    let body = data;
    if ((o.corrupt ?? []).includes(path) && body.length) {
      body = Buffer.from(body);
      body[0] ^= 0x01;
    }
    const m = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''));
    let start = 0;
    if (m) {
      start = Number(m[1]);
      if (start >= body.length) {
        rec.status = 416;
        res.writeHead(416, { 'content-range': `bytes */${body.length}` });
        return void res.end();
      }
    }
    const part = body.subarray(start);
    rec.status = m ? 206 : 200;
    res.writeHead(rec.status, { 'content-type': 'application/octet-stream', 'content-length': String(part.length), 'accept-ranges': 'bytes', ...(m ? { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } : {}), ...extra });
    const drop = o.dropAfter?.[path];
    if (drop && drop.times > 0 && part.length > drop.bytes) {
      drop.times--;
      rec.dropped = true;
      res.write(part.subarray(0, drop.bytes), () => setTimeout(() => req.socket.destroy(), 20));
      return;
    }
    res.end(part);
  };

  const json = (res: http.ServerResponse, rec: HfRequest, status: number, value: unknown, headers: Record<string, string> = {}) => {
    rec.status = status;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };

  const cdn = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const rec: HfRequest = { server: 'cdn', method: req.method ?? 'GET', path: url.pathname, range: req.headers.range, auth: req.headers.authorization ? 'sent' : 'none', status: 200 };
    requests.push(rec);
    const commit = url.searchParams.get('commit') ?? '';
    const file = url.searchParams.get('file') ?? '';
    const data = o.commits[commit]?.[file];
    if (!url.pathname.startsWith('/blobs/') || data === undefined || sha256(buf(data)) !== url.pathname.slice('/blobs/'.length)) return json(res, rec, 404, { error: 'no such blob' });
    serve(req, res, rec, file, buf(data));
  });
  const cdnUrl = `http://127.0.0.1:${cdn.port}`;

  const hub = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = decodeURIComponent(url.pathname);
    const a = req.headers.authorization;
    const auth: HfRequest['auth'] = !a ? 'none' : o.requireToken === undefined ? 'sent' : a === `Bearer ${o.requireToken}` ? 'ok' : 'wrong';
    const rec: HfRequest = { server: 'hub', method: req.method ?? 'GET', path, range: req.headers.range, auth, status: 200 };
    requests.push(rec);
    if (o.requireToken !== undefined && auth !== 'ok') return json(res, rec, 401, { error: 'Invalid credentials in Authorization header' });
    const api = /^\/api\/datasets\/([^/]+\/[^/]+)\/(revision|tree)\/([^/]+)(?:\/(.*))?$/.exec(path);
    const resolve = /^\/datasets\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const repo = api?.[1] ?? resolve?.[1];
    if (!repo) return json(res, rec, 404, { error: 'no such route' });
    if (repo !== o.repo) return json(res, rec, 404, { error: 'Repository not found' }, { 'x-error-code': 'RepoNotFound' });
    const commit = commitOf(api ? api[3] : resolve![2]);
    if (!commit) return json(res, rec, 404, { error: 'Revision not found' }, { 'x-error-code': 'RevisionNotFound' });
    const files = o.commits[commit];
    if (api?.[2] === 'revision') return json(res, rec, 200, { id: o.repo, sha: commit, siblings: Object.keys(files).map((rfilename) => ({ rfilename })) }, { 'x-repo-commit': commit });
    if (api?.[2] === 'tree') {
      const prefix = api[4] ? `${api[4].replace(/\/$/, '')}/` : '';
      const recursive = ['true', '1', 'True'].includes(url.searchParams.get('recursive') ?? '');
      const under = Object.keys(files).filter((p) => p.startsWith(prefix)).sort();
      if (prefix && !under.length) return json(res, rec, 404, { error: 'Entry not found' }, { 'x-error-code': 'EntryNotFound' });
      const dirs = new Set<string>();
      const entries: unknown[] = [];
      for (const p of under) {
        const rest = p.slice(prefix.length).split('/');
        for (let i = 1; i < rest.length; i++) if (recursive || i === 1) dirs.add(prefix + rest.slice(0, i).join('/'));
        if (!recursive && rest.length > 1) continue;
        const data = buf(files[p]);
        entries.push(isLfs(p) ? { type: 'file', oid: gitSha1(lfsPointer(data)), size: data.length, path: p, lfs: { oid: sha256(data), size: data.length, pointerSize: lfsPointer(data).length } } : { type: 'file', oid: gitSha1(data), size: data.length, path: p });
      }
      const all = [...[...dirs].sort().map((d) => ({ type: 'directory', oid: gitSha1(Buffer.from(d)), size: 0, path: d })), ...entries];
      const from = Number(url.searchParams.get('cursor') ?? 0);
      const size = o.pageSize ?? all.length;
      const page = all.slice(from, from + size);
      const headers: Record<string, string> = {};
      if (from + size < all.length) headers.link = `<http://127.0.0.1:${hubPort()}${url.pathname}?recursive=${recursive}&cursor=${from + size}>; rel="next"`;
      return json(res, rec, 200, page, headers);
    }
    const file = resolve![3];
    const data = files[file];
    if (data === undefined) return json(res, rec, 404, { error: 'Entry not found' }, { 'x-error-code': 'EntryNotFound' });
    const b = buf(data);
    if (isLfs(file)) {
      rec.status = 302;
      res.writeHead(302, { location: `${cdnUrl}/blobs/${sha256(b)}?commit=${commit}&file=${encodeURIComponent(file)}`, 'x-repo-commit': commit, 'x-linked-etag': `"${sha256(b)}"`, 'x-linked-size': String(b.length) });
      return void res.end();
    }
    serve(req, res, rec, file, b, { 'x-repo-commit': commit, etag: `"${gitSha1(b)}"` });
  });
  const hubPort = () => hub.port;

  const closeOne = (s: { server: http.Server; sockets: Set<Socket> }) =>
    new Promise<void>((r) => {
      for (const sock of s.sockets) sock.destroy();
      s.server.close(() => r());
    });
  return { url: `http://127.0.0.1:${hub.port}`, cdnUrl, requests, options: o, close: async () => void (await Promise.all([closeOne(hub), closeOne(cdn)])) };
}
