import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { JsonSchema, type Json } from '../json';
import { asNumeric, compareNum, parseNumericCondition, show } from './compare';
import { HttpTransportError } from './http';
import { HTTP_METHODS } from './p04-http-request';
import { LAST_VARS_LOCAL, sessionRequest } from './auth/request';
import { runSql } from './sql';
import { definePrimitive, type PrimitiveContext } from './types';

const Status = z.number().int().min(100).max(599);
const Headers = z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()]));
const Method = z.string().transform((m) => m.toUpperCase()).pipe(z.enum(HTTP_METHODS));

/** `{webhook_url}` (single braces) in register/trigger strings is replaced by the receiver's URL. */
export const WEBHOOK_URL_TOKEN = '{webhook_url}';

export const P27Schema = z
  .object({
    /** the request that makes the app send a webhook */
    trigger_path: z.string().startsWith('/'),
    trigger_method: Method.default('POST'),
    trigger_body: JsonSchema.optional(),
    trigger_headers: Headers.default({}),
    /** statuses the trigger may answer (default: any < 400) */
    expected_trigger_status: z.array(Status).min(1).optional(),
    /** a request sent first to register the receiver's URL with the app (use {webhook_url}) */
    register: z
      .object({ method: Method.default('POST'), path: z.string().startsWith('/'), body: JsonSchema.optional(), headers: Headers.default({}), expected_status: z.array(Status).min(1).optional() })
      .strict()
      .optional(),
    /** listen for the delivery: P27 runs an HTTP receiver for the duration of the step */
    receiver: z
      .object({
        path: z.string().startsWith('/').default('/webhook'),
        /** a delivery counts only if its body contains this text */
        body_contains: z.string().min(1).optional(),
        /** and carries this header (e.g. a signature) */
        require_header: z.string().min(1).optional(),
        min_deliveries: z.number().int().min(1).max(100).default(1),
      })
      .strict()
      .optional(),
    /** the app records deliveries: this query must meet verify_condition (rows, or one numeric cell) */
    verify_sql: z.string().trim().min(1).optional(),
    verify_condition: z.string().refine((s) => parseNumericCondition(s) !== undefined, 'a count condition like ">=1"').default('>=1'),
    /** the longest wait for the delivery, polled every 250 ms */
    wait_seconds: z.number().min(0).max(300).default(5),
    timeout: z.number().positive().max(600).default(15),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (!v.receiver && !v.verify_sql) ctx.addIssue({ code: 'custom', path: ['receiver'], message: 'give receiver (listen for the delivery) and/or verify_sql (the app records it)' });
    const usesUrl = JSON.stringify([v.register ?? null, v.trigger_body ?? null, v.trigger_path]).includes(WEBHOOK_URL_TOKEN);
    if (usesUrl && !v.receiver) ctx.addIssue({ code: 'custom', path: ['receiver'], message: `${WEBHOOK_URL_TOKEN} needs a receiver` });
    if (!v.verify_sql && v.verify_condition !== '>=1') ctx.addIssue({ code: 'custom', path: ['verify_condition'], message: 'verify_condition needs verify_sql' });
  });

type Input = z.infer<typeof P27Schema>;

