import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { show, toJson } from './compare';
import { appendQuery } from '../http/request';
import { FileSchema, FormSchema, rawBody } from './http-body';
import { queryJsonPath } from './jsonpath';
import { RoleError } from './auth/provider';
import { requestFailure, sessionRequest, type SessionResponse } from './auth/request';
import { ensureRoleSession } from './auth/session';
import { definePrimitive, type PrimitiveContext } from './types';

/** HTTP methods, WebDAV/CalDAV ones included (published file-sync tasks use them). */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'REPORT', 'MKCALENDAR'] as const;
const NO_BODY = new Set(['GET', 'HEAD']);
export const VarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'variable names are letters, digits and _');
export const RoleName = z.string().regex(/^[A-Za-z0-9_.:-]+$/, 'role names use letters, digits, _ . : -');
const Status = z.number().int().min(100).max(599);
/** a path starting with / (after templating), or a leading placeholder that becomes one */
export const PathSchema = z.string().refine((p) => p.startsWith('/') || p.startsWith('{{'), 'path must start with / (or with a {{placeholder}} that does)');
const AbsoluteUrl = z.string().refine((u) => /^https?:\/\/[^/]+/.test(u) || u.startsWith('{{'), 'an absolute http(s) URL');
const Capture = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

export const P04Schema = z
  .object({
    method: z.string().transform((m) => m.toUpperCase()).pipe(z.enum(HTTP_METHODS)).default('GET'),
    path: z.union([PathSchema, AbsoluteUrl]).optional(),
    /** an absolute URL on the task's stack (a host port of its compose file) instead of a path of the app */
    url: AbsoluteUrl.optional(),
    headers: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).default({}),
    body: JsonSchema.optional(),
    query: z.record(z.string().min(1), JsonSchema).optional(),
    form: FormSchema.optional(),
    raw_body: z.string().optional(),
    raw_body_b64: z.string().regex(/^[A-Za-z0-9+/\s]*={0,2}\s*$/, 'base64 text').optional(),
    files: z.array(FileSchema).min(1).optional(),
    /** send `form` as multipart/form-data (implied by files) */
    multipart: z.boolean().default(false),
    timeout: z.number().positive().max(600).default(15),
    repeat: z.number().int().min(1).max(1000).default(1),
    rapid_fire: z.boolean().default(false),
    /** send this many copies at the same moment */
    concurrent: z.number().int().min(1).max(50).default(1),
    /** variable ← JSONPath into the body, or a list of paths tried in order */
    capture: z.record(VarName, Capture).optional(),
    /** keep the whole exchange as {status, headers, body, created_id} */
    save_as: VarName.optional(),
    follow_redirects: z.boolean().default(false),
    /** true: the answer must be a 3xx; false: it must not be */
    expect_redirect: z.boolean().optional(),
    /** the answer's media type must be this one (parameters ignored) */
    expect_content_type: z.string().min(1).optional(),
    /** repeat the request until the answer meets a condition */
    poll: z
      .object({
        until_status: z.array(Status).min(1).optional(),
        /** a JSONPath whose value must be present and not null */
        until_path: z.string().min(1).optional(),
        interval_ms: z.number().int().min(10).max(60_000).default(1000),
        attempts: z.number().int().min(1).max(1000).optional(),
        max_seconds: z.number().positive().max(600).optional(),
      })
      .strict()
      .refine((p) => p.until_status || p.until_path, { message: 'poll needs until_status or until_path' })
      .refine((p) => !(p.attempts && p.max_seconds), { message: 'give attempts or max_seconds, not both' })
      .optional(),
    /** act as this role for this request ('anonymous': no credentials) */
    role: RoleName.optional(),
    /** session headers (of the role) not to send */
    omit_headers: z.array(z.string().min(1)).default([]),
    /** send the role's login CSRF token in this header */
    attach_csrf: z.string().min(1).optional(),
    /** also send the role's login token as this cookie */
    token_cookie: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a cookie name').optional(),
    /** false: the published id capture does not read this response */
    id_capture: z.boolean().default(true),
    /** keep the body as bytes (recorded as base64) */
    binary_response: z.boolean().default(false),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.path !== undefined && v.url !== undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'give path or url, not both' });
    const bodies = (['body', 'form', 'raw_body', 'raw_body_b64'] as const).filter((k) => v[k] !== undefined);
    if (bodies.length > 1) ctx.addIssue({ code: 'custom', path: [bodies[1]], message: `give one body: ${bodies.join(', ')} are all given` });
    if (v.files && (v.body !== undefined || v.raw_body !== undefined || v.raw_body_b64 !== undefined)) ctx.addIssue({ code: 'custom', path: ['files'], message: 'files go with form fields only (multipart)' });
    if (NO_BODY.has(v.method) && v.body !== undefined && (v.body === null || typeof v.body !== 'object' || Array.isArray(v.body))) {
      ctx.addIssue({ code: 'custom', path: ['body'], message: `a ${v.method} body is sent as the query string and must be an object` });
    }
    if (v.multipart && v.form === undefined && !v.files) ctx.addIssue({ code: 'custom', path: ['multipart'], message: 'multipart needs form fields or files' });
    if (v.concurrent > 1 && (v.repeat > 1 || v.poll)) ctx.addIssue({ code: 'custom', path: ['concurrent'], message: 'concurrent does not combine with repeat or poll' });
    if (v.poll && v.repeat > 1) ctx.addIssue({ code: 'custom', path: ['poll'], message: 'poll does not combine with repeat' });
    for (const [k, h] of Object.entries(v.headers)) {
      if (/[\r\n]/.test(String(h))) ctx.addIssue({ code: 'custom', path: ['headers', k], message: 'header value contains a line break' });
      if (v.token_cookie && k.toLowerCase() === 'cookie') ctx.addIssue({ code: 'custom', path: ['token_cookie'], message: 'token_cookie with an explicit Cookie header' });
      if (v.omit_headers.some((o) => o.toLowerCase() === k.toLowerCase())) ctx.addIssue({ code: 'custom', path: ['omit_headers'], message: `"${k}" is both sent and omitted` });
    }
  });

