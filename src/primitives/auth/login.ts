import type { z } from 'zod';
import type { Json } from '../../model/json';
import { show } from '../compare';
import { HttpTransportError } from '../../http/request';
import { queryJsonPath } from '../jsonpath';
import type { LastResponse, StoredCookie } from '../types';
import { absorbCookies, cookieHeader } from './cookies';
import { formEncode, sendRaw, type RawResponse } from '../../http/raw';
import type { LoginDecl, LoginTokenSource, SetupRequestSchema } from '../../model/roles';
import { SaasbenchError } from '../../errors';

/** A role's credentials cannot be had: the message says which role, which step and why. */
export class RoleError extends SaasbenchError {
  static override readonly nonRetryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'RoleError';
  }
}

/**
 * The application answered the login and did not log the user in (a status outside the success
 * statuses, or no token where one is declared). A P13 that expects a refusal passes on exactly
 * this; transport failures and configuration errors are plain RoleErrors.
 */
export class LoginRefused extends RoleError {
  static override readonly nonRetryable = false;
  constructor(
    message: string,
    /** the refusing response */
    readonly response?: LastResponse,
  ) {
    super(message);
    this.name = 'LoginRefused';
  }
}

type Source = z.infer<typeof LoginTokenSource>;

/** A value of a response: body JSONPath, header, cookie of the jar, or a regex over the body text. */
export function extractValue(src: Source, res: RawResponse, jar: StoredCookie[]): string | undefined {
  if (src.from === 'body') {
    const hit = queryJsonPath(res.body, src.path)[0];
    return typeof hit === 'string' || typeof hit === 'number' ? String(hit) : undefined;
  }
  if (src.from === 'header') return res.headers[src.name.toLowerCase()];
  if (src.from === 'cookie') return jar.find((c) => c.name === src.name)?.value;
  const m = new RegExp(src.pattern).exec(res.bytes.toString('utf8'));
  return m ? (m[1] ?? m[0]) : undefined;
}

export function describeSource(src: Source): string {
  if (src.from === 'body') return `body ${src.path}`;
  if (src.from === 'regex') return `body /${src.pattern}/`;
  return `${src.from} ${src.name}`;
}

export interface LoginResult {
  cookies: StoredCookie[];
  token?: string;
  /** the login's `capture` values */
  captured: Record<string, string>;
  /** the login response itself (a P13 records it as the chain's last response) */
  response: LastResponse;
  steps: string[];
  /** the token of the login's CSRF step, for requests of the session that attach it (P04/P14 attach_csrf) */
  csrf?: { header?: string; token: string };
}

const asResponse = (method: string, path: string, res: RawResponse): LastResponse => ({ method, path, status: res.status, headers: res.headers, body: res.body, elapsedMs: res.elapsedMs });

/**
 * Perform one declared HTTP login (optional CSRF fetch, then the login request) with a fresh
 * cookie jar. `l` is already templated. Throws LoginRefused when the app answers but does not log
 * in, RoleError when it does not answer.
 */
