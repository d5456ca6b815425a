import { hasHeader, HttpTransportError, sendRaw, type RawResponse } from '../../http/request';
import { capturePublishedIds } from '../published-id-capture';
import type { PrimitiveContext, PrimitiveEnv } from '../types';
import { absorbSetCookie, chainAuth, withSession } from './session';
import { isLoopbackHost } from '../../net-address';
import { SaasbenchError } from '../../errors';

export interface SessionRequest {
  method: string;
  /** a path beginning with `/` (the app), or an absolute http(s) URL of a stack service (see resolveTarget) */
  path: string;
  headers?: Record<string, string>;
  /** sent as JSON (Content-Type: application/json) */
  json?: unknown;
  /** sent as is, with this content type (unless the headers name one) */
  raw?: { body: Buffer; contentType: string };
  timeoutMs: number;
  /** send as this role instead of the chain's current role (P14); 'anonymous' = no credentials */
  role?: string;
  /** record as the chain's last response (default true) */
  record?: boolean;
  /** session headers left out of this request (compared case-insensitively) */
  omitHeaders?: readonly string[];
  /** send the role's login CSRF token in this header (the request fails when the role has none) */
  csrfHeader?: string;
  /** follow 3xx answers with a Location on the same origin (at most 10); other origins are not followed */
  followRedirects?: boolean;
  /** keep the body as bytes: the recorded body is their base64 text */
  binary?: boolean;
  /** false: no published id capture from this response (P04 `id_capture`) */
  idCapture?: boolean;
  /** also send the role's login token as this cookie (an app that reads its token from a cookie) */
  tokenCookie?: string;
}

export interface SessionResponse extends RawResponse {
  /** the redirects followed, in order, and the one not followed (other origin), if any */
  redirects: { status: number; location: string; followed: boolean }[];
  /** variables the published id capture set from this response */
  compatCaptured?: string[];
}

/** A request that cannot be sent as written (unknown host port, CSRF token missing): the step fails with this message. */
export class RequestSetupError extends SaasbenchError {
  static override readonly nonRetryable = true;
  constructor(message: string) {
    super(message);
    this.name = 'RequestSetupError';
  }
}

/**
 * Where a path or absolute URL is sent. A path goes to the app. An absolute URL is a published
 * DAG's view of the stack from the host (`http://localhost:9201/_cluster/health`): its host must be
 * local and its port is a host port of the task's compose file, reached through the service that
 * publishes it (env.hostPortUrl); the app's own origin is the app. `app` says whether the role's
 * session applies (it does only for the app).
 */
