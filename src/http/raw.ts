// The transport lives in ../http.ts; this module keeps the body encoders that sessions and uploads use.
export { sendRaw, type RawRequest, type RawResponse } from './request';

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
