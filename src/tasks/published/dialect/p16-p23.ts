import { prepare, take } from './http-common';
import type { DialectContext, StepDialect } from './types';
import { isObject, rename, type Inputs } from './util';

/** P16 response_time_check as the published DAGs spell it. */
export function normalizeP16(raw: Inputs, ctx: DialectContext): Inputs {
  const i = prepare(raw, ctx);
  for (const k of ['max_response_time_ms', 'threshold_ms']) rename(i, k, 'max_ms', ctx, 'the longest acceptable response time in ms');
  if (ctx.task === 'dfhjkeb') {
    // dfhjkeb's P16 timed the last response against max_ms, default 500 ms (not 5000)
    if (!('max_ms' in i)) {
      i.max_ms = 500;
      ctx.spelling('max_ms absent (dfhjkeb)', 'max_ms: 500', 'the evaluator\'s default limit');
    }
    rename(i, 'schema_keys', 'require_keys', ctx, 'keys the timed response body must have');
  }
  return i;
}

/** P23 file_upload_download as the published DAGs spell it. */
export function normalizeP23(raw: Inputs, ctx: DialectContext): Inputs {
  const i = prepare(raw, ctx);
  // sgdoserd: the upload spelled flat — upload_path, form_fields, files[{field, filename, content_type, content_b64}]
  if ('upload_path' in i || 'files' in i || 'form_fields' in i) {
    if ('upload' in i) ctx.issue('inputs.upload', 'upload is given beside upload_path/files/form_fields');
    const up: Inputs = { path: take(i, 'upload_path') };
    const fields = take(i, 'form_fields');
    if (fields !== undefined) up.extra_fields = fields;
    const files = take(i, 'files');
    if (!Array.isArray(files) || files.length !== 1 || !isObject(files[0])) ctx.issue('inputs.files', 'one file is expected');
    else {
      const f = files[0];
      for (const [from, to] of [['field', 'field_name'], ['filename', 'file_name'], ['content_type', 'content_type'], ['content_b64', 'file_content_b64'], ['content', 'file_content']] as const) {
        if (from in f) up[to] = f[from];
      }
      for (const k of Object.keys(f)) if (!['field', 'filename', 'content_type', 'content_b64', 'content'].includes(k)) ctx.issue(`inputs.files[0].${k}`, `unknown file key "${k}"`);
    }
    i.upload = up;
    ctx.spelling('upload_path + form_fields + files[]', 'upload {path, extra_fields, field_name, file_name, content_type, file_content_b64}', 'the multipart upload, written flat');
  }
  const up = isObject(i.upload) ? i.upload : undefined;
  if (up && 'extra_form_fields' in up) {
    rename(up, 'extra_form_fields', 'extra_fields', ctx, 'form fields sent beside the file', 'inputs.upload', 'upload.extra_form_fields', 'upload.extra_fields');
  }
  if (up && ctx.task === 'gavmyneb') {
    // gavmyneb: the bearer token of the upload (its evaluator sent the current role's); the file defaults to "test"
    if ('token' in up) {
      const tok = up.token;
      delete up.token;
      up.headers = { Authorization: `Bearer ${String(tok)}`, ...(isObject(up.headers) ? up.headers : {}) };
      ctx.spelling('upload.token (gavmyneb)', 'upload.headers.Authorization', 'the bearer token the upload carries');
    }
    if (up.flow === 'canvas') {
      ctx.spelling('upload.flow: canvas (gavmyneb)', 'upload.flow: canvas', 'the three-step Canvas file API');
      if (up.field_name !== undefined) i._canvas_field_name_unused = up.field_name;
      delete up.field_name;
      if (up.file_content === undefined && up.file_content_b64 === undefined) up.file_content = 'test';
    }
  }
  if ('save_response_id_as' in i) {
    // hhrdixum: the id (pk) of what the upload created, for later steps
    const name = take(i, 'save_response_id_as');
    if (typeof name !== 'string' || !name) ctx.issue('inputs.save_response_id_as', 'must name a variable');
    else i.capture = { ...(isObject(i.capture) ? i.capture : {}), [name]: ['$.pk', '$.id', '$.ID'] };
    ctx.spelling('save_response_id_as (P23)', 'capture {name: id paths}', 'the id of what the upload created');
  }
  if (up && typeof up.file_content === 'string' && up.file_content.startsWith('base64:')) {
    up.file_content_b64 = up.file_content.slice('base64:'.length);
    delete up.file_content;
    ctx.spelling('file_content: "base64:…"', 'upload.file_content_b64', 'the file\'s bytes, base64-encoded');
  }
  return i;
}

export const P16_DIALECT: StepDialect = {
  types: ['P16', 'RESPONSE_TIME_CHECK'],
  normalize: (_type, inputs, ctx) => ({ type: 'P16', inputs: normalizeP16(inputs, ctx) }),
};

export const P23_DIALECT: StepDialect = {
  types: ['P23', 'FILE_UPLOAD_DOWNLOAD'],
  normalize: (_type, inputs, ctx) => ({ type: 'P23', inputs: normalizeP23(inputs, ctx) }),
};
