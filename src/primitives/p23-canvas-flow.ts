import { show } from './compare';
import { multipartBody } from './http-body';
import { formEncode } from '../http/raw';
import { requestFailure, sessionRequest } from './auth/request';
import type { PrimitiveContext, PrimitiveOutcome } from './types';

/**
 * The three-step upload of the Canvas LMS file API (upload `flow: canvas`): POST the file's
 * metadata (name, size, content_type) as a form to `path` → `{upload_url, upload_params}`; POST
 * the upload_params and the file (field `file`) as multipart to upload_url, without following the
 * redirect; GET its Location → the file's JSON, which must carry an `id`. URLs the app hands out
 * are reached like any stack URL (a path of the app, or a compose host port).
 */
export async function canvasUpload(ctx: PrimitiveContext, u: { path: string; headers: Record<string, string> }, file: { name: string; type: string; bytes: Buffer }, timeoutMs: number): Promise<PrimitiveOutcome> {
  const steps: string[] = [];
  const fail = (msg: string) => ({ passed: false, message: [...steps, msg].join('; '), data: { steps } });
  try {
    const r1 = await sessionRequest(ctx, { method: 'POST', path: u.path, headers: u.headers, raw: { body: formEncode({ name: file.name, size: String(file.bytes.length), content_type: file.type }), contentType: 'application/x-www-form-urlencoded' }, timeoutMs });
    steps.push(`POST ${u.path} → ${r1.status}`);
    const b1 = (r1.body ?? {}) as { upload_url?: unknown; upload_params?: Record<string, unknown> };
    if (typeof b1.upload_url !== 'string' || !b1.upload_url) return fail(`no upload_url in ${show(r1.body, 200)}`);
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(b1.upload_params ?? {})) params[k] = typeof v === 'string' ? v : JSON.stringify(v);
    const mp = await multipartBody(params, [{ field: 'file', name: file.name, type: file.type, bytes: file.bytes }]);
    const r2 = await sessionRequest(ctx, { method: 'POST', path: b1.upload_url, raw: mp, timeoutMs });
    steps.push(`POST ${b1.upload_url} → ${r2.status}`);
    const loc = r2.headers.location;
    if (!loc) return fail(`the upload answered ${r2.status} without a Location to confirm (body ${show(r2.body, 200)})`);
    const r3 = await sessionRequest(ctx, { method: 'GET', path: loc, headers: u.headers, timeoutMs });
    steps.push(`GET ${loc} → ${r3.status}`);
    const id = (r3.body as { id?: unknown } | null)?.id;
    if (id === undefined || id === null) return fail(`no file id in ${show(r3.body, 200)}`);
    return { passed: true, message: `${steps.join('; ')}; file id ${String(id)}`, data: { steps, file_id: id } };
  } catch (e) {
    return fail(requestFailure(e, 'canvas upload'));
  }
}
