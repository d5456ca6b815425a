import { prepare } from './http-common';
import type { DialectContext, StepDialect } from './types';
import { isObject, type Inputs } from './util';
import { onlyKeys, request } from './workflow';

/**
 * P29 multi_step_workflow, per task (each evaluator's own reading):
 * - cqfnbfay: entity_setup is a request; its answer's `id` (or, for a list, the first element's
 *   `submission_id`) is `{{id}}` and the elements' ids are `{{submitter_ids[i]}}`; steps default to
 *   PUT and status 200; expect_state {path, value}; final_verify {db_query, expected}.
 * - jzssnoqp: steps with expect_status (one or a list); entity_setup (an object) seeds variables.
 * - ubsmhopy: like cqfnbfay, with `token` per request ("" = none) and the setup's `accessId`.
 * - xayqujrv: entity_setup a request or null; after it and every step `id`, `uuid`, `api_key`;
 *   expect_status / expect_status_in (default: below 400); `_assert_equal_to` / `_assert_diff_from`
 *   compare with a named step's body; `_wait_seconds` steps; final_verify by SQL row or pattern, or
 *   `_external_get` of the mock receiver's history.
 * Inner references to what the workflow captured become `{name}` tokens (P29 fills them).
 */

const CAPTURE_EACH_XAYQUJRV = ['id', 'uuid', 'api_key'];

export function normalizeP29(raw: Inputs, ctx: DialectContext): Inputs {
  const i = prepare(raw, ctx);
  const t = ctx.task;
  if ('workflow' in i && !('steps' in i)) return describedOnly(raw, ctx);
  const out: Inputs = {};
  onlyKeys(i, ['entity_setup', 'steps', 'final_verify'], ctx, 'inputs', out);
  const captured = new Set<string>();
  const later = JSON.stringify([i.steps ?? null, i.final_verify ?? null]);
  const used = (name: string) => new RegExp(`\\{\\{\\s*${name}(\\.[\\w.]+)?\\s*\\}\\}`).test(later);

  const es = i.entity_setup;
  if (isObject(es) && (t === 'jzssnoqp' || !('path' in es))) {
    out.vars = es;
    for (const k of Object.keys(es)) captured.add(k);
    ctx.spelling('entity_setup {name: value} (jzssnoqp)', 'vars', 'values the steps refer to');
  } else if (isObject(es)) {
    const setup = request(es, ctx, 'entity_setup');
    if (setup) {
      const capture: Inputs = {};
      if (t === 'gavmyneb') capture.id = ['$.id', '$.data.id'];
      else if (t === 'cqfnbfay' || t === 'ubsmhopy') {
        capture.id = ['$.id', '$[0].submission_id', '$[0].id'];
        for (const m of later.matchAll(/\{\{\s*submitter_ids\.(\d+)\s*\}\}/g)) capture[`submitter_ids_${m[1]}`] = `$[${m[1]}].id`;
        if (t === 'ubsmhopy' && used('accessId')) capture.accessId = '$.accessId';
      } else if (t === 'xayqujrv') {
        for (const k of CAPTURE_EACH_XAYQUJRV) if (used(k)) capture[k] = `$.${k}`;
      } else ctx.issue('inputs.entity_setup', `no known meaning in task ${t}`);
      if (Object.keys(capture).length) setup.capture = capture;
      for (const k of Object.keys(capture)) captured.add(k);
      out.setup = setup;
      ctx.spelling('entity_setup (a request)', 'setup {…, capture}', 'the request that creates the entity; its ids are the steps\' {id} tokens');
    }
  } else if (es !== undefined && es !== null) ctx.issue('inputs.entity_setup', 'must be an object or null');

  const steps = Array.isArray(i.steps) ? i.steps : [];
  if (!Array.isArray(i.steps)) ctx.issue('inputs.steps', 'must be a list');
  out.steps = steps.map((s, n) => step(s, n, ctx, captured, used));
  // step-level notes go to the step's notes (the canonical step schema has no room for them)
  for (const st of out.steps as Inputs[]) for (const k of Object.keys(st)) if (k.startsWith('_')) {
    out[`_${String(st.name)}${k}`] = st[k];
    delete st[k];
  }
  if (i.final_verify !== undefined) out.final_verify = tokens(finalVerify(i.final_verify, ctx, out), captured);
  ctx.spelling('P29 steps', 'multi_step_workflow steps', 'a workflow of requests with status and value expectations');
  return out;
}

