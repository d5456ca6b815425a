import { addHeader, flag, hasHeaderKey, prepare, put, sniffContentType, take } from './http-common';
import type { DialectContext, StepDialect } from './types';
import { isObject, rename, type Inputs } from './util';

/**
 * P04 http_request as the published DAGs spell it. Each evaluator fork read its own keys; the
 * meanings below were taken from the DAGs and, where unclear, the task's evaluator (docs/compatibility.md).
 */

/** How each task named "capture the id of what this response created" (its evaluator's lookup). */
const ID_CAPTURE_PATHS: Record<string, string[]> = {
  // Payload CMS answers {doc: {...}, message}
  uybznoms: ['$.id', '$.doc.id', '$.data.id'],
  // Formbricks' management API answers {data: {...}}
  kmasmnil: ['$.data.id', '$.id'],
  // InvenTree (Django REST) answers {pk, …}; a list answer is read at its first item
  hhrdixum: ['$.pk', '$.id', '$.ID', '$.key', '$[0].pk', '$[0].id', '$[0].ID', '$[0].key'],
};

/** Capture of one named field: jzssnoqp's evaluator read it after unwrapping Chatwoot's `payload` wrapper. */
const fieldCapture = (task: string, field: string): string[] => (task === 'jzssnoqp' ? [`$.${field}`, `$.payload.${field}`, `$.payload.*.${field}`] : [`$.${field}`]);

function addCapture(i: Inputs, name: unknown, spec: string | string[], ctx: DialectContext, key: string): void {
  if (typeof name !== 'string' || !name) {
    ctx.issue(`inputs.${key}`, 'must name a variable');
    return;
  }
  const cap = isObject(i.capture) ? i.capture : {};
  if (name in cap && JSON.stringify(cap[name]) !== JSON.stringify(spec)) ctx.issue(`inputs.${key}`, `variable "${name}" is captured twice`);
  cap[name] = spec;
  i.capture = cap;
}

/** orghjavi's auth modes: null = none; `session_eval_<user>` = that user's session role (`admin`, `editor`, …); other modes are roles named as they are. */
export function authModeRole(m: unknown): string | undefined {
  if (m === null) return 'anonymous';
  if (typeof m !== 'string' || !/^[A-Za-z0-9_.:-]+$/.test(m)) return undefined;
  return /^session_eval_(.+)$/.exec(m)?.[1] ?? m;
}

function setRole(i: Inputs, role: string, ctx: DialectContext, key: string): void {
  put(i, 'role', role, ctx, key);
}