export function resolveTarget(env: PrimitiveEnv, pathOrUrl: string): { baseUrl: string; path: string; app: boolean } {
  if (pathOrUrl.startsWith('/')) return { baseUrl: env.baseUrl, path: pathOrUrl, app: true };
  let u: URL;
  try {
    u = new URL(pathOrUrl);
  } catch {
    throw new RequestSetupError(`"${pathOrUrl}" is neither a path starting with / nor an absolute URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RequestSetupError(`${pathOrUrl}: only http(s) URLs are supported`);
  const path = (u.pathname || '/') + u.search;
  const app = new URL(env.baseUrl);
  if (u.origin === app.origin) return { baseUrl: env.baseUrl, path, app: true };
  if (!isLoopbackHost(u.hostname, ['host.docker.internal'])) throw new RequestSetupError(`${pathOrUrl}: evaluation requests only go to the task's own stack (host ${u.hostname} is not local)`);
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const base = env.hostPortUrl?.(port);
  if (!base) throw new RequestSetupError(`${pathOrUrl}: no service of this task's stack publishes host port ${port}`);
  return { baseUrl: base, path, app: base === env.baseUrl };
}

/**
 * An HTTP request of a primitive, in the chain's session: the role's headers and cookies are added
 * under explicit headers (requests to other services of the stack carry none), Set-Cookie answers
 * are kept, the response becomes the chain's last response (`previous` too) and published tasks get
 * the compatibility id capture. Throws HttpTransportError on refused/reset/timeout and
 * RequestSetupError for a request that cannot be sent as written.
 */
export async function sessionRequest(ctx: PrimitiveContext, r: SessionRequest): Promise<SessionResponse> {
  const explicit: Record<string, string> = { ...(r.headers ?? {}) };
  if (!hasHeader(explicit, 'accept')) explicit.Accept = 'application/json';
  if (!hasHeader(explicit, 'user-agent')) explicit['User-Agent'] = 'saasbench-evaluator';
  let body: Buffer | undefined;
  if (r.json !== undefined) {
    body = Buffer.from(JSON.stringify(r.json), 'utf8');
    if (!hasHeader(explicit, 'content-type')) explicit['Content-Type'] = 'application/json';
  } else if (r.raw) {
    body = r.raw.body;
    if (!hasHeader(explicit, 'content-type')) explicit['Content-Type'] = r.raw.contentType;
  }
  const role = r.role ?? ctx.state.auth?.role;
  let target = resolveTarget(ctx.env, r.path);
  if (r.csrfHeader && target.app) {
    const csrf = chainAuth(ctx.state).sessions[role ?? '']?.csrf;
    if (!csrf) throw new RequestSetupError(`role ${role ?? '(none)'} has no CSRF token to attach (its login declares no csrf step)`);
    explicit[r.csrfHeader] = csrf.token;
  }
  if (r.tokenCookie && target.app) {
    const token = chainAuth(ctx.state).sessions[role ?? '']?.token;
    if (!token) throw new RequestSetupError(`role ${role ?? '(none)'} has no login token to send as cookie ${r.tokenCookie}`);
    explicit.Cookie = `${r.tokenCookie}=${token}`;
  }
  let method = r.method;
  const redirects: SessionResponse['redirects'] = [];
  for (let hop = 0; ; hop++) {
    let headers = target.app ? withSession(ctx.state, target.path.split('?')[0], explicit, role) : { ...explicit };
    // the token cookie goes beside the jar's cookies, not instead of them
    if (r.tokenCookie && target.app) {
      const jar = withSession(ctx.state, target.path.split('?')[0], {}, role).Cookie;
      if (jar) headers.Cookie = `${jar}; ${headers.Cookie}`;
    }
    if (r.omitHeaders?.length) {
      const omit = new Set(r.omitHeaders.map((h) => h.toLowerCase()));
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !omit.has(k.toLowerCase())));
    }
    const res = await sendRaw({ baseUrl: target.baseUrl, method, path: target.path, headers, body, timeoutMs: r.timeoutMs });
    if (target.app) absorbSetCookie(ctx.state, res.setCookies, role);
    const location = res.headers.location;
    if (r.followRedirects && res.status >= 300 && res.status < 400 && location && hop < 10) {
      const from = new URL(target.baseUrl.replace(/\/$/, '') + target.path);
      const next = new URL(location, from);
      const sameOrigin = next.origin === from.origin;
      redirects.push({ status: res.status, location, followed: sameOrigin });
      if (sameOrigin) {
        // 303 (and, as browsers do, 301/302 after a POST) turn into a GET without a body
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method !== 'GET' && method !== 'HEAD')) {
          method = 'GET';
          body = undefined;
          for (const k of Object.keys(explicit)) if (k.toLowerCase() === 'content-type') delete explicit[k];
        }
        const basePath = new URL(target.baseUrl).pathname.replace(/\/$/, '');
        const p = next.pathname.startsWith(basePath) ? next.pathname.slice(basePath.length) || '/' : next.pathname;
        target = { ...target, path: p + next.search };
        continue;
      }
    }
    const out: SessionResponse = { ...res, sentPath: target.path, redirects, ...(r.binary ? { body: res.bytes.toString('base64') } : {}) };
    if (r.record !== false) {
      ctx.state.last = { method, path: target.path, status: out.status, headers: out.headers, body: out.body, elapsedMs: out.elapsedMs };
      if (r.idCapture !== false) {
        const ids = capturePublishedIds(ctx);
        if (ids.length) out.compatCaptured = ids;
      }
    }
    return out;
  }
}

/** Transport and setup failures as a step message; anything else is rethrown (a bug). */
export function requestFailure(e: unknown, what: string): string {
  if (e instanceof HttpTransportError) return `${what}: no response: ${e.message}`;
  if (e instanceof RequestSetupError) return `${what}: ${e.message}`;
  throw e;
}

/** Chain-local variables available after a step that records a response (run-chain.ts `lastVars`). */
export const LAST_VARS_LOCAL = ['last_status', 'last_body'];
