import { hasHeader } from '../http';
import { capturePublishedIds } from '../published-id-capture';
import type { PrimitiveContext } from '../types';
import { absorbSetCookie, withSession } from './session';
import { sendRaw, type RawResponse } from './http-raw';

export interface SessionRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** sent as JSON (Content-Type: application/json) */
  json?: unknown;
  /** sent as is, with this content type */
  raw?: { body: Buffer; contentType: string };
  timeoutMs: number;
  /** send as this role instead of the chain's current role (P14) */
  role?: string;
  /** record as the chain's last response (default true) */
  record?: boolean;
}

/**
 * An HTTP request of a primitive other than P04, in the chain's session: the role's headers and
 * cookies are added under explicit headers, Set-Cookie answers are kept, the response becomes the
 * chain's last response, and published tasks get the compatibility id capture. Throws
 * HttpTransportError on refused/reset/timeout.
 */
export async function sessionRequest(ctx: PrimitiveContext, r: SessionRequest): Promise<RawResponse> {
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
  const headers = withSession(ctx.state, r.path, explicit, role);
  const res = await sendRaw({ baseUrl: ctx.env.baseUrl, method: r.method, path: r.path, headers, body, timeoutMs: r.timeoutMs });
  absorbSetCookie(ctx.state, res.setCookies, role);
  if (r.record !== false) {
    ctx.state.last = { method: r.method, path: r.path, status: res.status, headers: res.headers, body: res.body, elapsedMs: res.elapsedMs };
    capturePublishedIds(ctx);
  }
  return res;
}

/** Chain-local variables available after a step that records a response (run-chain.ts `lastVars`). */
export const LAST_VARS_LOCAL = ['last_status', 'last_body'];