export type P04Input = z.infer<typeof P04Schema>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mediaType = (ct: string | undefined) => (ct ?? '').split(';')[0].trim().toLowerCase();
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The id of what a response created: body.id, else the id of its `data` / `result` object. */
export function createdId(body: unknown): Json | null {
  if (!isObj(body)) return null;
  for (const o of [body, body.data, body.result]) if (isObj(o) && (typeof o.id === 'string' || typeof o.id === 'number')) return o.id;
  return null;
}

/** The first capture path that matches, as JSON; undefined when none does. */
export function captureValue(body: unknown, spec: string | string[]): Json | undefined {
  for (const p of Array.isArray(spec) ? spec : [spec]) {
    const hits = queryJsonPath(body, p);
    if (hits.length && hits[0] !== undefined) return toJson(hits[0]);
  }
  return undefined;
}

function pollMet(res: SessionResponse, poll: NonNullable<P04Input['poll']>): boolean {
  if (poll.until_status && !poll.until_status.includes(res.status)) return false;
  if (poll.until_path) {
    const hit = queryJsonPath(res.body, poll.until_path)[0];
    if (hit === undefined || hit === null) return false;
  }
  return true;
}

/**
 * P04: send the request (repeat times, 50 ms apart unless rapid_fire; or `concurrent` copies at
 * once; or until `poll` is met) in the chain's session and record the answer for P06/P07/P15.
 * Passes whenever an answer arrived, whatever its status — asserting the status is P15's job —
 * unless an expectation of this step (expect_redirect, expect_content_type, poll, capture) fails.
 */
