import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { appendQuery } from '../http/request';
import { HTTP_METHODS, PathSchema } from './p04-http-request';
import { LAST_VARS_LOCAL, requestFailure, sessionRequest } from './auth/request';
import { definePrimitive, type PrimitiveContext } from './types';

const Status = z.number().int().min(100).max(599);
const STATS = ['median', 'mean', 'p90', 'p95', 'max'] as const;

export const P16Schema = z
  .object({
    max_ms: z.number().positive().default(5000),
    /** measure this endpoint (default: the chain's last response, one sample) */
    path: PathSchema.optional(),
    method: z.string().transform((m) => m.toUpperCase()).pipe(z.enum(HTTP_METHODS)).optional(),
    headers: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).optional(),
    body: JsonSchema.optional(),
    /** measured requests (default 5); `repeat` is the same key under P04's name */
    samples: z.number().int().min(1).max(200).optional(),
    repeat: z.number().int().min(1).max(200).optional(),
    /** unmeasured requests sent first (default 1) */
    warmup: z.number().int().min(0).max(20).optional(),
    statistic: z.enum(STATS).optional(),
    /** every sample must answer one of these (default: any status < 400) */
    expected_status: z.union([Status, z.array(Status).min(1)]).transform((s) => (Array.isArray(s) ? s : [s])).optional(),
    /** statistic(path) / statistic(baseline_path) must be ≤ this */
    max_ratio: z.number().positive().optional(),
    baseline_path: PathSchema.optional(),
    timeout: z.number().positive().max(600).default(30),
    /** without path: the timed (last) response's JSON body must also have these top-level keys */
    require_keys: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.samples !== undefined && v.repeat !== undefined) ctx.addIssue({ code: 'custom', path: ['repeat'], message: 'give samples or repeat, not both' });
    if (v.path !== undefined && v.require_keys) ctx.addIssue({ code: 'custom', path: ['require_keys'], message: 'require_keys checks the chain\'s last response (no path)' });
    if (v.path === undefined) {
      for (const k of ['method', 'headers', 'body', 'samples', 'repeat', 'warmup', 'statistic', 'expected_status', 'max_ratio', 'baseline_path'] as const) {
        if (v[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: `${k} needs path (without path the one sample is the chain's last response)` });
      }
    }
    if ((v.max_ratio === undefined) !== (v.baseline_path === undefined)) ctx.addIssue({ code: 'custom', path: [v.max_ratio === undefined ? 'baseline_path' : 'max_ratio'], message: 'max_ratio and baseline_path go together' });
  });

type Input = z.infer<typeof P16Schema>;

export function statistic(xs: number[], stat: (typeof STATS)[number]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (stat === 'max') return s[s.length - 1];
  if (stat === 'mean') return s.reduce((a, b) => a + b, 0) / s.length;
  if (stat === 'median') return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  const q = stat === 'p90' ? 0.9 : 0.95;
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
}

async function measure(ctx: PrimitiveContext, input: Input, path: string): Promise<{ ms: number[]; statuses: number[]; error?: string }> {
  const method = input.method ?? 'GET';
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers ?? {})) headers[k] = String(v);
  let p = path;
  let json: unknown;
  if (input.body !== undefined) {
    if ((method === 'GET' || method === 'HEAD') && input.body && typeof input.body === 'object' && !Array.isArray(input.body)) p = appendQuery(p, input.body as Record<string, Json>);
    else json = input.body;
  }
  const n = input.samples ?? input.repeat ?? 5;
  const warm = input.warmup ?? 1;
  const ms: number[] = [];
  const statuses: number[] = [];
  for (let i = 0; i < warm + n; i++) {
    try {
      const res = await sessionRequest(ctx, { method, path: p, headers, json, timeoutMs: input.timeout * 1000 });
      if (i >= warm) {
        ms.push(res.elapsedMs);
        statuses.push(res.status);
      }
    } catch (e) {
      return { ms, statuses, error: requestFailure(e, `${method} ${p} (request ${i + 1})`) };
    }
  }
  return { ms, statuses };
}

/**
 * P16: response time. With `path`, P16 takes its own sample: `warmup` unmeasured requests, then
 * `samples` measured ones (sequential, in the chain's session), and compares the `statistic`
 * (median by default) with `max_ms`; every sample must also answer with an expected status, so a
 * fast error page cannot pass. Without `path`, the one sample is the chain's last response.
 */
export const P16 = definePrimitive({
  id: 'P16',
  name: 'response_time_check',
  schema: P16Schema,
  produces: () => ({ exported: [], local: LAST_VARS_LOCAL }),
  async run(input, ctx) {
    if (input.path === undefined) {
      const last = ctx.state.last;
      if (!last || last.method === 'SQL') return { passed: false, message: 'no HTTP response in this chain to time (give path to take a sample)' };
      const problems: string[] = [];
      if (last.elapsedMs > input.max_ms) problems.push(`${last.elapsedMs} ms > ${input.max_ms} ms`);
      const body = last.body;
      const missing = (input.require_keys ?? []).filter((k) => !(body !== null && typeof body === 'object' && !Array.isArray(body) && k in body));
      if (missing.length) problems.push(`key(s) ${missing.join(', ')} missing from the body`);
      return { passed: problems.length === 0, message: `${last.method} ${last.path} took ${last.elapsedMs} ms (max ${input.max_ms} ms)${problems.length ? `; ${problems.join('; ')}` : ''}`, data: { samples_ms: [last.elapsedMs], value_ms: last.elapsedMs, max_ms: input.max_ms, ...(input.require_keys ? { require_keys: input.require_keys } : {}) } };
    }
    const stat = input.statistic ?? 'median';
    const main = await measure(ctx, input, input.path);
    if (main.error) return { passed: false, message: main.error, data: { samples_ms: main.ms } };
    const problems: string[] = [];
    const badStatus = main.statuses.filter((s) => (input.expected_status ? !input.expected_status.includes(s) : s >= 400));
    if (badStatus.length) problems.push(`${badStatus.length}/${main.statuses.length} samples answered ${[...new Set(badStatus)].join(',')}`);
    const value = Math.round(statistic(main.ms, stat) * 10) / 10;
    if (value > input.max_ms) problems.push(`${stat} ${value} ms > ${input.max_ms} ms`);
    const data: Record<string, unknown> = { path: input.path, statistic: stat, value_ms: value, max_ms: input.max_ms, samples_ms: main.ms, statuses: main.statuses };
    if (input.baseline_path) {
      const base = await measure(ctx, input, input.baseline_path);
      if (base.error) return { passed: false, message: `baseline: ${base.error}`, data };
      const b = statistic(base.ms, stat);
      // timings have millisecond resolution: a baseline faster than that counts as 1 ms, not 0
      const ratio = value / Math.max(b, 1);
      data.baseline_ms = b;
      data.ratio = Math.round(ratio * 100) / 100;
      if (ratio > input.max_ratio!) problems.push(`ratio ${data.ratio} to ${input.baseline_path} > ${input.max_ratio}`);
    }
    return {
      passed: problems.length === 0,
      message: `${input.method ?? 'GET'} ${input.path}: ${stat} of ${main.ms.length} = ${value} ms (max ${input.max_ms})${problems.length ? `; ${problems.join('; ')}` : ''}`,
      data,
    };
  },
});
