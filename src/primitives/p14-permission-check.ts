import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { show } from './compare';
import { appendQuery } from '../http/request';
import { HTTP_METHODS, PathSchema } from './p04-http-request';
import { RoleError } from './auth/provider';
import { LAST_VARS_LOCAL, requestFailure, sessionRequest } from './auth/request';
import { currentRole, ensureRoleSession } from './auth/session';
import { definePrimitive } from './types';

const Status = z.number().int().min(100).max(599);
const ACTION = /^\s*([A-Za-z]+)\s+((?:\/|\{\{)\S*)\s*$/;

export const DEFAULT_DENIED = [401, 403, 404, 422];
export const STRICT_DENIED = [401, 403];

export const P14Schema = z
  .object({
    /** "METHOD /path", e.g. "DELETE /t/{{topic_id}}.json" */
    action: z
      .string()
      .refine((a) => ACTION.test(a) && (HTTP_METHODS as readonly string[]).includes(ACTION.exec(a)![1].toUpperCase()), 'action is "METHOD /path" with an HTTP method')
      .optional(),
    method: z.string().transform((m) => m.toUpperCase()).pipe(z.enum(HTTP_METHODS)).optional(),
    path: PathSchema.optional(),
    /** act as this role for this request only (default: the chain's current role); 'anonymous' = no credentials */
    role: z.string().regex(/^[A-Za-z0-9_.:-]+$/).optional(),
    /** log in through the role's declared login with this account (fresh session for this request) */
    login_as: z.object({ username: z.string().min(1), password: z.string() }).strict().optional(),
    /** allowed / denied; `either`: allowed or denied, not an error; `not_denied`: anything but a denial or a 5xx */
    expected_result: z.enum(['allowed', 'denied', 'either', 'not_denied']),
    /** the status must be one of these (with expected_status): this set decides instead of the classification */
    acceptable_statuses: z.array(Status).min(1).optional(),
    /** the statuses that mean denied (replaces the default set) */
    denied_codes: z.array(Status).min(1).optional(),
    follow_redirects: z.boolean().default(false),
    /** send nothing: judge the chain's last response, which must be the answer to this action */
    from_last_response: z.boolean().default(false),
    /** send the role's login CSRF token in this header */
    attach_csrf: z.string().min(1).optional(),
    /** additionally, the status must be one of these */
    expected_status: z.union([Status, z.array(Status).min(1)]).transform((s) => (Array.isArray(s) ? s : [s])).optional(),
    body: JsonSchema.optional(),
    /** query-string parameters */
    query: z.record(z.string().min(1), JsonSchema).optional(),
    headers: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).default({}),
    /** denied means 401/403 only (default also 404 and 422) */
    strict_denied_codes_only: z.boolean().default(false),
    denied_codes_extend: z.array(Status).default([]),
    allowed_codes_extend: z.array(Status).default([]),
    timeout: z.number().positive().max(600).default(15),
  })
  .strict()
  .superRefine((v, ctx) => {
    const viaAction = v.action !== undefined;
    const viaParts = v.method !== undefined || v.path !== undefined;
    if (viaAction === viaParts && !(v.from_last_response && !viaParts)) ctx.addIssue({ code: 'custom', path: ['action'], message: 'give action ("METHOD /path") or method + path' });
    if (viaParts && (v.method === undefined || v.path === undefined)) ctx.addIssue({ code: 'custom', path: [v.method === undefined ? 'method' : 'path'], message: 'method and path go together' });
    const both = v.denied_codes_extend.filter((c) => v.allowed_codes_extend.includes(c));
    if (both.length) ctx.addIssue({ code: 'custom', path: ['allowed_codes_extend'], message: `codes both allowed and denied: ${both.join(', ')}` });
    if (v.denied_codes && (v.strict_denied_codes_only || v.denied_codes_extend.length)) ctx.addIssue({ code: 'custom', path: ['denied_codes'], message: 'denied_codes replaces the default set: no strict_denied_codes_only or denied_codes_extend with it' });
    if (v.from_last_response && (v.role || v.login_as || v.body !== undefined || v.attach_csrf)) ctx.addIssue({ code: 'custom', path: ['from_last_response'], message: 'from_last_response sends no request: no role, login_as, body or attach_csrf' });
    if (v.login_as && !v.role) ctx.addIssue({ code: 'custom', path: ['login_as'], message: 'login_as needs the role whose login declaration it uses' });
    // with acceptable_statuses the explicit set decides; without, expected_status must fit the expected result
    if (v.acceptable_statuses) return;
    for (const [i, s] of (v.expected_status ?? []).entries()) {
      if (v.expected_result === 'denied' && s < 400 && !v.denied_codes_extend.includes(s)) ctx.addIssue({ code: 'custom', path: ['expected_status', i], message: `status ${s} cannot mean denied` });
      if (v.expected_result === 'allowed' && s >= 400 && !v.allowed_codes_extend.includes(s)) ctx.addIssue({ code: 'custom', path: ['expected_status', i], message: `status ${s} cannot mean allowed` });
    }
  });

export function classify(status: number, input: { strict_denied_codes_only: boolean; denied_codes_extend: number[]; allowed_codes_extend: number[]; denied_codes?: number[] }): 'allowed' | 'denied' | 'neither' {
  const denied = new Set([...(input.denied_codes ?? (input.strict_denied_codes_only ? STRICT_DENIED : DEFAULT_DENIED)), ...input.denied_codes_extend]);
  if (input.allowed_codes_extend.includes(status)) return 'allowed';
  if (denied.has(status)) return 'denied';
  return status < 400 ? 'allowed' : 'neither';
}

/**
 * P14: one request as a role; passes when the answer means what `expected_result` says. Denied =
 * 401/403 (strict_denied_codes_only) or 401/403/404/422 (default), plus denied_codes_extend;
 * allowed = any status < 400 that is not denied, plus allowed_codes_extend; a 5xx is neither
 * (denied_codes replaces the denied set). `either` accepts allowed or denied, `not_denied` anything
 * but a denial or a 5xx. With expected_status the status must also be one of those; with
 * acceptable_statuses the set (∪ expected_status) alone decides — the published DAGs' explicit
 * lists of statuses that count as the expected outcome.
 */
export const P14 = definePrimitive({
  id: 'P14',
  name: 'permission_check',
  schema: P14Schema,
  produces: () => ({ exported: [], local: LAST_VARS_LOCAL }),
  async run(input, ctx) {
    const m = input.action ? ACTION.exec(input.action)! : undefined;
    // from_last_response without an action judges whatever the chain asked last
    const method = m ? m[1].toUpperCase() : input.method ?? ctx.state.last?.method ?? 'GET';
    let path = m ? m[2] : input.path ?? ctx.state.last?.path ?? '/';
    const role = input.role ?? currentRole(ctx.state);
    if (input.role) {
      try {
        await ensureRoleSession(ctx, input.role, input.login_as ? { credentials: input.login_as } : {});
      } catch (e) {
        if (e instanceof RoleError) return { passed: false, message: `cannot act as role ${input.role}: ${e.message}` };
        throw e;
      }
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(input.headers)) headers[k] = String(v);
    let json: unknown;
    if (input.query) path = appendQuery(path, input.query as Record<string, Json>);
    if (input.body !== undefined) {
      if (method === 'GET' || method === 'HEAD') {
        if (input.body === null || typeof input.body !== 'object' || Array.isArray(input.body)) return { passed: false, message: `a ${method} body is sent as the query string and must be an object` };
        path = appendQuery(path, input.body as Record<string, Json>);
      } else json = input.body;
    }
    let res: { status: number; body: unknown };
    if (input.from_last_response) {
      const last = ctx.state.last;
      const bare = (p: string) => p.split('?')[0].replace(/\/$/, '');
      if (!last || last.method === 'SQL') return { passed: false, message: `${method} ${path}: no HTTP response in this chain to judge` };
      if ((input.action || input.path) && (last.method !== method || bare(last.path) !== bare(path))) return { passed: false, message: `the chain's last request was ${last.method} ${last.path}, not ${method} ${path}` };
      res = last;
    } else try {
      res = await sessionRequest(ctx, { method, path, headers, json, role, timeoutMs: input.timeout * 1000, followRedirects: input.follow_redirects, csrfHeader: input.attach_csrf });
    } catch (e) {
      return { passed: false, message: requestFailure(e, `${method} ${path} as ${role ?? 'no role'}`) };
    }
    const got = classify(res.status, input);
    const problems: string[] = [];
    if (input.acceptable_statuses) {
      const set = [...new Set([...input.acceptable_statuses, ...(input.expected_status ?? [])])];
      if (!set.includes(res.status)) problems.push(`status ${res.status}, expected ${set.join('/')} (${input.expected_result})`);
    } else {
      const fits = input.expected_result === 'either' ? got !== 'neither' : input.expected_result === 'not_denied' ? got === 'allowed' || (got === 'neither' && res.status < 500) : got === input.expected_result;
      if (!fits) problems.push(`${res.status} means ${got === 'neither' ? 'an error (neither allowed nor denied)' : got}, expected ${input.expected_result}`);
      if (input.expected_status && !input.expected_status.includes(res.status)) problems.push(`status ${res.status}, expected ${input.expected_status.join('/')}`);
    }
    const head = `${method} ${path} as ${role ?? 'no role'} → ${res.status}`;
    return {
      passed: problems.length === 0,
      message: problems.length ? `${head}: ${problems.join('; ')}; body ${show(res.body, 200)}` : `${head}: ${input.expected_result} as expected`,
      data: { method, path, role: role ?? null, status: res.status, classified: got, expected: input.expected_result },
    };
  },
});
