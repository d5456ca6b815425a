import WebSocket from 'ws';
import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { sessionRequest } from './auth/request';
import { withSession } from './auth/session';
import { show } from './compare';
import { HTTP_METHODS } from './p04-http-request';
import { definePrimitive } from './types';
import { isLoopbackHost } from '../net-address';

/** What a received message must look like; an empty matcher matches any message. */
export const WsMatcherSchema = z
  .object({
    /** the message text contains this */
    contains: z.string().min(1).optional(),
    /** the message text contains one of these */
    any_of: z.array(z.string().min(1)).min(1).optional(),
    /** the message is JSON and contains this object (every key, recursively; arrays and scalars equal) */
    json: z.record(z.string(), JsonSchema).optional(),
    /** the message is JSON and has these dot paths (e.g. data.post) */
    has_keys: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();
type WsMatcher = z.infer<typeof WsMatcherSchema>;

export const WsStepSchema = z.union([
  z.object({ send: z.string() }).strict(),
  z.object({ send_json: JsonSchema }).strict(),
  /**
   * wait for a message matching `expect` among those not yet consumed (earlier ones are consumed
   * with it); `first`: only the next unconsumed message counts
   */
  z.object({ expect: WsMatcherSchema, timeout_ms: z.number().int().min(100).max(120_000).default(5000), first: z.boolean().default(false) }).strict(),
  /** an HTTP request in the chain's session while the socket is open (a trigger for an event) */
  z.object({ http: z.object({ method: z.enum(HTTP_METHODS).default('POST'), path: z.string().startsWith('/'), body: JsonSchema.optional() }).strict() }).strict(),
  z.object({ wait_ms: z.number().int().min(0).max(60_000) }).strict(),
]);
type WsStep = z.infer<typeof WsStepSchema>;

export const WebsocketCheckSchema = z
  .object({
    /** a path, or a ws(s)://, http(s):// URL on a loopback host (mapped onto the app) */
    url: z.string().min(1),
    subprotocols: z.array(z.string().min(1)).default([]),
    /** chain: the upgrade request carries the chain role's headers and cookies; none: nothing */
    session: z.enum(['chain', 'none']).default('chain'),
    /** send Origin: <the app's origin> (servers that check the origin, like a browser page would) */
    origin: z.boolean().default(true),
    connect_timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
    steps: z.array(WsStepSchema).max(50).default([]),
    /** the server must refuse the connection (the upgrade answers an HTTP error, or the socket is closed at once) */
    expect_refused: z.boolean().default(false),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.expect_refused && v.steps.length) ctx.addIssue({ code: 'custom', path: ['steps'], message: 'a refused connection has no steps' });
  });

/** The socket URL on the app: ws:// for http apps, wss:// for https ones. */
export function wsUrl(raw: string, baseUrl: string): string {
  const base = new URL(baseUrl);
  const scheme = base.protocol === 'https:' ? 'wss:' : 'ws:';
  if (raw.startsWith('/')) return `${scheme}//${base.host}${base.pathname.replace(/\/$/, '')}${raw}`;
  const u = new URL(raw);
  if (!isLoopbackHost(u.hostname) && u.hostname !== base.hostname) throw new Error(`url ${raw} is not the app under test (only paths and loopback URLs are used)`);
  return `${scheme}//${base.host}${base.pathname.replace(/\/$/, '')}${u.pathname}${u.search}`;
}

function subset(want: Json, got: Json): boolean {
  if (want === null || typeof want !== 'object') return want === got;
  if (Array.isArray(want)) return Array.isArray(got) && want.length === got.length && want.every((w, i) => subset(w, got[i]));
  if (got === null || typeof got !== 'object' || Array.isArray(got)) return false;
  return Object.entries(want).every(([k, v]) => k in got && subset(v, (got as Record<string, Json>)[k]));
}

function hasPath(v: Json, path: string): boolean {
  let cur: Json | undefined = v;
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !(k in cur)) return false;
    cur = (cur as Record<string, Json>)[k];
  }
  return true;
}

export function matches(m: WsMatcher, text: string): boolean {
  if (m.contains && !text.includes(m.contains)) return false;
  if (m.any_of && !m.any_of.some((s) => text.includes(s))) return false;
  if (m.json || m.has_keys) {
    let v: Json;
    try {
      v = JSON.parse(text) as Json;
    } catch {
      return false;
    }
    if (m.json && !subset(m.json, v)) return false;
    if (m.has_keys && !m.has_keys.every((p) => hasPath(v, p))) return false;
  }
  return true;
}

const describe = (m: WsMatcher) => [m.contains && `containing ${show(m.contains)}`, m.any_of && `containing one of ${show(m.any_of)}`, m.json && `with ${show(m.json)}`, m.has_keys && `with keys ${m.has_keys.join(', ')}`].filter(Boolean).join(' and ') || 'of any kind';

/**
 * WEBSOCKET_CHECK: open a WebSocket to the app (the chain's session on the upgrade request) and
 * run the steps in order: send frames, wait for matching messages, trigger HTTP requests. Passes
 * when the connection opened and every expectation was met in time.
 */
