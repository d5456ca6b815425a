import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { queryJsonPath } from './jsonpath';
import type { PrimitiveContext } from './types';

/** What a delivery must carry to count, and how many must arrive. */
export const ReceiverSchema = z
  .object({
    /** the path deliveries arrive at; absent: any path counts (`{webhook_url}` then ends in /webhook) */
    path: z.string().startsWith('/').optional(),
    /** listen on this port (a port the app was told about earlier, e.g. `{{webhook_port}}`); default: a free one */
    port: z
      .preprocess((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v), z.union([z.number().int().min(1).max(65535), z.string().regex(/^\{\{[^}]+\}\}$/, 'a port number or a {{placeholder}}')]))
      .optional(),
    /** the body contains this text (each of these texts) */
    body_contains: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    /** the JSON body has a value at each of these JSONPaths */
    body_json_paths: z.array(z.string().min(1)).min(1).optional(),
    /** the delivery carries this header (e.g. a signature) */
    require_header: z.string().min(1).optional(),
    /** header name → regex its value must match */
    headers_match: z.record(z.string().min(1), z.string()).optional(),
    /** an HMAC signature header that must verify against the raw body */
    signature: z
      .object({
        header: z.string().min(1),
        /** a regex over the header value with named groups `sig` and, if the preimage uses it, `ts` */
        pattern: z.string().min(1),
        algorithm: z.enum(['sha1', 'sha256', 'sha512', 'sha3-256', 'sha3-512']),
        secret: z.string().min(1),
        /** what is signed: `{raw_payload}` and `{ts}` are replaced (default `{raw_payload}`) */
        preimage: z.string().default('{raw_payload}'),
      })
      .strict()
      .optional(),
    min_deliveries: z.number().int().min(0).max(100).default(1),
    /** and at most this many (e.g. a retry limit) */
    max_deliveries: z.number().int().min(0).max(100).optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    for (const [k, re] of Object.entries(r.headers_match ?? {})) {
      try {
        new RegExp(re);
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: ['headers_match', k], message: `invalid regex: ${(e as Error).message}` });
      }
    }
    if (r.signature) {
      try {
        const re = new RegExp(r.signature.pattern);
        if (!/\(\?<sig>/.test(re.source)) ctx.addIssue({ code: 'custom', path: ['signature', 'pattern'], message: 'the pattern needs a named group sig' });
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: ['signature', 'pattern'], message: `invalid regex: ${(e as Error).message}` });
      }
    }
  });
export type Receiver = z.infer<typeof ReceiverSchema>;

export interface Delivery {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Why a delivery does not count ('' when it does). */
export function deliveryProblem(d: Delivery, r: Receiver): string {
  if (r.path && d.path.split('?')[0] !== r.path) return `path ${d.path}`;
  for (const t of typeof r.body_contains === 'string' ? [r.body_contains] : r.body_contains ?? []) if (!d.body.includes(t)) return `body lacks ${JSON.stringify(t)}`;
  if (r.body_json_paths) {
    let json: unknown;
    try {
      json = JSON.parse(d.body);
    } catch {
      return 'body is not JSON';
    }
    for (const p of r.body_json_paths) if (queryJsonPath(json, p).length === 0) return `nothing at ${p}`;
  }
  const header = (name: string) => d.headers[name.toLowerCase()];
  if (r.require_header && header(r.require_header) === undefined) return `no ${r.require_header} header`;
  for (const [name, re] of Object.entries(r.headers_match ?? {})) {
    const v = header(name);
    if (v === undefined || !new RegExp(re).test(v)) return `${name}: ${v ?? '(absent)'} does not match /${re}/`;
  }
  if (r.signature) {
    const s = r.signature;
    const m = new RegExp(s.pattern).exec(header(s.header) ?? '');
    if (!m?.groups?.sig) return `${s.header}: ${header(s.header) ?? '(absent)'} does not match /${s.pattern}/`;
    const preimage = s.preimage.split('{ts}').join(m.groups.ts ?? '').split('{raw_payload}').join(d.body);
    const want = createHmac(s.algorithm, s.secret).update(preimage, 'utf8').digest('hex');
    if (want.toLowerCase() !== m.groups.sig.toLowerCase()) return `${s.header}: the ${s.algorithm} HMAC does not verify`;
  }
  return '';
}

/** An HTTP receiver for the duration of a step; `url` is how the app container reaches it. */
export async function startReceiver(ctx: PrimitiveContext, r: Receiver): Promise<{ base: string; url: string; deliveries: Delivery[]; close(): Promise<void> }> {
  // a placeholder port is resolved before the step runs; one still here had no value
  if (typeof r.port === 'string') throw new Error(`receiver port ${r.port} has no value`);
  const where = ctx.env.webhookReceiver ? await ctx.env.webhookReceiver() : { bindHost: '127.0.0.1', urlHost: '127.0.0.1' };
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      if (size < 1 << 20) chunks.push(c);
      size += c.length;
    });
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      deliveries.push({ method: req.method ?? '', path: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"received":true}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(new Error(`cannot listen on ${where.bindHost}:${r.port ?? 0}: ${e.message}`)));
    server.listen(typeof r.port === 'number' ? r.port : 0, where.bindHost, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closePort: (() => Promise<void>) | undefined;
  try {
    closePort = await where.open?.(port);
  } catch (err) {
    server.close();
    throw err;
  }
  const base = `http://${where.urlHost}:${port}`;
  return {
    base,
    url: `${base}${r.path ?? '/webhook'}`,
    deliveries,
    close: async () => {
      await closePort?.().catch(() => undefined);
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}

/** Deliveries a stack service recorded (`{events: [{path, headers, body}]}` or a bare list), e.g. a mock receiver's history. */
export function historyDeliveries(body: unknown): Delivery[] {
  const events = Array.isArray(body) ? body : body && typeof body === 'object' && Array.isArray((body as { events?: unknown }).events) ? (body as { events: unknown[] }).events : [];
  return events.map((e) => {
    const o = (e && typeof e === 'object' ? e : {}) as Record<string, unknown>;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((o.headers as Record<string, unknown>) ?? {})) headers[k.toLowerCase()] = String(v);
    return { method: String(o.method ?? 'POST'), path: String(o.path ?? ''), headers, body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body ?? '') };
  });
}
