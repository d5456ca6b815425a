import { addHeader, flag, prepare, take } from './http-common';
import type { DialectContext, StepDialect } from './types';
import { isObject, type Inputs } from './util';

/** P05 api_crud as the published DAGs spell it. */
export function normalizeP05(raw: Inputs, ctx: DialectContext): Inputs {
  const i = prepare(raw, ctx);
  const t = ctx.task;
  // ygamciur writes the created id as {{id}} in its item paths; the canonical template is {id}
  for (const k of ['read_path', 'update_path', 'delete_path']) {
    if (typeof i[k] === 'string' && (i[k] as string).includes('{{id}}')) {
      i[k] = (i[k] as string).split('{{id}}').join('{id}');
      ctx.spelling(`${k} with {{id}}`, `${k} with {id}`, 'the created id in an item path');
    }
  }
  if ('id_path' in i) {
    const p = i.id_path;
    if (typeof p === 'string' && !p.startsWith('$')) {
      // qmjfeopc: the items live under another base than the collection that creates them
      delete i.id_path;
      const item = `${p.replace(/\/$/, '')}/{id}`;
      for (const k of ['read_path', 'update_path', 'delete_path']) if (!(k in i)) i[k] = item;
      ctx.spelling('id_path: "/base"', 'read_path/update_path/delete_path "/base/{id}"', 'the path under which the created item is read, updated and deleted');
    } else {
      ctx.spelling('id_path: "$.json.path"', 'id_path', 'where the created id is in the create response');
    }
  }
  if ('keep_alive' in i) {
    // jtbxfpny: dependents use the entity (`{{CRUD_DATABASE.created_id}}`): keep it, skip the delete
    if (flag(take(i, 'keep_alive'), ctx, 'keep_alive')) i.skip_delete = true;
    ctx.spelling('keep_alive', 'skip_delete', 'the created entity stays for dependent nodes (no delete)');
  }
  if (t === 'jtbxfpny' && !('capture_id_as' in i)) {
    // jtbxfpny's evaluator kept every P05's created id as `created_id` (read as {{NODE.created_id}})
    i.capture_id_as = 'created_id';
    ctx.spelling('P05 (jtbxfpny)', 'capture_id_as: created_id', 'the created id is kept for dependents');
  }
  if ('item_resource' in i || 'delete_resource' in i || 'delete_query' in i) gavmynebPaths(i, ctx);
  if (t === 'hhrdixum') hhrdixum(i, ctx);
  if ('token' in i) tokenAuth(i, ctx);
  return i;
}

/** gavmyneb: items are read/updated under item_resource and deleted under delete_resource, with delete_query appended. */
function gavmynebPaths(i: Inputs, ctx: DialectContext): void {
  const item = take(i, 'item_resource') ?? i.resource;
  const del = take(i, 'delete_resource') ?? item;
  const q = take(i, 'delete_query');
  const query = isObject(q) ? Object.entries(q).map(([k, v]) => `${k}=${String(v)}`).join('&') : typeof q === 'string' ? q : '';
  const base = (p: unknown) => `${String(p).replace(/\/$/, '')}/{id}`;
  for (const [k, v] of [['read_path', base(item)], ['update_path', base(item)], ['delete_path', `${base(del)}${query ? `?${query}` : ''}`]] as const) if (!(k in i)) i[k] = v;
  ctx.spelling('item_resource / delete_resource / delete_query', 'read_path / update_path / delete_path', 'where the created item is read, updated and deleted');
}

/**
 * hhrdixum's P05 (an InvenTree clone, Django REST): items at `<resource>/<pk>/` (trailing slash),
 * updated with PATCH, ids in `pk` (else `id`); create 201 and update 200 unless stated.
 * `setup_company_first: {flags}` first creates a company (POST /api/company/ with a name, USD and
 * the flags) whose pk is `{{cid}}` / `{{company_id}}` in the bodies; `setup_part_first` /
 * `setup_assembly_first` were not read by its evaluator (their `{{pid}}` comes from the chain).
 */
function hhrdixum(i: Inputs, ctx: DialectContext): void {
  const res = typeof i.resource === 'string' ? i.resource.replace(/\/$/, '') : '';
  for (const k of ['read_path', 'update_path', 'delete_path']) if (!(k in i)) i[k] = `${res}/{id}/`;
  if (!('update_method' in i)) i.update_method = 'PATCH';
  if (!('id_field' in i) && !('identifier_field' in i)) i.id_field = 'pk';
  if (!('id_path' in i)) i.id_path = ['$.pk', '$.id', '$[0].pk', '$[0].id'];
  if (!('expected_create_status' in i)) i.expected_create_status = 201;
  if (!('expected_update_status' in i)) i.expected_update_status = 200;
  ctx.spelling('P05 (hhrdixum)', 'item paths <resource>/{id}/, PATCH, pk', 'the Django REST item routes and ids');
  const company = take(i, 'setup_company_first');
  if (company !== undefined) {
    const leaf = res.split('/').pop() || 'x';
    i.setup = { method: 'POST', path: '/api/company/', body: { name: `P05-Setup-${leaf}-{{run_id}}`, currency: 'USD', ...(isObject(company) ? company : {}) }, capture: { cid: ['$.pk', '$.id'], company_id: ['$.pk', '$.id'] } };
    for (const k of ['create_body', 'update_body']) if (i[k] !== undefined) i[k] = JSON.parse(JSON.stringify(i[k]).replace(/\{\{\s*(cid|company_id)\s*\}\}/g, '{$1}'));
    ctx.spelling('setup_company_first (hhrdixum)', 'setup {POST /api/company/, capture cid}', 'a company created first; its pk fills the bodies');
  }
  for (const k of ['setup_part_first', 'setup_assembly_first']) {
    if (k in i) {
      i[`_${k}_unread_by_evaluator`] = take(i, k);
      ctx.spelling(`${k} (hhrdixum)`, 'notes', 'not read by the task\'s evaluator: the part comes from the chain ({{pid}})');
    }
  }
}

function tokenAuth(i: Inputs, ctx: DialectContext): void {
  const tok = take(i, 'token');
  if (typeof tok !== 'string') {
    ctx.issue('inputs.token', 'must be a string');
    return;
  }
  if (ctx.task === 'kmasmnil') {
    addHeader(i, 'x-api-key', tok);
    ctx.spelling('token (kmasmnil)', 'headers.x-api-key', 'the management API key the requests carry (as the task\'s P04 steps send it)');
  } else if (ctx.task === 'gavmyneb') {
    addHeader(i, 'Authorization', `Bearer ${tok}`);
    ctx.spelling('token (gavmyneb)', 'headers.Authorization: Bearer …', 'the bearer token the requests carry');
  } else if (ctx.task === 'pkvwdnhj') {
    // pkvwdnhj's evaluator authenticated P05 with the current role's session and never read `token`
    i._token_unread_by_evaluator = tok;
    ctx.spelling('token (pkvwdnhj)', 'notes (the role session authenticates)', 'not read by the task\'s evaluator: its P05 used the session of the current role');
  } else {
    ctx.issue('inputs.token', `no known meaning in task ${ctx.task}`);
  }
}

export const P05_DIALECT: StepDialect = {
  types: ['P05', 'API_CRUD'],
  normalize: (_type, inputs, ctx) => ({ type: 'P05', inputs: normalizeP05(inputs, ctx) }),
};
