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

/**
 * One multipart/form-data body: the fields first, then the files. Node's own FormData/Blob encode
 * it (boundary, quoting of names and file names as the WHATWG spec says); the bytes are collected
 * into one Buffer because our HTTP transport sends a buffered body and logs its size.
 */
export async function multipartBody(fields: Record<string, string>, files: { field: string; name: string; type: string; bytes: Buffer }[]): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) form.append(f.field, new Blob([f.bytes], { type: f.type }), f.name);
  const encoded = new Response(form);
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type') ?? 'multipart/form-data' };
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
export async function rawBody(i: BodyInputs): Promise<{ body: Buffer; contentType: string } | undefined> {
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
