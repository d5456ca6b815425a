import { deflateSync } from 'node:zlib';
import { z } from 'zod';
import { show } from './compare';
import { captureValue, PathSchema } from './p04-http-request';
import { canvasUpload } from './p23-canvas-flow';
import { multipartBody } from './http-body';
import { queryJsonPath } from './jsonpath';
import { LAST_VARS_LOCAL, requestFailure, sessionRequest } from './auth/request';
import { definePrimitive } from './types';
import { isLoopbackHost } from '../net-address';

const Status = z.number().int().min(100).max(599);
const Scalar = z.union([z.string(), z.number(), z.boolean()]);

const UploadSchema = z
  .object({
    method: z.string().transform((m) => m.toUpperCase()).pipe(z.enum(['POST', 'PUT', 'PATCH'])).default('POST'),
    path: PathSchema,
    field_name: z.string().min(1).optional(),
    file_field: z.string().min(1).optional(),
    file_name: z.string().min(1).optional(),
    filename: z.string().min(1).optional(),
    content_type: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type like image/png').default('text/plain'),
    extra_fields: z.record(z.string().min(1), Scalar).default({}),
    /** generate a file of this size (image/png → a valid PNG of about that size) */
    file_size_kb: z.number().positive().max(51_200).optional(),
    file_content: z.string().optional(),
    /** the file's bytes as base64 */
    file_content_b64: z.string().regex(/^[A-Za-z0-9+/\s]*={0,2}\s*$/, 'base64 text').optional(),
    headers: z.record(z.string().min(1), Scalar).default({}),
    /** `canvas`: the three-step Canvas file API (metadata, then the file to the returned upload_url, then confirm) */
    flow: z.enum(['multipart', 'canvas']).default('multipart'),
  })
  .strict()
  .refine((u) => !(u.field_name && u.file_field), { message: 'give field_name or file_field, not both', path: ['file_field'] })
  .refine((u) => !(u.file_name && u.filename), { message: 'give file_name or filename, not both', path: ['filename'] })
  .refine((u) => [u.file_size_kb, u.file_content, u.file_content_b64].filter((x) => x !== undefined).length <= 1, { message: 'give one of file_size_kb, file_content, file_content_b64', path: ['file_content'] });

const DownloadSchema = z
  .object({
    /** where the file can be fetched: a path, or a JSONPath into the upload response (e.g. $.url) */
    path: z.string().startsWith('/').optional(),
    url_from: z.string().min(1).optional(),
    expected_status: z.array(Status).min(1).default([200]),
    /** the downloaded bytes must equal the uploaded ones (default true) */
    compare: z.boolean().default(true),
  })
  .strict()
  .refine((d) => (d.path === undefined) !== (d.url_from === undefined), { message: 'give path or url_from' });

export const P23Schema = z
  .object({
    upload: UploadSchema,
    download: DownloadSchema.optional(),
    /** the upload must be rejected (a 4xx) */
    expect_failure: z.boolean().default(false),
    expected_status: z.union([Status, z.array(Status).min(1)]).transform((s) => (Array.isArray(s) ? s : [s])).optional(),
    acceptable_statuses: z.array(Status).min(1).optional(),
    timeout: z.number().positive().max(600).default(30),
    /** variables taken from the upload's answer: name → JSONPath (or paths, the first that matches) */
    capture: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.union([z.string().min(1), z.array(z.string().min(1)).min(1)])).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.capture && (v.upload.flow === 'canvas' || v.expect_failure)) ctx.addIssue({ code: 'custom', path: ['capture'], message: 'capture needs an upload that succeeds (not expect_failure, not the canvas flow)' });
    if (v.upload.flow === 'canvas' && (v.download || v.expect_failure || v.expected_status || v.acceptable_statuses)) ctx.addIssue({ code: 'custom', path: ['upload', 'flow'], message: 'the canvas flow decides by the confirmed file id: no download or status settings' });
    if (v.expect_failure && v.download) ctx.addIssue({ code: 'custom', path: ['download'], message: 'nothing to download when the upload must fail' });
    if (v.expect_failure) {
      for (const s of [...(v.expected_status ?? []), ...(v.acceptable_statuses ?? [])]) if (s < 400 || s > 499) ctx.addIssue({ code: 'custom', path: ['acceptable_statuses'], message: `expect_failure: ${s} is not a 4xx` });
    }
  });

const CRC = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
function noise(n: number, seed = 0x5eed): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

/** A valid RGB PNG of roughly `bytes` bytes (stored, uncompressed deflate blocks). */
export function makePng(bytes: number): Buffer {
  const width = 64;
  const rowBytes = width * 3 + 1;
  const height = Math.max(1, Math.ceil(Math.max(0, bytes - 100) / rowBytes));
  const px = noise(rowBytes * height);
  for (let y = 0; y < height; y++) px[y * rowBytes] = 0;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(px, { level: 0 })), chunk('IEND', Buffer.alloc(0))]);
}

