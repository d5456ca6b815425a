/**
 * The per-rollout LLM relay: a small HTTP reverse proxy on the worker host that the agent inside
 * the container calls instead of the provider. It
 *  - listens on the rollout network's gateway IP (reachable from the containers on that bridge;
 *    not published anywhere else), or 127.0.0.1 for host-side agents (OpenHands);
 *  - accepts only the rollout's relay token (x-api-key or Bearer) — a per-rollout credential that
 *    is worthless outside this relay — and replaces it with the real API key, which therefore
 *    never enters the container, its environment or the agent's transcript;
 *  - forwards to the configured upstream base URL (base + the request path), streaming the
 *    response (SSE) through unbuffered, and aborts the upstream call when the agent disconnects;
 *  - is the LLM gateway: a request whose protocol (from its path) differs from the upstream's is
 *    translated both ways (llm-relay-translate.ts, src/gateway), with one GatewayMemory per rollout.
 * It never logs headers or bodies. Port and token are kept in <runDir>/agent/relay.json so a
 * retried activity (worker crash, re-attach) brings the relay back where the running agent expects it.
 */
import http from 'node:http';
import https from 'node:https';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listenOn, readListenState } from '../listen';
import type { Logger } from 'pino';
import { registerSecret } from '../log';
import { writeJson } from '../runs/files';
import type { Upstream } from './models';
import type { GovernorWaits } from '../model/governor';
import { GatewayMemory } from '../gateway';
import { logGatewayRequest } from './gateway-log';
import { addUsage, agentProtocolOf, answerSideEndpoint, forwardTranslated, UsageMeter, withSettings, type GatewayState, type UsageTotals } from './llm-relay-translate';
import { newSettingsStats, type SettingsModel, type SettingsStats } from './gateway-settings';
import type { Price } from './metering';

export interface RelayOptions {
  /** the rollout key: one relay per rollout per worker process */
  key: string;
  bindHost: string;
  upstream: Upstream;
  /** where relay.json (port + token) is kept across activity attempts */
  stateDir: string;
  /** JSON fields merged into POST bodies (registry relayBodyOverrides) when no `settings` are given */
  bodyOverrides?: Record<string, unknown>;
  /** the registry entry of the rollout's model: its settings are applied to every model request (needs upstream.protocol) */
  settings?: SettingsModel;
  /** the model's dated price (registry): each answer's cost is noted on its gateway-log line */
  price?: Price;
  /** where the stats are written after every metered answer (so a crashed worker's count survives) */
  statsFile?: string;
  /** the same agent run resumed by another worker process: continue the counts found in statsFile */
  resumeStats?: boolean;
  /** the model's snapshot id: the model of every translated request (and of a local GET /v1/models) */
  model?: string;
  log?: Logger;
  /** the rate governor's gate (src/governor/gate.ts): holds model requests until admitted; absent = no limits, no Temporal */
  gate?: RelayGate;
}

/** What the relay needs of the rate governor: its wait stats and a way to hold a request. */
export interface RelayGate {
  stats: GovernorWaits;
  pass(res: http.ServerResponse, body: Buffer, usage: UsageTotals, go: () => void): void;
}

export interface RelayStats {
  requests: number;
  upstreamErrors: number;
  rejected: number;
  statusCounts: Record<string, number>;
  /** requests translated between protocols (the others passed through) */
  translated: number;
  /** usage of the model answers (translated or passed through), summed over the rollout (for metering) */
  usage: UsageTotals;
  /** successful model answers whose usage could not be read (metering is then a lower bound) */
  unmeteredAnswers: number;
  /** what the gateway applied of the registry's settings (gateway-settings.ts); absent without settings */
  settings?: SettingsStats;
  /** rate governor waits of this rollout (only when the provider has limits) */
  governor?: GovernorWaits;
}

export interface Relay {
  /** http://<bindHost>:<port> — the base URL the agent's client gets */
  url: string;
  port: number;
  token: string;
  stats: RelayStats;
  close(): Promise<void>;
}

const HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length', 'x-api-key', 'authorization', 'accept-encoding']);

interface Live {
  relay: Relay;
  refs: number;
  server: http.Server;
}
const live = new Map<string, Live>();

