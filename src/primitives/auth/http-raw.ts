import http from 'node:http';
import https from 'node:https';
import { HttpTransportError, type HttpResponse } from '../http';

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

/**
 * One HTTP exchange with an arbitrary body (form, multipart, bytes) — the same rules as
 * `sendHttp` in ../http.ts (no redirects, no connection reuse, one deadline over the whole
 * exchange), plus the raw Set-Cookie lines and response bytes that sessions and downloads need.
 */
export function sendRaw(spec: RawRequest): Promise<RawResponse> {
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
          const flat: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
          let body: unknown = rawText;
          if (!truncated && rawText.trim() !== '') {
            try {
              body = JSON.parse(rawText);
            } catch {
              body = rawText;
            }
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: flat,
            body,
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

/** application/x-www-form-urlencoded from a flat object (objects/arrays as JSON text, null dropped). */
export function formEncode(body: Record<string, unknown>): Buffer {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) {
    if (v === null || v === undefined) continue;
    if (Array.isArray(v)) v.forEach((x) => p.append(k, typeof x === 'object' ? JSON.stringify(x) : String(x)));
    else p.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  return Buffer.from(p.toString(), 'utf8');
}
