/**
 * The exec proxy: a Docker Engine API endpoint, per rollout, that lets an agent sidecar (OpenHands)
 * run commands in ITS OWN app container and do nothing else with the engine. It listens on the
 * rollout network's gateway address (like the LLM relay and the egress proxy; the firewall opens its
 * port for the agent phase only) and forwards to the worker's engine exactly these calls:
 *
 *   GET|HEAD /_ping, GET /version                (the CLI's API-version negotiation)
 *   GET  /containers/<app>/json                   (the CLI checks the container runs before exec)
 *   POST /containers/<app>/exec                   (exec create; `Privileged: true` refused)
 *   POST /exec/<id>/start, POST /exec/<id>/resize, GET /exec/<id>/json
 *                                                 (only for exec ids this proxy created)
 *
 * with an optional /v1.NN version prefix, all under a secret path prefix: the sidecar's
 * DOCKER_HOST is `tcp://<gateway>:<port>/<token>` (the docker CLI keeps a DOCKER_HOST path as the
 * base of every API path). Anything else — another container, `docker run`, images, volumes,
 * networks, copying files, an unknown exec id, a wrong or missing token — gets 403 and is counted
 * in the stats (`<runDir>/agent/exec-proxy.json`). `docker exec -i` streams through a hijacked
 * connection: after the path is checked the two sockets are piped as they are.
 *
 * A restarted activity finds the proxy's port and token in its state file and listens there again,
 * so a re-attached sidecar (whose DOCKER_HOST is fixed) keeps working.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { listenOn, readListenState } from '../listen';
import { writeJson } from '../runs/files';

export interface ExecProxyOptions {
  /** the rollout key (one proxy per rollout and process) */
  key: string;
  /** the rollout network's gateway address */
  bindHost: string;
  /** the app container: its name, and its id when known (the CLI may use either) */
  container: string;
  containerId?: string;
  /** where exec-proxy.json (port, token, stats) lives: <runDir>/agent */
  stateDir: string;
  /** the engine's socket (default: DOCKER_HOST when it is unix://, else /var/run/docker.sock) */
  engineSocket?: string;
  log?: Logger;
}

export interface ExecProxyStats {
  allowed: number;
  execs: number;
  refused: number;
  /** the first refused requests, "METHOD path (why)" with the token cut out */
  refusedSamples: string[];
}

export interface ExecProxy {
  port: number;
  /** DOCKER_HOST for the sidecar: tcp://<gateway>:<port>/<token> */
  dockerHost: string;
  stats: ExecProxyStats;
  close(): Promise<void>;
}

interface Live {
  proxy: ExecProxy;
  refs: number;
}
const live = new Map<string, Live>();

export function engineSocketPath(): string {
  const dh = process.env.DOCKER_HOST;
  if (dh?.startsWith('unix://')) return dh.slice('unix://'.length);
  return '/var/run/docker.sock';
}

type Verdict = { ok: true; kind: 'ping' | 'inspect' | 'create' | 'exec' | 'start'; upstreamPath: string } | { ok: false; why: string };

/**
 * Is this request one the sidecar may make? `path` is the raw request path (with the token prefix).
 * Exported for the unit tests: the whole policy is this function plus the exec-create body check.
 */
export function judge(method: string, rawPath: string, token: string, names: Set<string>, execIds: Set<string>): Verdict {
  const [path, query = ''] = rawPath.split('?', 2);
  const prefix = `/${token}`;
  if (!path.startsWith(`${prefix}/`)) return { ok: false, why: 'no or wrong token' };
  const rest = path.slice(prefix.length);
  const m = /^(\/v\d+\.\d+)?(\/.*)$/.exec(rest);
  if (!m) return { ok: false, why: 'malformed path' };
  const api = m[2];
  const upstreamPath = `${m[1] ?? ''}${api}${query ? `?${query}` : ''}`;
  if (api.includes('..') || api.includes('%2') || api.includes('%2F')) return { ok: false, why: 'path not allowed' };
  if ((method === 'GET' || method === 'HEAD') && api === '/_ping') return { ok: true, kind: 'ping', upstreamPath };
  if (method === 'GET' && api === '/version') return { ok: true, kind: 'ping', upstreamPath };
  const c = /^\/containers\/([^/]+)\/(json|exec)$/.exec(api);
  if (c) {
    if (!names.has(decodeURIComponent(c[1]))) return { ok: false, why: `container ${c[1]} is not this rollout's app container` };
    if (c[2] === 'json' && method === 'GET') return { ok: true, kind: 'inspect', upstreamPath };
    if (c[2] === 'exec' && method === 'POST') return { ok: true, kind: 'create', upstreamPath };
    return { ok: false, why: 'method not allowed' };
  }
  const e = /^\/exec\/([0-9a-f]{64})\/(start|resize|json)$/.exec(api);
  if (e) {
    if (!execIds.has(e[1])) return { ok: false, why: 'exec id not created through this proxy' };
    if (e[2] === 'json' ? method === 'GET' : method === 'POST') return { ok: true, kind: e[2] === 'start' ? 'start' : 'exec', upstreamPath };
    return { ok: false, why: 'method not allowed' };
  }
  return { ok: false, why: 'only exec into the app container is allowed' };
}

/** The exec-create body may not ask for privileges the container does not have. */
export function execBodyIssue(body: string): string | null {
  let j: unknown;
  try {
    j = JSON.parse(body);
  } catch {
    return 'exec create body is not JSON';
  }
  if (!j || typeof j !== 'object' || Array.isArray(j)) return 'exec create body is not an object';
  if ((j as { Privileged?: unknown }).Privileged) return 'privileged exec is not allowed';
  return null;
}

