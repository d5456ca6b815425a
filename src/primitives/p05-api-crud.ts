import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { deepEqual, show, toJson } from './compare';
import { dottedGet } from './jsonpath';
import { PathSchema, VarName } from './p04-http-request';
import { queryJsonPath } from './jsonpath';
import { CaptureMap, captureFrom, fillTokens, RequestSchema, sendRequest } from './workflow-http';
import { LAST_VARS_LOCAL, requestFailure, sessionRequest } from './auth/request';

import { definePrimitive, type PrimitiveContext } from './types';

const Status = z.number().int().min(100).max(599);
const Statuses = z.union([Status, z.array(Status).min(1)]).transform((s) => (Array.isArray(s) ? s : [s]));
const ItemPath = PathSchema.refine((p) => p.includes('{id}'), 'an item path must contain {id}');
/** a read path with {id}, or a list path (the read finds the entity in the list by its id) */
const ReadPath = PathSchema;
const JsonObject = z.record(z.string(), JsonSchema);

export const P05Schema = z
  .object({
    /** the collection path, e.g. /api/items (POST creates; {resource}/{id} reads, updates, deletes) */
    resource: z.string().refine((p) => p.startsWith('/') || p.startsWith('{{'), 'resource is the collection path and starts with /'),
    create_body: JsonObject,
    update_body: JsonObject.optional(),
    id_field: z.string().min(1).optional(),
    identifier_field: z.string().min(1).optional(),
    /** the key wrapping the entity in responses, e.g. "customer" for {"customer": {...}} */
    response_root: z.string().min(1).optional(),
    read_path: ReadPath.optional(),
    /** JSONPath of the created id in the create response, or paths tried in order (default: id_field of the entity) */
    id_path: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    /** a request sent first (e.g. the parent the item needs); its captures fill `{name}` tokens of the bodies */
    setup: RequestSchema.extend({ capture: CaptureMap.optional() }).optional(),
    update_path: ItemPath.optional(),
    delete_path: ItemPath.optional(),
    update_method: z.string().transform((m) => m.toUpperCase()).pipe(z.enum(['PUT', 'PATCH', 'POST'])).default('PUT'),
    /** send the update to the collection path instead of the item path */
    update_to_base: z.boolean().default(false),
    expected_read_fields: z.array(z.string().min(1)).optional(),
    expected_create_status: Statuses.default([200, 201]),
    expected_read_status: Statuses.default([200]),
    expected_update_status: Statuses.default([200, 201, 204]),
    expected_delete_status: Statuses.default([200, 202, 204]),
    /** re-read after the update and compare the update_body's scalar fields (default true) */
    verify_update: z.boolean().default(true),
    /** after DELETE, a read must answer 404 or 410 (default true) */
    verify_deleted: z.boolean().default(true),
    skip_delete: z.boolean().default(false),
    headers: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).default({}),
    timeout: z.number().positive().max(600).default(15),
    /** export the created id under this variable */
    capture_id_as: VarName.optional(),
  })
  .strict()
  .refine((v) => !(v.id_field && v.identifier_field), { message: 'give id_field or identifier_field, not both', path: ['identifier_field'] })
  .refine((v) => !(v.update_to_base && v.update_path), { message: 'update_to_base and update_path contradict each other', path: ['update_to_base'] })
  .refine((v) => !(v.skip_delete && (v.delete_path || v.verify_deleted === false)), { message: 'skip_delete with delete settings', path: ['skip_delete'] });

type Input = z.infer<typeof P05Schema>;

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The entity inside a response: body[response_root] when given; else the body when it has the id
 * field; else the single object-valued field that has it ({"item": {...}}).
 */
export function entityOf(body: unknown, idField: string, root?: string): Record<string, unknown> | undefined {
  if (root) return isObj(body) && isObj(body[root]) ? (body[root] as Record<string, unknown>) : undefined;
  if (!isObj(body)) return undefined;
  if (idField in body) return body;
  const nested = Object.values(body).filter((v) => isObj(v) && idField in v);
  return nested.length === 1 ? (nested[0] as Record<string, unknown>) : undefined;
}

