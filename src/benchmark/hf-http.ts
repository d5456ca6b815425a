import http from 'node:http';
import https from 'node:https';
import { PullError } from './pull-error';
import { SaasbenchError } from '../errors';

/**
 * GET with redirects, for the Hugging Face file API. Authorization goes only to the endpoint's own
 * origin: the CDN a resolve URL redirects to (and any other host) never sees the token. Network
 * failures become a short cause (connection refused, host not found, …); HTTP refusals say what
 * to do about them. Neither ever includes a header value.
 */

export interface HfTarget {
  /** HF_ENDPOINT (no trailing slash) */
  endpoint: string;
  token?: string;
}

/** A failure worth retrying (connection lost, 5xx): the download resumes from what it already has. */
export class TransientError extends SaasbenchError {
  static override readonly nonRetryable = false;
}

const MAX_REDIRECTS = 5;
const TIMEOUT_MS = 60_000;

export function networkCause(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connection refused (offline, or nothing listens there)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found (offline?)';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ETIMEDOUT':
    case 'ESOCKETTIMEDOUT':
      return 'timed out';
    default:
      return e.code ? `${e.code}: ${e.message}` : e.message;
  }
}

export function statusCause(res: http.IncomingMessage, hadToken: boolean): string {
  const status = res.statusCode ?? 0;
  const code = typeof res.headers['x-error-code'] === 'string' ? ` (${res.headers['x-error-code']})` : '';
  if (status === 401) return hadToken ? `401 Unauthorized${code}: HF_TOKEN was refused` : `401 Unauthorized${code}: the dataset is private, gated or absent; set HF_TOKEN to a token that can read it`;
  if (status === 403) return `403 Forbidden${code}: ${hadToken ? "the account of HF_TOKEN has no access (accept the dataset's terms on the Hub?)" : 'set HF_TOKEN to a token that can read it'}`;
  if (status === 404) return `404 Not Found${code}: no such dataset, revision or file`;
  return `${status} ${http.STATUS_CODES[status] ?? ''}${code}`.trim();
}

function once(url: URL, headers: Record<string, string>): Promise<http.IncomingMessage> {
  return new Promise((resolvePromise, reject) => {
    const mod = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
    if (!mod) return reject(new PullError(url.origin, `unsupported URL scheme ${url.protocol}`));
    const req = mod.get(url, { headers: { 'user-agent': 'saasbench-benchmark-pull', ...headers } }, resolvePromise);
    req.setTimeout(TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
  });
}

/**
 * GET `url`, following redirects. Resolves with the final response (any status); rejects with
 * the network error of the first hop that could not be made.
 */
export async function hfGet(target: HfTarget, url: string, headers: Record<string, string> = {}): Promise<{ res: http.IncomingMessage; url: URL }> {
  const origin = new URL(target.endpoint).origin;
  let at = new URL(url);
  for (let hop = 0; ; hop++) {
    const h = { ...headers };
    if (target.token && at.origin === origin) h.authorization = `Bearer ${target.token}`;
    const res = await once(at, h);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (![301, 302, 303, 307, 308].includes(status) || !location) return { res, url: at };
    res.resume();
    if (hop >= MAX_REDIRECTS) throw new PullError(at.origin + at.pathname, `more than ${MAX_REDIRECTS} redirects`);
    at = new URL(location, at);
  }
}

/** The whole body (small API answers only). */
export function readBody(res: http.IncomingMessage, limit = 64 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    res.on('data', (c: Buffer) => {
      n += c.length;
      if (n > limit) res.destroy(new Error(`answer larger than ${limit} bytes`));
      else chunks.push(c);
    });
    res.on('end', () => resolvePromise(Buffer.concat(chunks)));
    res.on('error', reject);
    res.on('aborted', () => reject(Object.assign(new Error('connection lost'), { code: 'ECONNRESET' })));
  });
}

/** GET a JSON API answer; `what` names it in the failure line. */
export async function hfJson(target: HfTarget, url: string, what: string): Promise<{ json: unknown; res: http.IncomingMessage }> {
  let res: http.IncomingMessage;
  try {
    ({ res } = await hfGet(target, url, { accept: 'application/json' }));
  } catch (e) {
    if (e instanceof PullError) throw e;
    throw new PullError(what, networkCause(e as NodeJS.ErrnoException));
  }
  if (res.statusCode !== 200) {
    res.resume();
    throw new PullError(what, statusCause(res, !!target.token));
  }
  let body: Buffer;
  try {
    body = await readBody(res);
  } catch (e) {
    throw new PullError(what, networkCause(e as NodeJS.ErrnoException));
  }
  try {
    return { json: JSON.parse(body.toString('utf8')), res };
  } catch {
    throw new PullError(what, 'the answer is not JSON (is HF_ENDPOINT a Hugging Face Hub?)');
  }
}

/** The `rel="next"` URL of a Link header (the tree API's pagination), resolved against `base`. */
export function nextLink(res: http.IncomingMessage, base: URL): string | null {
  const link = res.headers.link;
  if (typeof link !== 'string') return null;
  for (const part of link.split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (m) return new URL(m[1], base).toString();
  }
  return null;
}