export function fileBytes(u: Pick<z.infer<typeof UploadSchema>, 'file_content' | 'file_content_b64' | 'file_size_kb' | 'content_type'>): Buffer {
  if (u.file_content_b64 !== undefined) return Buffer.from(u.file_content_b64, 'base64');
  if (u.file_content !== undefined) return Buffer.from(u.file_content, 'utf8');
  if (u.file_size_kb === undefined) return Buffer.from('saasbench upload test\n', 'utf8');
  const n = Math.round(u.file_size_kb * 1024);
  if (u.content_type === 'image/png') return makePng(n);
  if (u.content_type.startsWith('text/')) return Buffer.from('saasbench-upload-line\n'.repeat(Math.ceil(n / 22)).slice(0, n), 'utf8');
  return noise(n);
}

/** A multipart body with one file (see http-body.ts). */
export function multipart(fields: Record<string, string>, file: { field: string; name: string; type: string; bytes: Buffer }): Promise<{ body: Buffer; contentType: string }> {
  return multipartBody(fields, [file]);
}

/**
 * P23: a multipart upload in the chain's session (then, with `download`, fetch the file back and
 * compare bytes). Pass: the upload status is in expected_status ∪ acceptable_statuses when given;
 * else a 4xx when expect_failure; else 200/201 — and the download, when asked, answers as expected
 * with the same bytes.
 */
export const P23 = definePrimitive({
  id: 'P23',
  name: 'file_upload_download',
  schema: P23Schema,
  produces: (i) => ({ exported: Object.keys((i as { capture?: object }).capture ?? {}), local: LAST_VARS_LOCAL }),
  async run(input, ctx) {
    const u = input.upload;
    const bytes = fileBytes(u);
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(u.extra_fields)) fields[k] = String(v);
    const name = u.file_name ?? u.filename ?? 'upload.txt';
    const mp = await multipart(fields, { field: u.field_name ?? u.file_field ?? 'file', name, type: u.content_type, bytes });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(u.headers)) headers[k] = String(v);
    if (u.flow === 'canvas') return canvasUpload(ctx, { path: u.path, headers }, { name, type: u.content_type, bytes }, input.timeout * 1000);
    let res;
    try {
      res = await sessionRequest(ctx, { method: u.method, path: u.path, headers, raw: { body: mp.body, contentType: mp.contentType }, timeoutMs: input.timeout * 1000 });
    } catch (e) {
      return { passed: false, message: requestFailure(e, `${u.method} ${u.path} (upload ${bytes.length} B)`) };
    }
    const set = [...(input.expected_status ?? []), ...(input.acceptable_statuses ?? [])];
    const ok = set.length ? set.includes(res.status) : input.expect_failure ? res.status >= 400 && res.status < 500 : res.status === 200 || res.status === 201;
    const want = set.length ? set.join('/') : input.expect_failure ? 'a 4xx' : '200/201';
    const head = `upload ${name} (${bytes.length} B, ${u.content_type}) ${u.method} ${u.path} → ${res.status}`;
    const data: Record<string, unknown> = { upload: { path: u.path, status: res.status, bytes: bytes.length, file_name: name } };
    if (!ok) return { passed: false, message: `${head}, expected ${want}; body ${show(res.body, 200)}`, data };
    for (const [name, spec] of Object.entries(input.capture ?? {})) {
      const v = captureValue(res.body, spec);
      if (v === undefined) return { passed: false, message: `${head}; capture ${name} failed, nothing at ${[spec].flat().join(' | ')} in ${show(res.body, 200)}`, data };
      ctx.setVar(name, v);
    }
    if (!input.download) return { passed: true, message: `${head}`, data };

    const d = input.download;
    let path = d.path;
    if (d.url_from) {
      const hit = queryJsonPath(res.body, d.url_from)[0];
      if (typeof hit !== 'string' || !hit) return { passed: false, message: `${head}; no download URL at ${d.url_from} in ${show(res.body, 200)}`, data };
      if (hit.startsWith('/')) path = hit;
      else {
        try {
          const url = new URL(hit);
          if (!isLoopbackHost(url.hostname)) return { passed: false, message: `${head}; download URL ${hit} is not on the app's host`, data };
          path = url.pathname + url.search;
        } catch {
          return { passed: false, message: `${head}; download URL ${show(hit)} is neither a path nor a URL`, data };
        }
      }
    }
    let got;
    try {
      got = await sessionRequest(ctx, { method: 'GET', path: path!, headers: { Accept: '*/*' }, timeoutMs: input.timeout * 1000 });
    } catch (e) {
      return { passed: false, message: `${head}; ${requestFailure(e, `download GET ${path}`)}`, data };
    }
    data.download = { path, status: got.status, bytes: got.bytes.length };
    if (!d.expected_status.includes(got.status)) return { passed: false, message: `${head}; download GET ${path} → ${got.status}, expected ${d.expected_status.join('/')}`, data };
    if (d.compare && !got.bytes.equals(bytes)) return { passed: false, message: `${head}; download GET ${path} returned ${got.bytes.length} B that differ from the ${bytes.length} B uploaded`, data };
    return { passed: true, message: `${head}; download GET ${path} → ${got.status}${d.compare ? ', same bytes' : ''}`, data };
  },
});