export function normalizeP04(raw: Inputs, ctx: DialectContext): Inputs {
  const i = prepare(raw, ctx);
  const t = ctx.task;

  // where: a path without / that is an absolute URL (xayqujrv's `_external` calls, lgzivily's Content-Location)
  if (typeof i.path === 'string' && /^https?:\/\//.test(i.path)) {
    i.url = take(i, 'path');
    ctx.spelling('path: absolute URL', 'url', 'a URL of another service of the stack, addressed by its compose host port');
  }
  if ('_external' in i) {
    const ext = take(i, '_external');
    if (ext === true && i.url === undefined) ctx.issue('inputs._external', '_external: true needs an absolute URL as path');
    else ctx.spelling('_external: true', 'url', 'marks a request to a service other than the app (the URL says which)');
  }
  const gen = take(i, 'path_generator');
  if (gen !== undefined) applyPathGenerator(i, gen, ctx);

  // body
  if ('body' in i && i.body === null) {
    delete i.body;
    ctx.spelling('body: null', '(no body)', 'no request body');
  }
  if (typeof i.body === 'string') {
    const text = take(i, 'body') as string;
    i.raw_body = text;
    if (!hasHeaderKey(i, 'content-type') && i.content_type === undefined) addHeader(i, 'Content-Type', sniffContentType(text));
    ctx.spelling('body: "text"', 'raw_body', 'a text body sent as written (its Content-Type header, else the type its shape declares)');
  }
  for (const k of ['body_form', 'form_data']) {
    if (rename(i, k, 'form', ctx, 'a url-encoded (or, with a multipart content type, multipart) form body')) break;
  }
  if (i.content_type !== undefined) {
    const ct = take(i, 'content_type');
    if (typeof ct !== 'string') ctx.issue('inputs.content_type', 'must be a MIME type');
    else if (/^multipart\/form-data/i.test(ct) && i.form !== undefined) {
      i.multipart = true;
      if (typeof i.form === 'string') i.form = splitPairs(i.form);
      ctx.spelling('content_type: multipart/form-data', 'multipart: true', 'the form fields travel as multipart/form-data');
    } else {
      addHeader(i, 'Content-Type', ct);
      ctx.spelling('content_type', 'headers.Content-Type', 'the request body\'s content type');
    }
  }
  rename(i, 'params', 'query', ctx, 'query-string parameters');
  if (t === 'gmdnohlg' && typeof (i.url ?? i.path) === 'string' && /\/ocs\/|\/api\/v2\//.test(String(i.path ?? '')) && !/[?&]format=/.test(String(i.path))) {
    // gmdnohlg's evaluator asked Nextcloud's OCS API for JSON on every such path (its P04)
    i.query = { format: 'json', ...(isObject(i.query) ? i.query : {}) };
    ctx.spelling('gmdnohlg OCS path', 'query.format: json', 'the evaluator asked the OCS API for JSON (it appended format=json)');
  }

  // captures
  for (const k of ['capture_response_as', 'store_response_as']) {
    if (k in i) {
      addCapture(i, take(i, k), '$', ctx, k);
      ctx.spelling(k, 'capture {name: "$"}', 'the whole response body under a name');
    }
  }
  if ('capture_as' in i) {
    const field = take(i, 'capture_field') ?? 'id';
    addCapture(i, take(i, 'capture_as'), fieldCapture(t, String(field)), ctx, 'capture_as');
    ctx.spelling('capture_as + capture_field', 'capture {name: "$.field"}', 'one field of the response (default id)');
  }
  if ('capture_var' in i) {
    const cv = take(i, 'capture_var');
    const m = typeof cv === 'string' ? /^\s*([^:]+?)\s*(?::\s*(.+))?$/.exec(cv) : null;
    if (!m) ctx.issue('inputs.capture_var', 'must be "name" or "name:$.json.path"');
    else if (t === 'ididetxj' && m[2] !== undefined && m[1].includes('_path')) {
      // ididetxj's P04 dropped "_path" from the name of a "name_path:$.x" capture (its readers
      // use {{name}}); xayqujrv's kept the name as written
      addCapture(i, m[1].replace(/_path/g, ''), m[2], ctx, 'capture_var');
      ctx.spelling('capture_var "name_path:$.path" (ididetxj)', 'capture {name: "$.path"}', 'the variable is the name without "_path"');
    } else addCapture(i, m[1], m[2] ?? '$', ctx, 'capture_var');
    ctx.spelling('capture_var "name:$.path"', 'capture {name: "$.path"}', 'a JSONPath of the response (the whole body without one)');
  }
  for (const k of ['capture_id_as', '_store_id_as', 'save_response_id_as']) {
    if (k in i) {
      addCapture(i, take(i, k), ID_CAPTURE_PATHS[t] ?? ['$.id'], ctx, k);
      ctx.spelling(k, 'capture {name: id paths}', 'the id of what the request created');
    }
  }
  if ('save_response_field_as' in i) {
    // hhrdixum: {field, var} or {var: field}; fields of the body (a list answer: of its first item)
    const f = take(i, 'save_response_field_as');
    const pairs: [unknown, unknown][] = !isObject(f) ? [] : 'field' in f && 'var' in f ? [[f.var, f.field]] : Object.entries(f);
    if (!pairs.length) ctx.issue('inputs.save_response_field_as', 'must be {field, var} or {variable: field}');
    for (const [name, field] of pairs) {
      if (typeof field !== 'string' || !field) ctx.issue('inputs.save_response_field_as', 'each field must be a field name');
      else addCapture(i, name, [`$.${field}`, `$[0].${field}`], ctx, 'save_response_field_as');
    }
    ctx.spelling('save_response_field_as', 'capture {name: "$.field"}', 'fields of the response under names');
  }
  if ('save_as' in i) {
    if (t === 'jtbxfpny') {
      ctx.spelling('save_as (jtbxfpny)', 'save_as', 'the exchange as {status, headers, body, created_id}');
    } else {
      addCapture(i, take(i, 'save_as'), '$', ctx, 'save_as');
      ctx.spelling('save_as', 'capture {name: "$"}', 'the whole response body under a name');
    }
  }
  if ('no_capture' in i) {
    const v = flag(take(i, 'no_capture'), ctx, 'no_capture');
    if (v) i.id_capture = false;
    ctx.spelling('no_capture', 'id_capture: false', 'the published id capture does not read this response');
  }

  // who
  if ('auth_mode' in i) {
    const m = take(i, 'auth_mode');
    const role = authModeRole(m);
    if (role) setRole(i, role, ctx, 'auth_mode');
    else ctx.issue('inputs.auth_mode', 'must be null or a role name');
    ctx.spelling('auth_mode', 'role', 'the credentials the request carries (null: none; session_eval_<user>: that user\'s session role; other modes are roles of their own)');
  }
  if ('auth_override' in i) {
    const m = take(i, 'auth_override');
    // jzssnoqp: "none" sends no credentials; "platform_app_token" the platform app's token; either way no implicit id capture
    if (m === 'none') setRole(i, 'anonymous', ctx, 'auth_override');
    else if (m === 'platform_app_token') setRole(i, 'platform_app', ctx, 'auth_override');
    else ctx.issue('inputs.auth_override', 'must be "none" or "platform_app_token"');
    i.id_capture = false;
    ctx.spelling('auth_override', 'role (+ id_capture: false)', 'other credentials for this request: none, or the platform app\'s token (role platform_app)');
  }
  for (const k of ['no_auth', 'skip_auth']) {
    if (k in i) {
      if (flag(take(i, k), ctx, k)) setRole(i, 'anonymous', ctx, k);
      ctx.spelling(k, 'role: anonymous', 'the request carries no credentials');
    }
  }
  if ('auth' in i) {
    const a = take(i, 'auth');
    if (a === 'none') setRole(i, 'anonymous', ctx, 'auth');
    else ctx.issue('inputs.auth', 'only "none" is known');
    ctx.spelling('auth: none', 'role: anonymous', 'the request carries no credentials');
  }
  if ('token' in i && t === 'gavmyneb') {
    // gavmyneb: the bearer token the request carries (its evaluator sent the current role's instead; the DAG names the token)
    const tok = take(i, 'token');
    if (typeof tok !== 'string') ctx.issue('inputs.token', 'must be a string');
    else addHeader(i, 'Authorization', `Bearer ${tok}`);
    ctx.spelling('token (gavmyneb)', 'headers.Authorization: Bearer …', 'the bearer token the request carries');
  }
  if ('send_token_cookie' in i) {
    // uybznoms (Payload CMS): the session token also travels as the payload-token cookie (refresh-token)
    if (flag(take(i, 'send_token_cookie'), ctx, 'send_token_cookie')) i.token_cookie = 'payload-token';
    ctx.spelling('send_token_cookie (uybznoms)', 'token_cookie: payload-token', 'the login token sent as the app\'s token cookie');
  }
  if ('attach_csrf' in i && typeof i.attach_csrf === 'boolean') {
    const v = take(i, 'attach_csrf');
    if (v) i.attach_csrf = 'x-csrf-token';
    ctx.spelling('attach_csrf: true', 'attach_csrf: x-csrf-token', 'send the session\'s CSRF token (orghjavi\'s evaluator: header x-csrf-token)');
  }
  const omit: string[] = Array.isArray(i.omit_headers) ? (i.omit_headers as string[]) : [];
  for (const [k, header] of [['omit_csrf', 'requesttoken'], ['omit_ocs_header', 'OCS-APIRequest']] as const) {
    if (k in i) {
      if (flag(take(i, k), ctx, k)) omit.push(header);
      ctx.spelling(k, `omit_headers: [${header}]`, 'the session\'s header of that name is not sent');
    }
  }
  if (omit.length) i.omit_headers = omit;

  // how
  rename(i, 'allow_redirects', 'follow_redirects', ctx, 'follow same-origin redirects');
  if (t === 'orghjavi' && !('follow_redirects' in i)) {
    // orghjavi's P04 followed redirects unless told not to (its default follow_redirects=True)
    i.follow_redirects = true;
    ctx.spelling('follow_redirects absent (orghjavi)', 'follow_redirects: true', 'the evaluator\'s default was to follow redirects');
  }
  if ('measure_response_time_ms' in i) {
    // iyjruvfz: keep the response time for a later assertion; every P04 response records it (elapsed_ms)
    if (flag(take(i, 'measure_response_time_ms'), ctx, 'measure_response_time_ms') === false) ctx.issue('inputs.measure_response_time_ms', 'only true is known');
    ctx.spelling('measure_response_time_ms', '(always measured)', 'the response time is recorded with every response');
  }
  if ('no_auth_retry' in i) {
    // egsszeqg's P04 logged in again and replayed a request answered 401 unless told not to;
    // canonical P04 never replays, so `true` is what it does anyway
    if (flag(take(i, 'no_auth_retry'), ctx, 'no_auth_retry') === false) ctx.issue('inputs.no_auth_retry', 'false (a re-login and replay after a 401) is not supported: a 401 is the answer the check sees');
    ctx.spelling('no_auth_retry: true', '(never replays)', 'no second login and replay after a 401: the check sees the 401');
  }
  rename(i, 'concurrent_requests', 'concurrent', ctx, 'copies of the request sent at the same moment');
  mapPoll(i, ctx);
  return i;
}