const HOP = new Set(['connection', 'keep-alive', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

/** Start (or join) the exec proxy of a rollout. Call `close()` once per `startExecProxy()`. */
export async function startExecProxy(o: ExecProxyOptions): Promise<ExecProxy> {
  const existing = live.get(o.key);
  if (existing) {
    existing.refs++;
    return existing.proxy;
  }
  const stateFile = join(o.stateDir, 'exec-proxy.json');
  const saved = readListenState(stateFile);
  const token = saved?.token ?? randomBytes(18).toString('hex');
  const socketPath = o.engineSocket ?? engineSocketPath();
  const names = new Set([o.container, `/${o.container}`, ...(o.containerId ? [o.containerId, o.containerId.slice(0, 12)] : [])]);
  const execIds = new Set<string>();
  const stats: ExecProxyStats = { allowed: 0, execs: 0, refused: 0, refusedSamples: [] };
  const refuse = (method: string, path: string, why: string) => {
    stats.refused++;
    if (stats.refusedSamples.length < 20) stats.refusedSamples.push(`${method} ${path.split(token).join('<token>')} (${why})`);
    o.log?.warn({ method, why }, 'exec proxy refused a request');
  };
  const headersOf = (req: http.IncomingMessage) => {
    const h: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) h[k] = v;
    h.host = 'docker';
    return h;
  };

  const server = http.createServer((req, res) => {
    const method = req.method ?? 'GET';
    const v = judge(method, req.url ?? '/', token, names, execIds);
    const deny = (why: string) => {
      refuse(method, req.url ?? '/', why);
      req.resume();
      res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `saasbench exec proxy: ${why}` }));
    };
    if (!v.ok) return deny(v.why);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size <= 1 << 20) chunks.push(b);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (size > 1 << 20) return deny('request body too large');
      if (v.kind === 'create') {
        const issue = execBodyIssue(body.toString('utf8'));
        if (issue) return deny(issue);
      }
      stats.allowed++;
      const up = http.request({ socketPath, method, path: v.upstreamPath, headers: { ...headersOf(req), 'content-length': String(body.length) } }, (ur) => {
        if (v.kind !== 'create') {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
          return;
        }
        // remember the exec ids this proxy created: only those may be started
        const out: Buffer[] = [];
        ur.on('data', (b: Buffer) => out.push(b));
        ur.on('end', () => {
          const text = Buffer.concat(out);
          try {
            const id = (JSON.parse(text.toString('utf8')) as { Id?: unknown }).Id;
            if (typeof id === 'string' && /^[0-9a-f]{64}$/.test(id)) {
              execIds.add(id);
              stats.execs++;
            }
          } catch {
            // an engine error: passed on as it is
          }
          const h = { ...ur.headers, 'content-length': String(text.length) };
          delete h['transfer-encoding'];
          res.writeHead(ur.statusCode ?? 502, h).end(text);
        });
      });
      up.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `saasbench exec proxy: engine unreachable: ${err.message}` }));
        else res.destroy();
      });
      up.end(body);
    });
  });

  // `docker exec` (exec start with Upgrade: tcp): check the path, then pipe the raw connection
  const piped = new Set<net.Socket>();
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const method = req.method ?? 'GET';
    const v = judge(method, req.url ?? '/', token, names, execIds);
    socket.on('error', () => undefined);
    if (!v.ok || v.kind !== 'start') {
      const why = v.ok ? 'only exec start may upgrade the connection' : v.why;
      refuse(method, req.url ?? '/', why);
      const msg = JSON.stringify({ message: `saasbench exec proxy: ${why}` });
      socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(msg)}\r\nconnection: close\r\n\r\n${msg}`);
      return;
    }
    stats.allowed++;
    const engine = net.connect(socketPath);
    engine.on('error', () => socket.destroy());
    piped.add(socket);
    socket.on('close', () => {
      piped.delete(socket);
      engine.destroy();
    });
    engine.on('close', () => socket.destroy());
    const lines = [`${method} ${v.upstreamPath} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const k = req.rawHeaders[i];
      if (k.toLowerCase() !== 'host') lines.push(`${k}: ${req.rawHeaders[i + 1]}`);
    }
    lines.push('Host: docker');
    engine.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length) engine.write(head);
    socket.pipe(engine);
    engine.pipe(socket);
  });
  server.headersTimeout = 60_000;
  server.requestTimeout = 0; // an exec streams as long as its command runs

  const port = await listenOn(server, o.bindHost, saved?.bindHost === o.bindHost ? saved.port : 0, 'exec proxy', { anyPortIfTaken: true });
  const save = () => writeJson(stateFile, { bindHost: o.bindHost, port, token, container: o.container, stats });
  save();
  const host = o.bindHost.includes(':') ? `[${o.bindHost}]` : o.bindHost;
  const entry: Live = {
    refs: 1,
    proxy: {
      port,
      dockerHost: `tcp://${host}:${port}/${token}`,
      stats,
      close: async () => {
        if (--entry.refs > 0) return;
        live.delete(o.key);
        save();
        server.closeAllConnections?.();
        for (const s of piped) s.destroy();
        await new Promise<void>((r) => server.close(() => r()));
      },
    },
  };
  live.set(o.key, entry);
  o.log?.info({ port, container: o.container }, 'exec proxy listening');
  return entry.proxy;
}
