import http from 'node:http';
import https from 'node:https';
import { SaasbenchError } from '../errors';

export interface HttpRequestSpec {
  baseUrl: string;
  method: string;
  /** path beginning with `/`, may carry a query string */
  path: string;
  headers: Record<string, string>;
  /** extra query parameters, appended to any already in `path` */
  query?: Record<string, unknown>;
  /** serialized as JSON with Content-Type: application/json */
  jsonBody?: unknown;
  timeoutMs: number;
  /** responses larger than this are cut (and flagged) */
  maxBodyBytes?: number;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** parsed JSON when the bytes are JSON, else the text ('' when empty) */
  body: unknown;
  rawText: string;
  truncated: boolean;
  elapsedMs: number;
  /** the path as sent, query string included */
  sentPath: string;
}

export class HttpTransportError extends SaasbenchError {
  static override readonly nonRetryable = false;
  constructor(message: string, readonly elapsedMs: number, readonly timedOut: boolean) {
    super(message);
    this.name = 'HttpTransportError';
  }
}

/**
 * Query-string rendering: arrays become repeated keys, null/undefined are dropped, objects are
 * sent as JSON text, everything else as its JSON scalar text (`true`, `3`, `abc`).
 */
export function appendQuery(path: string, query: Record<string, unknown> | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  const add = (k: string, v: unknown) => {
    if (v === null || v === undefined) return;
    params.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  };
  for (const [k, v] of Object.entries(query)) {
    if (Array.isArray(v)) v.forEach((x) => add(k, x));
    else add(k, v);
  }
  const qs = params.toString();
  if (!qs) return path;
  const hash = path.indexOf('#');
  const base = hash >= 0 ? path.slice(0, hash) : path;
  return base + (base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?') + qs;
}

function parseBody(text: string): unknown {
  if (text.trim() === '') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export interface RawRequest {
  baseUrl: string;
  method: string;
  /** path beginning with `/`, query string included */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  timeoutMs: number;
  maxBodyBytes?: number;
}

export interface RawResponse extends HttpResponse {
  /** each Set-Cookie header line, unjoined */
  setCookies: string[];
  /** the response bytes (up to maxBodyBytes) */
  bytes: Buffer;
}

/** One HTTP exchange with a JSON (or no) body; see sendRaw for the transport rules. */
export function sendHttp(spec: HttpRequestSpec): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...spec.headers };
  let body: Buffer | undefined;
  if (spec.jsonBody !== undefined) {
    body = Buffer.from(JSON.stringify(spec.jsonBody), 'utf8');
    if (!hasHeader(headers, 'content-type')) headers['Content-Type'] = 'application/json';
  }
  return sendRaw({ baseUrl: spec.baseUrl, method: spec.method, path: appendQuery(spec.path, spec.query), headers, body, timeoutMs: spec.timeoutMs, maxBodyBytes: spec.maxBodyBytes });
}

/**
 * One HTTP exchange with node's http/https module and an arbitrary body (JSON, form, multipart,
 * bytes): no redirects are followed, no connection reuse, a hard deadline over the whole exchange
 * (connect + headers + body). Also returns the raw Set-Cookie lines and bytes that sessions and
 * downloads need.
 */
export function sendRaw(spec: RawRequest): Promise<RawResponse> {
  // an app mounted under a base path keeps it: baseUrl http://h:1/api + /x → /api/x
  const base = new URL(spec.baseUrl);
  const target = new URL(base.pathname.replace(/\/$/, '') + spec.path, base.origin);
  const mod = target.protocol === 'https:' ? https : http;
  const headers: Record<string, string> = { ...spec.headers };
  const payload = spec.body ?? (['GET', 'HEAD', 'OPTIONS', 'DELETE'].includes(spec.method) ? undefined : Buffer.alloc(0));
  if (payload) headers['Content-Length'] = String(payload.length);
  const maxBytes = spec.maxBodyBytes ?? 10 * 1024 * 1024;
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const req = mod.request(target, { method: spec.method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      res.on('data', (c: Buffer) => {
        if (size < maxBytes) chunks.push(size + c.length > maxBytes ? c.subarray(0, maxBytes - size) : c);
        if (size + c.length > maxBytes) truncated = true;
        size += c.length;
      });
      res.on('end', () =>
        finish(() => {
          const bytes = Buffer.concat(chunks);
          const rawText = bytes.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: flattenHeaders(res.headers),
            body: truncated ? rawText : parseBody(rawText),
            rawText,
            truncated,
            elapsedMs: elapsed(),
            sentPath: spec.path,
            setCookies: res.headers['set-cookie'] ?? [],
            bytes,
          });
        }),
      );
      res.on('error', (e) => finish(() => reject(new HttpTransportError(`response error: ${e.message}`, elapsed(), false))));
    });
    const timer = setTimeout(() => {
      finish(() => reject(new HttpTransportError(`timed out after ${spec.timeoutMs / 1000}s`, elapsed(), true)));
      req.destroy();
    }, spec.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => finish(() => reject(new HttpTransportError(`${e.code ?? 'error'}: ${e.message}`, elapsed(), false))));
    if (payload) req.end(payload);
    else req.end();
  });
}

export function hasHeader(headers: Record<string, string>, name: string): boolean {
  const n = name.toLowerCase();
  return Object.keys(headers).some((k) => k.toLowerCase() === n);
}

function flattenHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