function splitPairs(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of s.split('&')) {
    const eq = pair.indexOf('=');
    if (eq > 0) out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

function mapPoll(i: Inputs, ctx: DialectContext): void {
  const keys = ['poll_until_status', 'poll_max_seconds', 'poll_interval_seconds', 'poll_until_path', 'poll_attempts', 'poll_interval_ms'];
  if (!keys.some((k) => k in i)) return;
  const p: Inputs = {};
  const st = take(i, 'poll_until_status');
  if (st !== undefined) p.until_status = Array.isArray(st) ? st : [st];
  const path = take(i, 'poll_until_path');
  if (path !== undefined) p.until_path = path;
  const maxS = take(i, 'poll_max_seconds');
  if (maxS !== undefined) p.max_seconds = maxS;
  const att = take(i, 'poll_attempts');
  if (att !== undefined) p.attempts = att;
  const ivS = take(i, 'poll_interval_seconds');
  const ivMs = take(i, 'poll_interval_ms');
  if (ivS !== undefined && ivMs !== undefined) ctx.issue('inputs.poll_interval_ms', 'poll_interval_seconds and poll_interval_ms are both given');
  if (typeof ivS === 'number') p.interval_ms = Math.round(ivS * 1000);
  else if (ivMs !== undefined) p.interval_ms = ivMs;
  i.poll = p;
  ctx.spelling('poll_until_status / poll_until_path + poll_*', 'poll', 'repeat the request until a status or a JSON value is reached');
}

/** gmdnohlg's EDGE_LONG_PATH: `{{repeat_char('a', 4001)}}` in the path, described by path_generator. */
function applyPathGenerator(i: Inputs, gen: unknown, ctx: DialectContext): void {
  const g = isObject(gen) ? gen : {};
  if (g.type !== 'repeat' || typeof g.char !== 'string' || g.char.length !== 1 || typeof g.count !== 'number' || g.count < 1 || g.count > 100_000) {
    ctx.issue('inputs.path_generator', 'only {type: "repeat", char, count} is known');
    return;
  }
  const token = /\{\{\s*repeat_char\(\s*'(.)'\s*,\s*(\d+)\s*\)\s*\}\}/;
  const m = typeof i.path === 'string' ? token.exec(i.path) : null;
  if (!m || m[1] !== g.char || Number(m[2]) !== g.count) {
    ctx.issue('inputs.path_generator', `the path must hold {{repeat_char('${g.char}', ${g.count})}}`);
    return;
  }
  i.path = (i.path as string).replace(token, g.char.repeat(g.count));
  ctx.spelling('path_generator', 'path', 'a generated path segment (a character repeated), written out at load time');
}

export const P04_DIALECT: StepDialect = {
  types: ['P04', 'HTTP_REQUEST'],
  normalize: (_type, inputs, ctx) => ({ type: 'P04', inputs: normalizeP04(inputs, ctx) }),
};