/** The element of a list answer (the body, or an array field of it or of its `data`) whose id is `id`. */
export function findInList(body: unknown, idField: string, id: string): Record<string, unknown> | undefined {
  const arrays: unknown[][] = [];
  const scan = (v: unknown) => {
    if (Array.isArray(v)) arrays.push(v);
    else if (isObj(v)) for (const x of Object.values(v)) if (Array.isArray(x)) arrays.push(x);
  };
  scan(body);
  if (isObj(body)) scan(body.data);
  for (const a of arrays) for (const e of a) if (isObj(e) && String(e[idField]) === id) return e;
  return undefined;
}

interface Step {
  step: 'setup' | 'create' | 'read' | 'update' | 'reread' | 'delete' | 'verify_deleted';
  method: string;
  path: string;
  status?: number;
  ok: boolean;
  problem?: string;
}

/**
 * P05: create → read → update (→ re-read) → delete (→ read must be gone) on one REST resource, in
 * the chain's session. Passes only when every step does; `data.steps` says which did not.
 */
export const P05 = definePrimitive({
  id: 'P05',
  name: 'api_crud',
  schema: P05Schema,
  produces: (i) => ({ exported: typeof i.capture_id_as === 'string' ? [i.capture_id_as] : [], local: LAST_VARS_LOCAL }),
  async run(input, ctx) {
    const idField = input.identifier_field ?? input.id_field ?? 'id';
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(input.headers)) headers[k] = String(v);
    const steps: Step[] = [];
    const call = async (step: Step['step'], method: string, path: string, json?: unknown) => {
      try {
        const res = await sessionRequest(ctx, { method, path, headers, json, timeoutMs: input.timeout * 1000 });
        return res;
      } catch (e) {
        steps.push({ step, method, path, ok: false, problem: requestFailure(e, `${method} ${path}`) });
        return undefined;
      }
    };
    const done = (extra?: string) => finish(steps, input, ctx, extra);
    const itemPath = (tpl: string | undefined, id: string) => (tpl ?? `${input.resource.replace(/\/$/, '')}/{id}`).split('{id}').join(encodeURIComponent(id));

    // setup: its captures are `{name}` tokens of the bodies
    let createBody = input.create_body;
    let updateBody = input.update_body;
    if (input.setup) {
      const { capture, ...req } = input.setup;
      const out = await sendRequest(ctx, req, input.timeout, 'setup');
      const vars: Record<string, Json> = {};
      const got = out.res ? captureFrom(out.res.body, capture, vars) : [];
      const missing = Object.keys(capture ?? {}).filter((k) => !got.includes(k));
      steps.push({ step: 'setup', method: req.method, path: req.path, status: out.res?.status, ok: !out.problem && !missing.length, problem: out.problem ?? (missing.length ? `nothing to capture for ${missing.join(', ')} in ${show(out.res?.body, 200)}` : undefined) });
      if (out.problem || missing.length) return done();
      const declared = new Set(Object.keys(capture ?? {}));
      createBody = fillTokens(createBody, vars, declared).value;
      updateBody = updateBody && fillTokens(updateBody, vars, declared).value;
    }

    // create
    const created = await call('create', 'POST', input.resource, createBody);
    if (!created) return done();
    const entity = entityOf(created.body, idField, input.response_root);
    const idVal = input.id_path ? (typeof input.id_path === 'string' ? [input.id_path] : input.id_path).map((p) => queryJsonPath(created.body, p)[0]).find((v) => v !== undefined && v !== null) : entity?.[idField];
    const createOk = input.expected_create_status.includes(created.status);
    if (!createOk || (typeof idVal !== 'string' && typeof idVal !== 'number')) {
      steps.push({ step: 'create', method: 'POST', path: input.resource, status: created.status, ok: false, problem: !createOk ? `status ${created.status}, expected ${input.expected_create_status.join('/')}; body ${show(created.body, 200)}` : `no ${input.id_path ?? `${input.response_root ? `${input.response_root}.` : ''}${idField}`} in the response ${show(created.body, 200)}` });
      return done();
    }
    steps.push({ step: 'create', method: 'POST', path: input.resource, status: created.status, ok: true });
    const id = String(idVal);
    if (input.capture_id_as) ctx.setVar(input.capture_id_as, toJson(idVal) as Json);

    // read (a read_path without {id} is a list: the entity is the element with that id)
    const listRead = input.read_path !== undefined && !input.read_path.includes('{id}');
    const readPath = listRead ? input.read_path! : itemPath(input.read_path, id);
    const pick = (body: unknown) => (listRead ? findInList(body, idField, id) : entityOf(body, idField, input.response_root));
    const read = await call('read', 'GET', readPath);
    if (!read) return done(id);
    {
      const e = pick(read.body);
      const problems: string[] = [];
      if (!input.expected_read_status.includes(read.status)) problems.push(`status ${read.status}, expected ${input.expected_read_status.join('/')}`);
      else if (!e) problems.push(`no entity in ${show(read.body, 200)}`);
      else {
        if (idField in e && String(e[idField]) !== id) problems.push(`${idField} is ${show(e[idField])}, expected ${id}`);
        for (const f of input.expected_read_fields ?? []) if (!dottedGet(e, f).found) problems.push(`field ${f} missing`);
      }
      steps.push({ step: 'read', method: 'GET', path: readPath, status: read.status, ok: problems.length === 0, problem: problems.join('; ') || undefined });
    }

    // update
    if (updateBody) {
      const path = input.update_to_base ? input.resource : itemPath(input.update_path, id);
      const upd = await call('update', input.update_method, path, updateBody);
      if (upd) {
        const ok = input.expected_update_status.includes(upd.status);
        steps.push({ step: 'update', method: input.update_method, path, status: upd.status, ok, problem: ok ? undefined : `status ${upd.status}, expected ${input.expected_update_status.join('/')}; body ${show(upd.body, 200)}` });
        if (ok && input.verify_update) {
          const again = await call('reread', 'GET', readPath);
          if (again) {
            const e = pick(again.body);
            const want = input.response_root && isObj(updateBody[input.response_root]) && Object.keys(updateBody).length === 1 ? (updateBody[input.response_root] as Record<string, unknown>) : updateBody;
            const problems: string[] = [];
            if (again.status !== 200 || !e) problems.push(`re-read → ${again.status} ${show(again.body, 200)}`);
            else for (const [k, v] of Object.entries(want)) {
              if (v !== null && typeof v === 'object') continue;
              if (!(k in e)) problems.push(`${k} missing after update`);
              else if (!deepEqual(e[k], v)) problems.push(`${k} is ${show(e[k])} after update, expected ${show(v)}`);
            }
            steps.push({ step: 'reread', method: 'GET', path: readPath, status: again.status, ok: problems.length === 0, problem: problems.join('; ') || undefined });
          }
        }
      }
    }

    // delete
    if (!input.skip_delete) {
      const delPath = itemPath(input.delete_path, id);
      const del = await call('delete', 'DELETE', delPath);
      if (del) {
        const ok = input.expected_delete_status.includes(del.status);
        steps.push({ step: 'delete', method: 'DELETE', path: delPath, status: del.status, ok, problem: ok ? undefined : `status ${del.status}, expected ${input.expected_delete_status.join('/')}` });
        if (ok && input.verify_deleted) {
          const gone = await call('verify_deleted', 'GET', readPath);
          if (gone) {
            const g = gone.status === 404 || gone.status === 410 || (listRead && gone.status === 200 && !pick(gone.body));
            steps.push({ step: 'verify_deleted', method: 'GET', path: readPath, status: gone.status, ok: g, problem: g ? undefined : `still readable after DELETE (status ${gone.status})` });
          }
        }
      }
    }
    return done(id);
  },
});

function finish(steps: Step[], input: Input, ctx: PrimitiveContext, id?: string) {
  const bad = steps.filter((s) => !s.ok);
  const line = steps.map((s) => `${s.step} ${s.method} ${s.path} → ${s.status ?? 'no response'}`).join('; ');
  void ctx;
  return {
    passed: bad.length === 0 && steps.length > 0,
    message: bad.length === 0 ? `CRUD on ${input.resource} ok (id ${id}): ${line}` : `CRUD on ${input.resource} failed at ${bad.map((s) => `${s.step}: ${s.problem}`).join('; ')} (${line})`,
    data: { resource: input.resource, id, steps },
  };
}
