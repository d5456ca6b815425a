/**
 * The per-rollout egress proxy (docs/security.md): an HTTP proxy on the worker host, bound on the
 * rollout network's gateway address, through which the agent's container reaches the hosts its
 * task declares (task.yaml `network.allow`: package registries, mirrors) and nothing else. The
 * container has no route out (no NAT, the firewall rejects everything but this proxy and the LLM
 * relay), so HTTP_PROXY/HTTPS_PROXY is the only way out, and the proxy decides:
 *
 *  - `CONNECT host:port` (HTTPS and any TLS) and absolute-form `GET http://host/…` requests;
 *  - allowed when host:port matches an allowlist entry: `host` (ports 80/443), `*.domain` (its
 *    subdomains), `host:port`, an IP literal; the names are resolved HERE, and a name that
 *    resolves to a loopback, private, link-local or this host's own address is refused (an
 *    allowlisted name must not become a way into the worker host or a neighbouring rollout);
 *  - every decision is appended to `<stateDir>/egress.jsonl` ({at, method, host, port, allowed,
 *    reason}) — the transcript audit reports the denied ones.
 *
 * Port and bind address are kept in `<stateDir>/egress.json` so a retried activity (worker crash,
 * re-attach) brings the proxy back where the running agent's environment points.
 */
import http from 'node:http';
import net from 'node:net';
import { lookup } from 'node:dns/promises';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { listenOn, readListenState } from '../listen';
import type { Logger } from 'pino';
import { writeJson } from '../runs/files';
import { canonicalAddress, isInternalAddress } from '../net-address';

export interface EgressProxyOptions {
  /** one proxy per rollout per worker process */
  key: string;
  bindHost: string;
  /** task.yaml network.allow */
  allow: string[];
  /** endpoints always allowed, by exact host and port (the rollout's LLM relay, if a client proxies it) */
  alwaysAllow?: { host: string; port: number }[];
  stateDir: string;
  log?: Logger;
}

export interface EgressDecision {
  at: string;
  method: string;
  host: string;
  port: number;
  allowed: boolean;
  reason: string;
}

export interface EgressProxy {
  url: string;
  port: number;
  /** the environment that makes the agent's tools use the proxy */
  env(noProxy: string[]): Record<string, string>;
  close(): Promise<void>;
}

interface Rule {
  host: string;
  wildcard: boolean;
  ports: number[];
  ipLiteral: boolean;
}

export function parseAllow(entry: string): Rule {
  const m = /^(\*\.)?(.+?)(?::(\d{1,5}))?$/.exec(entry.trim().toLowerCase());
  if (!m) throw new Error(`bad egress allow entry "${entry}"`);
  const host = m[2].replace(/^\[|\]$/g, '');
  return { host, wildcard: !!m[1], ports: m[3] ? [Number(m[3])] : [80, 443], ipLiteral: net.isIP(host) !== 0 };
}

/** The allowlist decision for a host name or IP and port (no DNS). */
export function allowedBy(rules: Rule[], hostArg: string, port: number): Rule | null {
  const host = hostArg.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  for (const r of rules) {
    if (!r.ports.includes(port)) continue;
    if (r.wildcard ? host.endsWith(`.${r.host}`) : host === r.host) return r;
  }
  return null;
}

function ownAddresses(): Set<string> {
  const out = new Set<string>();
  // canonical text, so a resolved address matches whatever notation the interface list uses
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(canonicalAddress(a.address));
  return out;
}

const live = new Map<string, { proxy: EgressProxy; refs: number }>();