export async function performLogin(role: string, l: LoginDecl, baseUrl: string): Promise<LoginResult> {
  const timeoutMs = l.timeout_seconds * 1000;
  let jar: StoredCookie[] = [];
  const send = async (method: string, path: string, headers: Record<string, string>, body?: Buffer, contentType?: string) => {
    const h: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'saasbench-evaluator', ...headers };
    if (contentType) h['Content-Type'] = contentType;
    const c = cookieHeader(jar, path);
    if (c) h.Cookie = c;
    try {
      const res = await sendRaw({ baseUrl, method, path, headers: h, body, timeoutMs });
      jar = absorbCookies(jar, res.setCookies);
      return res;
    } catch (e) {
      if (e instanceof HttpTransportError) throw new RoleError(`login as ${role}: ${method} ${path}: no response: ${e.message}`);
      throw e;
    }
  };
  const headers = { ...l.headers };
  const body: Record<string, Json> = { ...l.body };
  const steps: string[] = [];
  let csrf: LoginResult['csrf'];
  if (l.csrf) {
    const res = await send(l.csrf.method, l.csrf.path, {});
    const token = extractValue(l.csrf.token, res, jar);
    steps.push(`${l.csrf.method} ${l.csrf.path} → ${res.status}`);
    if (res.status >= 400 || token === undefined) {
      throw new RoleError(`login as ${role}: CSRF step ${l.csrf.method} ${l.csrf.path} → ${res.status}, no token at ${describeSource(l.csrf.token)} (body ${show(res.body, 200)})`);
    }
    if (l.csrf.header) headers[l.csrf.header] = token;
    if (l.csrf.body_field) body[l.csrf.body_field] = token;
    csrf = { ...(l.csrf.header ? { header: l.csrf.header } : {}), token };
  }
  const hasBody = l.method !== 'GET';
  const payload = !hasBody ? undefined : l.format === 'form' ? formEncode(body) : Buffer.from(JSON.stringify(body));
  const res = await send(l.method, l.path, headers, payload, hasBody ? (l.format === 'form' ? 'application/x-www-form-urlencoded' : 'application/json') : undefined);
  steps.push(`${l.method} ${l.path} → ${res.status}`);
  const response = asResponse(l.method, l.path, res);
  const ok = l.expect_status ? l.expect_status.includes(res.status) : res.status >= 200 && res.status < 400;
  if (!ok) {
    throw new LoginRefused(`login as ${role}: ${l.method} ${l.path} → ${res.status}, expected ${l.expect_status ? l.expect_status.join('/') : '2xx or 3xx'} (body ${show(res.body, 200)})`, response);
  }
  let token: string | undefined;
  if (l.token) {
    token = extractValue(l.token, res, jar);
    if (token === undefined || token === '') throw new LoginRefused(`login as ${role}: ${l.method} ${l.path} → ${res.status} but no token at ${describeSource(l.token)} (body ${show(res.body, 200)})`, response);
  }
  const captured: Record<string, string> = {};
  for (const [name, src] of Object.entries(l.capture)) {
    const v = extractValue(src, res, jar);
    if (v === undefined) throw new LoginRefused(`login as ${role}: ${l.method} ${l.path} → ${res.status} but no ${name} at ${describeSource(src)}`, response);
    captured[name] = v;
  }
  return { cookies: jar, token, captured, response, steps, ...(csrf ? { csrf } : {}) };
}

/** One setup request (no session). Throws RoleError naming the role when it does not succeed (any answer does with `anyStatus`). */
export async function performSetupRequest(role: string, r: z.infer<typeof SetupRequestSchema> & { anyStatus?: boolean }, baseUrl: string): Promise<string> {
  const hasBody = r.method !== 'GET' && r.body !== undefined;
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'saasbench-evaluator', ...r.headers };
  if (hasBody) headers['Content-Type'] = r.format === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
  const body = !hasBody ? undefined : r.format === 'form' ? formEncode(r.body!) : Buffer.from(JSON.stringify(r.body));
  let res: RawResponse;
  try {
    res = await sendRaw({ baseUrl, method: r.method, path: r.path, headers, body, timeoutMs: r.timeout_seconds * 1000 });
  } catch (e) {
    if (e instanceof HttpTransportError) throw new RoleError(`setup for role ${role}: ${r.method} ${r.path}: no response: ${e.message}`);
    throw e;
  }
  const ok = r.anyStatus || (r.expect_status ? r.expect_status.includes(res.status) : res.status >= 200 && res.status < 400);
  if (!ok) throw new RoleError(`setup for role ${role}: ${r.method} ${r.path} → ${res.status}, expected ${r.expect_status ? r.expect_status.join('/') : '2xx or 3xx'} (body ${show(res.body, 200)})`);
  return `${r.method} ${r.path} → ${res.status}`;
}