/** Start (or join) the relay of a rollout. Call `close()` once per `startRelay()`. */
export async function startRelay(o: RelayOptions): Promise<Relay> {
  registerSecret(o.upstream.key);
  const existing = live.get(o.key);
  if (existing) {
    existing.refs++;
    return existing.relay;
  }
  const stateFile = join(o.stateDir, 'relay.json');
  const saved = readListenState(stateFile);
  const token = saved?.token ?? `sk-saasbench-relay-${randomBytes(18).toString('hex')}`;
  const stats: RelayStats = { requests: 0, upstreamErrors: 0, rejected: 0, statusCounts: {}, translated: 0, usage: { requests: 0, input: 0, cachedInput: 0, output: 0, reasoning: 0 }, unmeteredAnswers: 0, ...(o.gate ? { governor: o.gate.stats } : {}) };
  if (o.settings && o.upstream.protocol) stats.settings = newSettingsStats();
  if (o.resumeStats && o.statsFile) resumeCounts(stats, o.statsFile);
  const protocol = o.upstream.protocol;
  const gateway: GatewayState | null = protocol
    ? {
        upstream: { ...o.upstream, protocol },
        memory: new GatewayMemory(),
        usage: stats.usage,
        model: o.model,
        bodyOverrides: o.bodyOverrides,
        settings: o.settings && stats.settings ? { model: o.settings, stats: stats.settings } : undefined,
        onStatus: (code) => (stats.statusCounts[code] = (stats.statusCounts[code] ?? 0) + 1),
        onUpstreamError: () => stats.upstreamErrors++,
        onUnmetered: () => stats.unmeteredAnswers++,
        price: o.price,
        onMetered: () => {
          if (o.statsFile) writeJson(o.statsFile, stats);
        },
      }
    : null;
  const server = http.createServer((req, res) => handle(req, res, o, token, stats, gateway));
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 0; // streams last as long as the model talks; the supervisor watches idleness
  server.headersTimeout = 60_000;
  const port = await listenOn(server, o.bindHost, saved?.bindHost === o.bindHost ? saved.port : 0, 'LLM relay');
  writeJson(stateFile, { bindHost: o.bindHost, port, token, upstreamBaseUrl: o.upstream.baseUrl, startedAt: new Date().toISOString() });
  const url = `http://${o.bindHost.includes(':') ? `[${o.bindHost}]` : o.bindHost}:${port}`;
  const entry: Live = {
    server,
    refs: 1,
    relay: {
      url,
      port,
      token,
      stats,
      close: async () => {
        if (--entry.refs > 0) return;
        live.delete(o.key);
        server.closeAllConnections?.();
        await new Promise<void>((r) => server.close(() => r()));
      },
    },
  };
  live.set(o.key, entry);
  o.log?.info({ relay: url, upstream: safeOrigin(o.upstream.baseUrl) }, 'LLM relay listening');
  return entry.relay;
}

/** Counts of an earlier process's relay for the same agent run (best effort: an unreadable file starts from zero). */
function resumeCounts(stats: RelayStats, file: string): void {
  try {
    const prev = JSON.parse(readFileSync(file, 'utf8')) as Partial<RelayStats>;
    for (const k of ['requests', 'input', 'cachedInput', 'output', 'reasoning'] as const) if (typeof prev.usage?.[k] === 'number') stats.usage[k] = prev.usage[k];
    if (typeof prev.unmeteredAnswers === 'number') stats.unmeteredAnswers = prev.unmeteredAnswers;
    if (stats.settings && prev.settings) Object.assign(stats.settings, prev.settings);
  } catch {
    // none yet, or unreadable
  }
}

const safeOrigin = (u: string) => {
  try {
    return new URL(u).origin;
  } catch {
    return '(invalid url)';
  }
};

function presented(req: http.IncomingMessage): string | undefined {
  const k = req.headers['x-api-key'];
  if (typeof k === 'string' && k) return k;
  const a = req.headers.authorization;
  if (typeof a === 'string') return a.replace(/^Bearer\s+/i, '');
  return undefined;
}