/** Start (or join) the egress proxy of a rollout. Call `close()` once per start. */
export async function startEgressProxy(o: EgressProxyOptions): Promise<EgressProxy> {
  const existing = live.get(o.key);
  if (existing) {
    existing.refs++;
    return existing.proxy;
  }
  const rules = o.allow.map(parseAllow);
  const always = (o.alwaysAllow ?? []).map((a) => ({ host: a.host, port: a.port }));
  mkdirSync(o.stateDir, { recursive: true });
  const logFile = join(o.stateDir, 'egress.jsonl');
  const record = (d: Omit<EgressDecision, 'at'>) => {
    try {
      appendFileSync(logFile, `${JSON.stringify({ at: new Date().toISOString(), ...d })}\n`);
    } catch {
      // the run folder is gone (teardown raced us): nothing to record into
    }
    if (!d.allowed) o.log?.info({ host: d.host, port: d.port, reason: d.reason }, 'egress denied');
  };

  /** Decide and resolve: the address to connect to, or the reason to refuse. */
  const decide = async (host: string, port: number): Promise<{ address: string } | { denied: string }> => {
    const h = host.toLowerCase().replace(/^\[|\]$/g, '');
    if (!Number.isInteger(port) || port < 1 || port > 65535) return { denied: `bad port ${port}` };
    if (always.some((a) => a.host === h && a.port === port)) return { address: h };
    const rule = allowedBy(rules, h, port);
    if (!rule) return { denied: `${h}:${port} is not in the task's network.allow list` };
    if (rule.ipLiteral) return { address: h };
    let addresses: { address: string }[];
    try {
      addresses = await lookup(h, { all: true });
    } catch (err) {
      return { denied: `cannot resolve ${h}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
    }
    const own = ownAddresses();
    const bad = addresses.find((a) => isInternalAddress(a.address, own));
    if (bad) return { denied: `${h} resolves to ${bad.address}, an internal address (use an IP literal in network.allow to mean it)` };
    return { address: addresses[0].address };
  };

  const server = http.createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('not http');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('saasbench egress proxy: send absolute http:// URLs, or CONNECT for https\n');
      return;
    }
    const port = Number(target.port || 80);
    void decide(target.hostname, port).then((d) => {
      record({ method: req.method ?? 'GET', host: target.hostname, port, allowed: 'address' in d, reason: 'address' in d ? 'allowed' : d.denied });
      if (!('address' in d)) {
        res.writeHead(403, { 'content-type': 'text/plain', 'x-saasbench-egress': 'denied' });
        res.end(`saasbench egress proxy: denied: ${d.denied}\n`);
        return;
      }
      const headers = { ...req.headers };
      delete headers['proxy-connection'];
      delete headers['proxy-authorization'];
      const up = http.request({ host: d.address, port, method: req.method, path: `${target.pathname}${target.search}`, headers, setHost: false }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`saasbench egress proxy: upstream error: ${(err as NodeJS.ErrnoException).code ?? err.message}\n`);
      });
      res.on('close', () => up.destroy());
      req.pipe(up);
    });
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? '');
    client.on('error', () => undefined);
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n\r\nsaasbench egress proxy: CONNECT host:port\n');
      return;
    }
    const host = m[1];
    const port = Number(m[2]);
    void decide(host, port).then((d) => {
      record({ method: 'CONNECT', host, port, allowed: 'address' in d, reason: 'address' in d ? 'allowed' : d.denied });
      if (!('address' in d)) {
        client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nx-saasbench-egress: denied\r\nconnection: close\r\n\r\nsaasbench egress proxy: denied: ${d.denied}\n`);
        return;
      }
      const up = net.connect({ host: d.address, port }, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) up.write(head);
        up.pipe(client);
        client.pipe(up);
      });
      up.setTimeout(600_000, () => up.destroy());
      up.on('error', (err) => {
        if (client.writable) client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\nsaasbench egress proxy: ${(err as NodeJS.ErrnoException).code ?? err.message}\n`);
      });
      client.on('close', () => up.destroy());
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  const stateFile = join(o.stateDir, 'egress.json');
  const saved = readListenState(stateFile);
  const port = await listenOn(server, o.bindHost, saved?.bindHost === o.bindHost ? saved.port : 0, 'egress proxy', { anyPortIfTaken: true });
  writeJson(stateFile, { bindHost: o.bindHost, port, allow: o.allow, startedAt: new Date().toISOString() });
  const url = `http://${o.bindHost.includes(':') ? `[${o.bindHost}]` : o.bindHost}:${port}`;
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const entry = {
    refs: 1,
    proxy: {
      url,
      port,
      env: (noProxy: string[]) => {
        const np = [...new Set(['localhost', '127.0.0.1', '::1', ...noProxy])].join(',');
        return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: np, no_proxy: np };
      },
      close: async () => {
        if (--entry.refs > 0) return;
        live.delete(o.key);
        for (const s of sockets) s.destroy();
        await new Promise<void>((r) => server.close(() => r()));
      },
    } satisfies EgressProxy,
  };
  live.set(o.key, entry);
  o.log?.info({ proxy: url, allow: o.allow }, 'egress proxy listening');
  return entry.proxy;
}

/** The decisions recorded for a rollout (empty when it had no proxy). */
export function readEgressLog(stateDir: string): EgressDecision[] {
  const f = join(stateDir, 'egress.jsonl');
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as EgressDecision];
      } catch {
        return [];
      }
    });
}