export const WEBSOCKET_CHECK = definePrimitive({
  id: 'WEBSOCKET_CHECK',
  name: 'websocket_check',
  schema: WebsocketCheckSchema,
  async run(input, ctx) {
    let url: string;
    try {
      url = wsUrl(input.url, ctx.env.baseUrl);
    } catch (e) {
      return { passed: false, message: (e as Error).message };
    }
    const path = new URL(url).pathname;
    const headers: Record<string, string> = input.session === 'chain' ? withSession(ctx.state, path, {}) : {};
    if (input.origin) headers.Origin = new URL(ctx.env.baseUrl).origin;
    const received: string[] = [];
    let cursor = 0;
    let closed: string | undefined;
    const waiters = new Set<() => void>();
    const wake = () => waiters.forEach((w) => w());
    const ws = new WebSocket(url, input.subprotocols, { headers, handshakeTimeout: input.connect_timeout_ms, perMessageDeflate: false });
    ws.on('message', (d, isBinary) => {
      received.push(isBinary ? `<${(d as Buffer).length} binary bytes>` : d.toString());
      wake();
    });
    ws.on('close', (code) => {
      closed ??= `closed by the server (code ${code})`;
      wake();
    });
    const opened = await new Promise<string | undefined>((resolve) => {
      ws.once('open', () => resolve(undefined));
      ws.once('unexpected-response', (_req, res) => {
        resolve(`upgrade refused: HTTP ${res.statusCode}`);
        res.resume();
      });
      ws.once('error', (e) => resolve(`connection failed: ${e.message}`));
    });
    const log: string[] = [];
    const base = { url: `${path}`, subprotocol: ws.protocol || null };
    if (input.expect_refused) {
      // open, then closed by the server within a second, counts as refused too
      const shut = opened ?? (await new Promise<string | undefined>((r) => {
        const t = setTimeout(() => r(undefined), 1000);
        ws.once('close', (code) => (clearTimeout(t), r(`closed at once (code ${code})`)));
      }));
      ws.terminate();
      return { passed: shut !== undefined, message: `WebSocket ${path}: ${shut ? `refused as expected: ${shut}` : 'the connection was accepted (expected a refusal)'}`, data: base };
    }
    if (opened) {
      ws.terminate();
      return { passed: false, message: `WebSocket ${path}: ${opened}`, data: base };
    }
    const waitFor = (m: WsMatcher, timeoutMs: number, first: boolean) =>
      new Promise<boolean>((resolve) => {
        const deadline = setTimeout(() => done(false), timeoutMs);
        const look = () => {
          while (cursor < received.length) {
            const msg = received[cursor++];
            if (matches(m, msg)) return done(true);
            if (first) return done(false);
          }
          if (closed) done(false);
        };
        const done = (ok: boolean) => {
          clearTimeout(deadline);
          waiters.delete(look);
          resolve(ok);
        };
        waiters.add(look);
        look();
      });
    try {
      for (const [i, s] of input.steps.entries()) {
        const failed = await runWsStep(s);
        if (failed) {
          return { passed: false, message: `WebSocket ${path}: step ${i + 1}: ${failed}${log.length ? ` (after: ${log.join('; ')})` : ''}`, data: { ...base, received: received.slice(0, 20).map((m) => m.slice(0, 300)) } };
        }
      }
      return { passed: true, message: `WebSocket ${path} open${ws.protocol ? ` (${ws.protocol})` : ''}${log.length ? `; ${log.join('; ')}` : ''}`, data: { ...base, received: received.slice(0, 20).map((m) => m.slice(0, 300)) } };
    } finally {
      ws.terminate();
    }

    async function runWsStep(s: WsStep): Promise<string | undefined> {
      if ('send' in s || 'send_json' in s) {
        if (closed) return closed;
        ws.send('send' in s ? s.send : JSON.stringify(s.send_json));
        log.push('sent');
        return undefined;
      }
      if ('expect' in s) {
        const ok = await waitFor(s.expect, s.timeout_ms, s.first);
        if (!ok) return `no ${s.first ? 'next ' : ''}message ${describe(s.expect)} within ${s.timeout_ms} ms${closed ? ` (${closed})` : ''}; received ${received.length}: ${received.slice(-3).map((m) => show(m.slice(0, 120))).join(', ') || 'none'}`;
        log.push(`got ${describe(s.expect)}`);
        return undefined;
      }
      if ('http' in s) {
        try {
          const r = await sessionRequest(ctx, { method: s.http.method, path: s.http.path, json: s.http.body, timeoutMs: 15_000, record: false });
          log.push(`${s.http.method} ${s.http.path} → ${r.status}`);
          return r.status >= 400 ? `${s.http.method} ${s.http.path} answered ${r.status}` : undefined;
        } catch (e) {
          return `${s.http.method} ${s.http.path} failed: ${(e as Error).message}`;
        }
      }
      await new Promise((r) => setTimeout(r, s.wait_ms));
      return undefined;
    }
  },
});