function sameSecret(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function handle(req: http.IncomingMessage, res: http.ServerResponse, o: RelayOptions, token: string, stats: RelayStats, gateway: GatewayState | null): void {
  stats.requests++;
  // HEAD probes (Claude Code 2.1.126 sends HEAD / at start) carry no credential: answer locally
  if (req.method === 'HEAD' && !presented(req)) {
    res.writeHead(200).end();
    return;
  }
  if (!sameSecret(presented(req), token)) {
    stats.rejected++;
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'saasbench relay: unknown relay token' } }));
    return;
  }
  // every model request gets a line in agent/gateway-log.jsonl (numbers only) for the rollout page
  const modelCall = agentProtocolOf(req.method, req.url ?? '/');
  if (modelCall) logGatewayRequest(o.stateDir, modelCall, res, stats.usage);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('error', () => res.destroy());
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (gateway && answerSideEndpoint(req, res, body, gateway)) return;
    // a model request waits for the rate governor's lease first (only when the provider has limits)
    if (o.gate && gateway && agentProtocolOf(req.method, req.url ?? '/')) o.gate.pass(res, body, stats.usage, () => route(req, res, body, o, stats, gateway));
    else route(req, res, body, o, stats, gateway);
  });
}

function route(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, o: RelayOptions, stats: RelayStats, gateway: GatewayState | null): void {
  if (gateway) {
    const agent = agentProtocolOf(req.method, req.url ?? '/');
    if (agent && agent !== gateway.upstream.protocol) {
      stats.translated++;
      return forwardTranslated(req, res, body, agent, gateway);
    }
  }
  // same protocol: passed through untouched, its usage read on the side (metering)
  const agent = gateway ? agentProtocolOf(req.method, req.url ?? '/') : undefined;
  forward(req, res, body, o, stats, agent && gateway ? gateway : null);
}

function forward(req: http.IncomingMessage, res: http.ServerResponse, rawBody: Buffer, o: RelayOptions, stats: RelayStats, meterFor: GatewayState | null): void {
  const base = new URL(o.upstream.baseUrl);
  const target = new URL(base.href.replace(/\/+$/, '') + (req.url ?? '/'));
  let body = rawBody;
  const settingsFor = meterFor?.settings ? meterFor : null;
  if ((settingsFor || o.bodyOverrides) && req.method === 'POST' && body.length) {
    try {
      const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      // a model request of the upstream's own protocol: the registry's settings (gateway-settings.ts)
      body = Buffer.from(JSON.stringify(settingsFor ? withSettings(settingsFor, parsed) : { ...parsed, ...o.bodyOverrides }));
    } catch {
      // not JSON: forward untouched
    }
  }
  const headers: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k.toLowerCase()) && v !== undefined) headers[k] = v;
  if (o.upstream.auth === 'x-api-key') headers['x-api-key'] = o.upstream.key;
  else headers.authorization = `Bearer ${o.upstream.key}`;
  if (body.length || req.method === 'POST') headers['content-length'] = String(body.length);
  headers['accept-encoding'] = 'identity';
  const mod = target.protocol === 'https:' ? https : http;
  const up = mod.request(target, { method: req.method, headers }, (upRes) => {
    const code = upRes.statusCode ?? 502;
    stats.statusCounts[code] = (stats.statusCounts[code] ?? 0) + 1;
    const out: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(upRes.headers)) if (!HOP.has(k.toLowerCase()) && v !== undefined) out[k] = v;
    if (upRes.headers['content-length'] !== undefined && upRes.headers['transfer-encoding'] === undefined) out['content-length'] = upRes.headers['content-length'];
    res.writeHead(code, out);
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    const meter = meterFor && code >= 200 && code < 300 ? new UsageMeter(meterFor.upstream.protocol, /text\/event-stream/i.test(String(upRes.headers['content-type'] ?? ''))) : null;
    upRes.on('data', (c: Buffer) => {
      res.write(c);
      meter?.push(c);
    });
    upRes.on('end', () => {
      res.end();
      if (meter && meterFor) addUsage(meterFor, meter.end(), res);
    });
    upRes.on('error', () => res.destroy());
  });
  up.on('error', (err) => {
    stats.upstreamErrors++;
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: `saasbench relay: upstream unreachable (${(err as NodeJS.ErrnoException).code ?? err.message})` } }));
    } else res.destroy();
  });
  // the agent went away (killed, timed out): stop talking to the upstream too
  res.on('close', () => {
    if (!res.writableFinished) up.destroy();
  });
  up.end(body);
}
