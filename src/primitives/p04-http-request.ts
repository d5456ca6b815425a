import { z } from 'zod';
import { JsonSchema, type Json } from '../json';
import { show, toJson } from './compare';
import { hasHeader, HttpTransportError, sendHttp, type HttpResponse } from './http';
import { queryJsonPath } from './jsonpath';
import { definePrimitive } from './types';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
const NO_BODY = new Set(['GET', 'HEAD']);
export const VarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'variable names are letters, digits and _');

export const P04Schema = z
  .object({
    method: z.string().transform((m) => m.toUpperCase()).pipe(z.enum(HTTP_METHODS)).default('GET'),
    path: z.string().startsWith('/', 'path must start with /').default('/'),
    headers: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).default({}),
    body: JsonSchema.optional(),
    query: z.record(z.string().min(1), JsonSchema).optional(),
    timeout: z.number().positive().max(600).default(15),
    repeat: z.number().int().min(1).max(1000).default(1),
    rapid_fire: z.boolean().default(false),
    capture: z.record(VarName, z.string().min(1)).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (NO_BODY.has(v.method) && v.body !== undefined && (v.body === null || typeof v.body !== 'object' || Array.isArray(v.body))) {
      ctx.addIssue({ code: 'custom', path: ['body'], message: `a ${v.method} body is sent as the query string and must be an object` });
    }
    for (const [k, h] of Object.entries(v.headers)) {
      if (/[\r\n]/.test(String(h))) ctx.addIssue({ code: 'custom', path: ['headers', k], message: 'header value contains a line break' });
    }
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * P04: send the request (repeat times; 50 ms apart unless rapid_fire) and record the last response
 * for P06/P07/P15. Passes whenever a response arrived, whatever its status — asserting the status
 * is P15's job. Fails on a transport error or timeout, and when a `capture` path matches nothing.
 */
export const P04 = definePrimitive({
  id: 'P04',
  name: 'http_request',
  schema: P04Schema,
  async run(input, ctx) {
    const { env } = ctx;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(input.headers)) headers[k] = String(v);
    if (!hasHeader(headers, 'accept')) headers.Accept = 'application/json';
    if (!hasHeader(headers, 'user-agent')) headers['User-Agent'] = 'saasbench-evaluator';
    const bodyAsQuery = NO_BODY.has(input.method) && input.body !== undefined;
    const query = { ...(bodyAsQuery ? (input.body as Record<string, Json>) : {}), ...(input.query ?? {}) };
    const attempts: { status: number; elapsedMs: number }[] = [];
    let res: HttpResponse | undefined;
    for (let i = 0; i < input.repeat; i++) {
      if (i > 0 && !input.rapid_fire) await sleep(50);
      try {
        res = await sendHttp({
          baseUrl: env.baseUrl,
          method: input.method,
          path: input.path,
          headers,
          query,
          jsonBody: bodyAsQuery ? undefined : input.body,
          timeoutMs: input.timeout * 1000,
        });
      } catch (err) {
        if (!(err instanceof HttpTransportError)) throw err;
        const which = input.repeat > 1 ? ` (request ${i + 1}/${input.repeat})` : '';
        return {
          passed: false,
          message: `${input.method} ${input.path}: no response${which}: ${err.message}`,
          data: { method: input.method, path: input.path, error: err.message, timed_out: err.timedOut, elapsed_ms: err.elapsedMs, attempts },
        };
      }
      attempts.push({ status: res.status, elapsedMs: res.elapsedMs });
    }
    const r = res as HttpResponse;
    ctx.state.last = { method: input.method, path: r.sentPath, status: r.status, headers: r.headers, body: r.body, elapsedMs: r.elapsedMs };
    // `{{previous.x}}` in the next step of this chain reads this response body (chain-local, not exported)
    ctx.state.vars.previous = toJson(r.body);
    const data: Record<string, unknown> = {
      method: input.method,
      path: r.sentPath,
      status: r.status,
      elapsed_ms: r.elapsedMs,
      content_type: r.headers['content-type'] ?? null,
      body_preview: r.rawText.slice(0, 2000),
      truncated: r.truncated,
    };
    if (input.repeat > 1) {
      data.statuses = attempts.map((a) => a.status);
      data.elapsed_ms_all = attempts.map((a) => a.elapsedMs);
    }
    const head = `${input.method} ${r.sentPath} → ${r.status} in ${r.elapsedMs} ms${input.repeat > 1 ? ` (last of ${input.repeat}: ${attempts.map((a) => a.status).join(',')})` : ''}`;
    if (input.capture) {
      const captured: Record<string, Json> = {};
      const missing: string[] = [];
      for (const [name, path] of Object.entries(input.capture)) {
        const hits = queryJsonPath(r.body, path);
        if (hits.length === 0 || hits[0] === undefined) missing.push(`${name} ← ${path}`);
        else captured[name] = toJson(hits[0]);
      }
      data.captured = captured;
      if (missing.length) {
        return { passed: false, message: `${head}; capture failed, nothing at ${missing.join(', ')} in body ${show(r.body, 300)}`, data };
      }
      for (const [name, value] of Object.entries(captured)) ctx.setVar(name, value);
      return { passed: true, message: `${head}; captured ${Object.keys(captured).join(', ')}`, data };
    }
    return { passed: true, message: head, data };
  },
});
