import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { formEncode } from '../http/raw';

/**
 * Request bodies other than JSON, shared by the HTTP primitives: a url-encoded form, raw text or
 * bytes, and multipart with files.
 */

const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const FormSchema = z.union([z.record(z.string().min(1), z.union([Scalar, z.array(Scalar)])), z.string()]);
const Base64 = z.string().regex(/^[A-Za-z0-9+/\s]*={0,2}\s*$/, 'base64 text');

export const FileSchema = z
  .object({
    /** the multipart field name */
    field: z.string().min(1),
    filename: z.string().min(1),
    content_type: z.string().regex(/^[\w.+-]+\/[\w.+-]+/, 'a MIME type like image/png').default('application/octet-stream'),
    /** the file's bytes as base64, or its text */
    content_b64: Base64.optional(),
    content: z.string().optional(),
  })
  .strict()
  .refine((f) => (f.content_b64 === undefined) !== (f.content === undefined), { message: 'give content_b64 or content' });

export type FileInput = z.infer<typeof FileSchema>;

/** One multipart/form-data body: the fields first, then the files. */
export function multipartBody(fields: Record<string, string>, files: { field: string; name: string; type: string; bytes: Buffer }[]): { body: Buffer; contentType: string } {
  const boundary = `----saasbench${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  const esc = (s: string) => s.replace(/"/g, '%22').replace(/[\r\n]/g, ' ');
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${esc(k)}"\r\n\r\n${v}\r\n`, 'utf8'));
  for (const f of files) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${esc(f.field)}"; filename="${esc(f.name)}"\r\nContent-Type: ${f.type}\r\n\r\n`, 'utf8'), f.bytes, Buffer.from('\r\n', 'utf8'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`, 'utf8'));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

const flat = (v: unknown): string => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));

export interface BodyInputs {
  form?: z.infer<typeof FormSchema>;
  raw_body?: string;
  raw_body_b64?: string;
  files?: FileInput[];
  /** send the form as multipart/form-data (always so with files) */
  multipart?: boolean;
}

/**
 * The raw body for form / raw_body / raw_body_b64 / files inputs, or undefined when none is given.
 * With files, the form fields travel as multipart fields beside them.
 */
export function rawBody(i: BodyInputs): { body: Buffer; contentType: string } | undefined {
  if (i.files?.length || (i.multipart && i.form !== undefined)) {
    const fields: Record<string, string> = {};
    if (typeof i.form === 'string') for (const [k, v] of new URLSearchParams(i.form)) fields[k] = v;
    else for (const [k, v] of Object.entries(i.form ?? {})) if (v !== null) fields[k] = flat(v);
    return multipartBody(
      fields,
      (i.files ?? []).map((f) => ({ field: f.field, name: f.filename, type: f.content_type, bytes: f.content_b64 !== undefined ? Buffer.from(f.content_b64, 'base64') : Buffer.from(f.content ?? '', 'utf8') })),
    );
  }
  if (i.form !== undefined) return { body: typeof i.form === 'string' ? Buffer.from(i.form, 'utf8') : formEncode(i.form), contentType: 'application/x-www-form-urlencoded' };
  if (i.raw_body !== undefined) return { body: Buffer.from(i.raw_body, 'utf8'), contentType: 'text/plain; charset=utf-8' };
  if (i.raw_body_b64 !== undefined) return { body: Buffer.from(i.raw_body_b64, 'base64'), contentType: 'application/octet-stream' };
  return undefined;
}