interface Delivery {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const sub = <T>(v: T, url: string): T => JSON.parse(JSON.stringify(v ?? null).split(WEBHOOK_URL_TOKEN).join(url)) as T;
const strHeaders = (h: Record<string, string | number | boolean>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)]));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startReceiver(ctx: PrimitiveContext, path: string): Promise<{ url: string; deliveries: Delivery[]; close(): Promise<void> }> {
  const where = ctx.env.webhookReceiver ? await ctx.env.webhookReceiver() : { bindHost: '127.0.0.1', urlHost: '127.0.0.1' };
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.length < 1024 && chunks.push(c));
    req.on('end', () => {
      deliveries.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"received":true}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, where.bindHost, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closePort: (() => Promise<void>) | undefined;
  try {
    closePort = await where.open?.(port);
  } catch (err) {
    server.close();
    throw err;
  }
  return {
    url: `http://${where.urlHost}:${port}${path}`,
    deliveries,
    close: async () => {
      await closePort?.().catch(() => undefined);
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function countOf(rows: Record<string, unknown>[], columns: string[]): number {
  if (rows.length === 1 && columns.length === 1) {
    const n = asNumeric(rows[0][columns[0]]);
    if (n !== undefined) return n;
  }
  return rows.length;
}

/**
 * P27: make the app deliver a webhook and check it arrived. With `receiver`, P27 listens on an
 * HTTP port of its own for the step (the URL is `{webhook_url}` in `register`/`trigger_*`) and
 * waits for matching deliveries; with `verify_sql`, it polls the app's own record of the delivery.
 * Passes when the (optional) registration and the trigger answered as expected and every given
 * check held within wait_seconds.
 */
export const P27 = definePrimitive({
  id: 'P27',
  name: 'webhook_delivery',
  schema: P27Schema,
  produces: () => ({ exported: [], local: LAST_VARS_LOCAL }),
  async run(input: Input, ctx) {
    const receiver = input.receiver ? await startReceiver(ctx, input.receiver.path) : undefined;
    try {
      const url = receiver?.url ?? '';
      const steps: string[] = [];
      const send = async (what: string, method: string, path: string, body: Json | undefined, headers: Record<string, string>, expected?: number[]) => {
        try {
          const res = await sessionRequest(ctx, { method, path, headers, json: body === undefined || method === 'GET' ? undefined : body, timeoutMs: input.timeout * 1000 });
          const ok = expected ? expected.includes(res.status) : res.status < 400;
          steps.push(`${what} ${method} ${path} → ${res.status}`);
          return ok ? undefined : `${what} ${method} ${path} → ${res.status}, expected ${expected ? expected.join('/') : '< 400'}; body ${show(res.body, 200)}`;
        } catch (e) {
          if (e instanceof HttpTransportError) return `${what} ${method} ${path}: no response: ${e.message}`;
          throw e;
        }
      };
      if (input.register) {
        const r = input.register;
        const bad = await send('register', r.method, sub(r.path, url), sub(r.body, url) ?? undefined, strHeaders(r.headers), r.expected_status);
        if (bad) return { passed: false, message: bad, data: { receiver_url: url || null } };
      }
      const bad = await send('trigger', input.trigger_method, sub(input.trigger_path, url), input.trigger_body === undefined ? undefined : sub(input.trigger_body, url), strHeaders(input.trigger_headers), input.expected_trigger_status);
      if (bad) return { passed: false, message: bad, data: { receiver_url: url || null } };

      const deadline = Date.now() + input.wait_seconds * 1000;
      const matching = () =>
        (receiver?.deliveries ?? []).filter(
          (d) =>
            d.path.split('?')[0] === input.receiver!.path &&
            (!input.receiver!.body_contains || d.body.includes(input.receiver!.body_contains)) &&
            (!input.receiver!.require_header || d.headers[input.receiver!.require_header.toLowerCase()] !== undefined),
        );
      const cond = parseNumericCondition(input.verify_condition)!;
      let sqlState: { ok: boolean; detail: string } = { ok: !input.verify_sql, detail: '' };
      for (;;) {
        const recvOk = !receiver || matching().length >= input.receiver!.min_deliveries;
        if (input.verify_sql && !sqlState.ok) {
          const ran = await runSql(ctx.env, input.verify_sql);
          if (!ran.ok) return { passed: false, message: `${steps.join('; ')}; verify_sql: ${ran.error}` };
          const n = countOf(ran.result.rows, ran.result.columns);
          sqlState = { ok: compareNum(n, cond.op, cond.n), detail: `verify_sql count ${n} (need ${input.verify_condition})` };
        }
        if ((recvOk && sqlState.ok) || Date.now() >= deadline) break;
        await sleep(250);
      }
      const problems: string[] = [];
      const data: Record<string, unknown> = { steps };
      if (receiver) {
        const m = matching();
        data.deliveries = receiver.deliveries.map((d) => ({ method: d.method, path: d.path, body: d.body.slice(0, 300) }));
        if (m.length < input.receiver!.min_deliveries) {
          problems.push(`${m.length} matching deliver${m.length === 1 ? 'y' : 'ies'} at ${receiver.url} within ${input.wait_seconds}s (need ${input.receiver!.min_deliveries}; ${receiver.deliveries.length} request(s) in all)`);
        } else steps.push(`${m.length} delivery(ies) received`);
      }
      if (input.verify_sql) {
        if (!sqlState.ok) problems.push(`${sqlState.detail} after ${input.wait_seconds}s`);
        else steps.push(sqlState.detail);
      }
      return { passed: problems.length === 0, message: `${steps.join('; ')}${problems.length ? `; ${problems.join('; ')}` : ''}`, data };
    } finally {
      await receiver?.close();
    }
  },
});
