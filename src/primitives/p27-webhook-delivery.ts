import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { asNumeric, compareNum, parseNumericCondition, show } from './compare';
import { HTTP_METHODS, PathSchema } from './p04-http-request';
import { LAST_VARS_LOCAL, requestFailure, sessionRequest } from './auth/request';
import { deliveryProblem, historyDeliveries, ReceiverSchema, startReceiver, type Delivery } from './p27-receiver';
import { runSql } from './sql';
import { definePrimitive } from './types';

const Status = z.number().int().min(100).max(599);
const Headers = z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()]));
const Method = z.string().transform((m) => m.toUpperCase()).pipe(z.enum(HTTP_METHODS));

/** In register/trigger values: `{webhook_url}` = the receiver's URL, `{webhook_base}` = its scheme://host:port. */
export const WEBHOOK_URL_TOKEN = '{webhook_url}';
export const WEBHOOK_BASE_TOKEN = '{webhook_base}';

export const P27Schema = z
  .object({
    /** the request that makes the app send a webhook */
    trigger_path: PathSchema,
    trigger_method: Method.default('POST'),
    trigger_body: JsonSchema.optional(),
    trigger_headers: Headers.default({}),
    /** statuses the trigger may answer (default: any < 400) */
    expected_trigger_status: z.array(Status).min(1).optional(),
    /** a request sent first to register the receiver's URL with the app (use {webhook_url} / {webhook_base}) */
    register: z
      .object({ method: Method.default('POST'), path: PathSchema, body: JsonSchema.optional(), headers: Headers.default({}), expected_status: z.array(Status).min(1).optional() })
      .strict()
      .optional(),
    /** a command run in a stack service after the trigger (e.g. a queue worker that sends the webhook) */
    run_after_trigger: z.object({ command: z.string().min(1), service: z.string().min(1).optional(), timeout_seconds: z.number().positive().max(600).default(120) }).strict().optional(),
    /** listen for the delivery: P27 runs an HTTP receiver for the duration of the step */
    receiver: ReceiverSchema.optional(),
    /** or read the deliveries a receiver service of the stack recorded (GET this URL: {events: [...]}) */
    receiver_history: z.object({ url: z.string().min(1), criteria: ReceiverSchema.default({ min_deliveries: 1 }) }).strict().optional(),
    /** the app records deliveries: this query must meet verify_condition (rows, or one numeric cell) */
    verify_sql: z.string().trim().min(1).optional(),
    verify_condition: z.string().refine((s) => parseNumericCondition(s) !== undefined, 'a count condition like ">=1"').default('>=1'),
    /** the longest wait for the delivery, polled every 250 ms */
    wait_seconds: z.number().min(0).max(300).default(5),
    timeout: z.number().positive().max(600).default(15),
  })
  .strict()
  .superRefine((v, ctx) => {
    const ways = [v.receiver, v.receiver_history, v.verify_sql].filter((x) => x !== undefined).length;
    if (ways === 0) ctx.addIssue({ code: 'custom', path: ['receiver'], message: 'give receiver (listen for the delivery), receiver_history (a receiver service\'s record) and/or verify_sql (the app records it)' });
    if (v.receiver && v.receiver_history) ctx.addIssue({ code: 'custom', path: ['receiver_history'], message: 'give receiver or receiver_history, not both' });
    const text = JSON.stringify([v.register ?? null, v.trigger_body ?? null, v.trigger_path]);
    if ((text.includes(WEBHOOK_URL_TOKEN) || text.includes(WEBHOOK_BASE_TOKEN)) && !v.receiver) ctx.addIssue({ code: 'custom', path: ['receiver'], message: `${WEBHOOK_URL_TOKEN} / ${WEBHOOK_BASE_TOKEN} need a receiver` });
    if (!v.verify_sql && v.verify_condition !== '>=1') ctx.addIssue({ code: 'custom', path: ['verify_condition'], message: 'verify_condition needs verify_sql' });
  });

type Input = z.infer<typeof P27Schema>;

const sub = <T>(v: T, url: string, base: string): T => JSON.parse(JSON.stringify(v ?? null).split(WEBHOOK_URL_TOKEN).join(url).split(WEBHOOK_BASE_TOKEN).join(base)) as T;
const strHeaders = (h: Record<string, string | number | boolean>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)]));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function countOf(rows: Record<string, unknown>[], columns: string[]): number {
  if (rows.length === 1 && columns.length === 1) {
    const n = asNumeric(rows[0][columns[0]]);
    if (n !== undefined) return n;
  }
  return rows.length;
}

/**
 * P27: make the app deliver a webhook and check it arrived. With `receiver`, P27 listens on an
 * HTTP port of its own for the step (its URL is `{webhook_url}` in `register`/`trigger_*`) and
 * waits for deliveries that meet the receiver's criteria (path, body texts and JSON paths, headers,
 * an HMAC signature); with `receiver_history`, it reads what a receiver service of the stack
 * recorded since the step began; with `verify_sql`, it polls the app's own record of the delivery.
 * Passes when the (optional) registration and the trigger answered as expected and every given
 * check held within wait_seconds.
 */