export const P04 = definePrimitive({
  id: 'P04',
  name: 'http_request',
  schema: P04Schema,
  async run(input, ctx) {
    const target0 = input.url ?? input.path ?? '/';
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(input.headers)) headers[k] = String(v);
    const bodyAsQuery = NO_BODY.has(input.method) && input.body !== undefined;
    const query = { ...(bodyAsQuery ? (input.body as Record<string, Json>) : {}), ...(input.query ?? {}) };
    const target = Object.keys(query).length ? appendQuery(target0, query) : target0;
    const raw = await rawBody(input);
    const label = `${input.method} ${target}`;
    if (input.role) {
      try {
        await ensureRoleSession(ctx, input.role);
      } catch (e) {
        if (e instanceof RoleError) return { passed: false, message: `${label}: cannot act as role ${input.role}: ${e.message}` };
        throw e;
      }
    }
    const send = () =>
      sessionRequest(ctx, {
        method: input.method,
        path: target,
        headers,
        json: bodyAsQuery || raw ? undefined : input.body,
        raw,
        timeoutMs: input.timeout * 1000,
        role: input.role,
        omitHeaders: input.omit_headers,
        csrfHeader: input.attach_csrf,
        followRedirects: input.follow_redirects,
        binary: input.binary_response,
        idCapture: input.id_capture,
        tokenCookie: input.token_cookie,
      });
    const attempts: { status: number; elapsedMs: number }[] = [];
    let res: SessionResponse | undefined;
    let pollProblem: string | undefined;
    try {
      if (input.concurrent > 1) {
        const all = await Promise.all(Array.from({ length: input.concurrent }, () => send()));
        for (const r of all) attempts.push({ status: r.status, elapsedMs: r.elapsedMs });
        res = all[all.length - 1];
      } else if (input.poll) {
        const p = input.poll;
        const deadline = p.max_seconds !== undefined ? Date.now() + p.max_seconds * 1000 : undefined;
        const max = p.attempts ?? (deadline ? Number.MAX_SAFE_INTEGER : 10);
        for (let i = 0; i < max; i++) {
          if (i > 0) await sleep(p.interval_ms);
          res = await send();
          attempts.push({ status: res.status, elapsedMs: res.elapsedMs });
          if (pollMet(res, p)) break;
          if (deadline && Date.now() + p.interval_ms > deadline) break;
        }
        if (res && !pollMet(res, p)) pollProblem = `poll: ${[p.until_status && `status ${p.until_status.join('/')}`, p.until_path && `a value at ${p.until_path}`].filter(Boolean).join(' and ')} not reached after ${attempts.length} request(s)`;
      } else {
        for (let i = 0; i < input.repeat; i++) {
          if (i > 0 && !input.rapid_fire) await sleep(50);
          res = await send();
          attempts.push({ status: res.status, elapsedMs: res.elapsedMs });
        }
      }
    } catch (e) {
      const which = attempts.length || input.repeat > 1 ? ` (request ${attempts.length + 1})` : '';
      return { passed: false, message: requestFailure(e, `${label}${which}`), data: { method: input.method, path: target, attempts } };
    }
    return finish(ctx, input, res!, attempts, pollProblem);
  },
});

function finish(ctx: PrimitiveContext, input: P04Input, r: SessionResponse, attempts: { status: number; elapsedMs: number }[], pollProblem?: string) {
  // `{{previous.x}}` in the next step of this chain reads this response body (chain-local, not exported)
  ctx.state.vars.previous = toJson(r.body);
  const data: Record<string, unknown> = {
    method: input.method,
    path: r.sentPath,
    status: r.status,
    elapsed_ms: r.elapsedMs,
    content_type: r.headers['content-type'] ?? null,
    body_preview: input.binary_response ? `(${r.bytes.length} bytes)` : r.rawText.slice(0, 2000),
    truncated: r.truncated,
  };
  if (r.redirects.length) data.redirects = r.redirects;
  if (r.compatCaptured) data.compat_captured = r.compatCaptured;
  if (attempts.length > 1) {
    data.statuses = attempts.map((a) => a.status);
    data.elapsed_ms_all = attempts.map((a) => a.elapsedMs);
  }
  const many = attempts.length > 1 ? ` (${input.concurrent > 1 ? 'concurrent' : 'last of'} ${attempts.length}: ${attempts.map((a) => a.status).join(',')})` : '';
  const head = `${input.method} ${r.sentPath} → ${r.status} in ${r.elapsedMs} ms${many}`;
  const problems: string[] = [];
  if (pollProblem) problems.push(pollProblem);
  const redirect = r.status >= 300 && r.status < 400;
  if (input.expect_redirect === true && !redirect) problems.push(`expected a redirect (3xx), got ${r.status}`);
  if (input.expect_redirect === false && redirect) problems.push(`expected no redirect, got ${r.status} to ${r.headers.location ?? '(no Location)'}`);
  if (input.expect_content_type && mediaType(r.headers['content-type']) !== mediaType(input.expect_content_type)) {
    problems.push(`Content-Type is ${r.headers['content-type'] ?? '(none)'}, expected ${input.expect_content_type}`);
  }
  const captured: Record<string, Json> = {};
  const missing: string[] = [];
  for (const [name, spec] of Object.entries(input.capture ?? {})) {
    const v = captureValue(r.body, spec);
    if (v === undefined) missing.push(`${name} ← ${Array.isArray(spec) ? spec.join(' | ') : spec}`);
    else captured[name] = v;
  }
  if (input.capture) data.captured = captured;
  if (missing.length) problems.push(`capture failed, nothing at ${missing.join(', ')} in body ${show(r.body, 300)}`);
  if (problems.length) return { passed: false, message: `${head}; ${problems.join('; ')}`, data };
  for (const [name, value] of Object.entries(captured)) ctx.setVar(name, value);
  if (input.save_as) ctx.setVar(input.save_as, { status: r.status, headers: r.headers, body: toJson(r.body), created_id: createdId(r.body) });
  const saved = [...Object.keys(captured), ...(input.save_as ? [input.save_as] : [])];
  return { passed: true, message: `${head}${saved.length ? `; captured ${saved.join(', ')}` : ''}`, data };
}