function step(s: unknown, n: number, ctx: DialectContext, captured: Set<string>, used: (name: string) => boolean): Inputs {
  const at = `inputs.steps[${n}]`;
  if (!isObject(s)) {
    ctx.issue(at, 'a step is an object');
    return {};
  }
  const t = ctx.task;
  const name = typeof s.name === 'string' ? s.name : `step_${n + 1}`;
  if (s._wait_seconds !== undefined) {
    onlyKeys(s, ['name', '_wait_seconds'], ctx, at);
    ctx.spelling('steps[]._wait_seconds', 'steps[].wait_seconds', 'a pause between steps (e.g. for webhook retries)');
    return { name, wait_seconds: s._wait_seconds };
  }
  const known = ['name', 'method', 'path', 'body', 'headers', 'token', 'expect_status', 'expect_status_in', 'expect_state', 'expect_state_path', '_assert_equal_to', '_assert_diff_from'];
  const o: Inputs = { name };
  onlyKeys(s, known, ctx, at);
  const req = request({ method: s.method, path: s.path, body: s.body, headers: s.headers, token: s.token }, ctx, `steps[${n}]`, t === 'cqfnbfay' || t === 'ubsmhopy' ? 'PUT' : t === 'gavmyneb' ? 'POST' : 'GET');
  if (req) for (const [k, v] of Object.entries(req)) if (v !== undefined) o[k] = v;
  const st = s.expect_status_in ?? s.expect_status ?? (t === 'cqfnbfay' || t === 'ubsmhopy' || t === 'gavmyneb' ? 200 : undefined);
  if (st !== undefined) o.expect_status = Array.isArray(st) ? st : [st];
  const expect: Inputs[] = [];
  const es = s.expect_state;
  if (isObject(es) && 'path' in es) expect.push({ path: es.path, equals: es.value ?? null });
  else if (isObject(es)) for (const [k, v] of Object.entries(es)) expect.push({ path: k.startsWith('$') ? k : `$.${k}`, equals: v });
  if (s.expect_state_path !== undefined) expect.push({ path: s.expect_state_path, present: true });
  if (expect.length) o.expect = expect;
  if (s._assert_equal_to !== undefined) o.same_body_as = s._assert_equal_to;
  if (s._assert_diff_from !== undefined) {
    // MV_HASH_DETERMINISTIC_VARIANT names a step that does not exist ("first_call_should_be_equal"): it had no effect
    if (typeof s._assert_diff_from === 'string' && /_should_be_equal$/.test(s._assert_diff_from)) o._assert_diff_from_names_no_step = s._assert_diff_from;
    else o.differs_from = s._assert_diff_from;
  }
  if (t === 'xayqujrv') {
    const cap: Inputs = {};
    for (const k of ['id', 'uuid', 'api_key']) if (used(k)) cap[k] = `$.${k}`;
    if (Object.keys(cap).length) o.capture = cap;
  }
  // a step's own captures serve later steps only: tokens for them are set after this step
  const out = tokens(o, captured);
  for (const k of Object.keys((o.capture as Inputs) ?? {})) captured.add(k);
  return out as Inputs;
}

/**
 * gavmyneb's BIZ_CONTENT_MIGRATION_AGGREGATE: `workflow: {trigger: "POST /…/:course_id/…", poll: …}`,
 * `expected_states`, `terminal` describe a workflow without the values to run it (`:course_id`,
 * `:id`); its evaluator read none of these keys and passed the step. It runs as a stub and fails.
 */
function describedOnly(raw: Inputs, ctx: DialectContext): Inputs {
  ctx.spelling('P29 workflow/expected_states/terminal (gavmyneb)', 'PUBLISHED_STUB', 'a described workflow with unfilled :params, not runnable');
  return { __stub: true, published_type: 'P29', reason: 'gavmyneb\'s P29 only describes a workflow (templates with :course_id / :id and the states it should pass); nothing says which course to run it on, and its evaluator read none of these keys', _published_inputs: raw };
}

function finalVerify(f: unknown, ctx: DialectContext, out: Inputs): unknown {
  if (!isObject(f)) {
    ctx.issue('inputs.final_verify', 'must be an object');
    return undefined;
  }
  if ('_external_get' in f) {
    onlyKeys(f, ['_external_get', 'expect_min_events', 'expect_signature_header_regex'], ctx, 'inputs.final_verify');
    ctx.spelling('final_verify._external_get + expect_min_events', 'final_verify {history_url, min_deliveries, header_regex}', 'a receiver service\'s record of deliveries');
    return { history_url: f._external_get, min_deliveries: f.expect_min_events ?? 1, ...(f.expect_signature_header_regex !== undefined ? { header_regex: f.expect_signature_header_regex } : {}) };
  }
  onlyKeys(f, ['db_query', 'expected', 'expected_pattern', '_canonical_phrase_required'], ctx, 'inputs.final_verify');
  if (f._canonical_phrase_required !== undefined) out._final_verify_note = f._canonical_phrase_required;
  ctx.spelling('final_verify {db_query, expected | expected_pattern}', 'final_verify {sql, expect_row | expect_pattern}', 'the database after the workflow');
  return { sql: f.db_query, ...(f.expected !== undefined ? { expect_row: f.expected } : {}), ...(f.expected_pattern !== undefined ? { expect_pattern: f.expected_pattern } : {}) };
}

/** `{{name}}` (and `{{submitter_ids.N}}`) of names the workflow captured → its `{name}` tokens. */
function tokens(v: unknown, captured: Set<string>): unknown {
  if (typeof v === 'string') {
    return v.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)(?:\.(\d+))?\s*\}\}/g, (m, name: string, idx?: string) => {
      const n = idx !== undefined ? `${name}_${idx}` : name;
      return captured.has(n) ? `{${n}}` : m;
    });
  }
  if (Array.isArray(v)) return v.map((x) => tokens(x, captured));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'capture' ? x : tokens(x, captured)]));
  return v;
}

export const P29_DIALECT: StepDialect = {
  types: ['P29', 'MULTI_STEP_WORKFLOW'],
  normalize: (_type, inputs, ctx) => {
    const out = normalizeP29(inputs, ctx);
    if (!out.__stub) return { type: 'P29', inputs: out };
    delete out.__stub;
    return { type: 'PUBLISHED_STUB', inputs: out };
  },
};