export const P27 = definePrimitive({
  id: 'P27',
  name: 'webhook_delivery',
  schema: P27Schema,
  produces: () => ({ exported: [], local: LAST_VARS_LOCAL }),
  async run(input: Input, ctx) {
    const receiver = input.receiver ? await startReceiver(ctx, input.receiver) : undefined;
    try {
      const url = receiver?.url ?? '';
      const base = receiver?.base ?? '';
      const steps: string[] = [];
      const send = async (what: string, method: string, path: string, body: Json | undefined, headers: Record<string, string>, expected?: number[]) => {
        try {
          const res = await sessionRequest(ctx, { method, path, headers, json: body === undefined || body === null || method === 'GET' ? undefined : body, timeoutMs: input.timeout * 1000 });
          const ok = expected ? expected.includes(res.status) : res.status < 400;
          steps.push(`${what} ${method} ${path} → ${res.status}`);
          return { problem: ok ? undefined : `${what} ${method} ${path} → ${res.status}, expected ${expected ? expected.join('/') : '< 400'}; body ${show(res.body, 200)}`, body: res.body };
        } catch (e) {
          return { problem: requestFailure(e, `${what} ${method} ${path}`), body: undefined };
        }
      };
      // a receiver service's record is append-only: what the step caused is what came after the first read
      const history = async (): Promise<Delivery[] | string> => {
        const url = input.receiver_history!.url;
        try {
          const res = await sessionRequest(ctx, { method: 'GET', path: url, timeoutMs: input.timeout * 1000, record: false });
          return res.status === 200 ? historyDeliveries(res.body) : `history GET ${url} → ${res.status}, expected 200`;
        } catch (e) {
          return requestFailure(e, `history GET ${url}`);
        }
      };
      const before = input.receiver_history ? await history() : [];
      if (typeof before === 'string') return { passed: false, message: before };
      if (input.register) {
        const r = input.register;
        const res = await send('register', r.method, sub(r.path, url, base), sub(r.body, url, base) ?? undefined, strHeaders(r.headers), r.expected_status);
        if (res.problem) return { passed: false, message: res.problem, data: { receiver_url: url || null } };
      }
      const trig = await send('trigger', input.trigger_method, sub(input.trigger_path, url, base), input.trigger_body === undefined ? undefined : sub(input.trigger_body, url, base), strHeaders(input.trigger_headers), input.expected_trigger_status);
      if (trig.problem) return { passed: false, message: trig.problem, data: { receiver_url: url || null } };
      if (input.run_after_trigger) {
        const c = input.run_after_trigger;
        const service = c.service ?? ctx.env.appService;
        const r = await ctx.env.exec(service, c.command, { timeoutMs: c.timeout_seconds * 1000 });
        // the delivery check decides; the command's exit is evidence (a worker may exit non-zero with nothing queued)
        steps.push(`${service}$ ${c.command.slice(0, 80)} → exit ${r.exitCode}${r.timedOut ? ' (timed out)' : ''}`);
      }

      const criteria = input.receiver ?? input.receiver_history?.criteria;
      const deadline = Date.now() + input.wait_seconds * 1000;
      let got: Delivery[] = receiver?.deliveries ?? [];
      const matching = () => got.filter((d) => criteria && deliveryProblem(d, criteria) === '');
      const cond = parseNumericCondition(input.verify_condition)!;
      let sqlState: { ok: boolean; detail: string } = { ok: !input.verify_sql, detail: '' };
      for (;;) {
        if (input.receiver_history) {
          const all = await history();
          if (typeof all === 'string') return { passed: false, message: `${steps.join('; ')}; ${all}` };
          got = all.slice(before.length);
        }
        const recvOk = !criteria || matching().length >= criteria.min_deliveries;
        if (input.verify_sql && !sqlState.ok) {
          const ran = await runSql(ctx.env, input.verify_sql);
          if (!ran.ok) return { passed: false, message: `${steps.join('; ')}; verify_sql: ${ran.error}` };
          const n = countOf(ran.result.rows, ran.result.columns);
          sqlState = { ok: compareNum(n, cond.op, cond.n), detail: `verify_sql count ${n} (need ${input.verify_condition})` };
        }
        // with a maximum, the whole wait is watched (retries beyond it must not arrive)
        if ((recvOk && sqlState.ok && criteria?.max_deliveries === undefined) || Date.now() >= deadline) break;
        await sleep(250);
      }
      const problems: string[] = [];
      const data: Record<string, unknown> = { steps };
      if (criteria) {
        const m = matching();
        data.deliveries = got.map((d) => ({ method: d.method, path: d.path, body: d.body.slice(0, 300), counts: deliveryProblem(d, criteria) || 'yes' }));
        if (criteria.max_deliveries !== undefined && m.length > criteria.max_deliveries) {
          problems.push(`${m.length} matching deliveries, at most ${criteria.max_deliveries} expected`);
        } else if (m.length < criteria.min_deliveries) {
          const why = got.length ? `; not counted: ${[...new Set(got.map((d) => deliveryProblem(d, criteria)).filter(Boolean))].slice(0, 3).join(' | ')}` : '';
          problems.push(`${m.length} matching deliver${m.length === 1 ? 'y' : 'ies'} ${receiver ? `at ${receiver.url}` : `in ${input.receiver_history!.url}`} within ${input.wait_seconds}s (need ${criteria.min_deliveries}; ${got.length} in all${why})`);
        } else steps.push(`${m.length} matching delivery(ies)`);
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
