import { addHeader, prepare } from './http-common';
import type { DialectContext, StepDialect } from './types';
import { isObject, type Inputs } from './util';

/**
 * The published workflow types saasbench did not run before: P24 queue_job_check, P26
 * search_query, P28 email_check, P29 multi_step_workflow. Each task's evaluator implemented them
 * its own way (cqfnbfay all four; jzssnoqp P26 and P29; ubsmhopy and xayqujrv P29).
 */

const num = (v: unknown, d: number) => (typeof v === 'number' ? v : d);

/** Keys outside `known` are issues; `_` notes are carried into `out` for the generic note handling. */
export function onlyKeys(i: Inputs, known: string[], ctx: DialectContext, at: string, out?: Inputs): void {
  for (const [k, v] of Object.entries(i)) {
    if (known.includes(k)) continue;
    if (k.startsWith('_') && out) out[k] = v;
    else ctx.issue(`${at}.${k}`, `unknown key "${k}"`);
  }
}

/** cqfnbfay's API token header (its P14/P26 `token`). */
function tokenHeader(i: Inputs, tok: unknown, ctx: DialectContext, at: string): void {
  if (tok === undefined) return;
  if (ctx.task === 'cqfnbfay') {
    addHeader(i, 'X-Auth-Token', String(tok));
    ctx.spelling(`${at}token (cqfnbfay)`, 'headers.X-Auth-Token', 'the API token the request carries');
  } else if (ctx.task === 'ubsmhopy') {
    // ubsmhopy's workflows: "" = no credentials, else a bearer token
    if (tok === '') i.role = 'anonymous';
    else addHeader(i, 'Authorization', `Bearer ${String(tok)}`);
    ctx.spelling(`${at}token (ubsmhopy)`, 'headers.Authorization / role anonymous', 'the bearer token of the request ("" = none)');
  } else ctx.issue(`inputs.${at}token`, `no known meaning in task ${ctx.task}`);
}

export function request(r: unknown, ctx: DialectContext, at: string, defMethod = 'POST'): Inputs | undefined {
  if (!isObject(r)) {
    ctx.issue(`inputs.${at}`, 'must be a request object');
    return undefined;
  }
  const out: Inputs = { method: r.method ?? defMethod, path: r.path };
  if (r.body !== undefined) out.body = r.body;
  if (r.headers !== undefined) out.headers = r.headers;
  tokenHeader(out, r.token, ctx, `${at}.`);
  onlyKeys(r, ['method', 'path', 'body', 'headers', 'token', 'type'], ctx, `inputs.${at}`);
  if (r.type !== undefined && r.type !== 'http') ctx.issue(`inputs.${at}.type`, 'only "http" triggers are known');
  return out;
}

export function normalizeP24(raw: Inputs, ctx: DialectContext): Inputs {
  const i = prepare(raw, ctx);
  const v = isObject(i.verify) ? i.verify : {};
  if (v.strategy !== undefined && v.strategy !== 'db_query') ctx.issue('inputs.verify.strategy', 'only db_query is known');
  const out: Inputs = {};
  onlyKeys(i, ['trigger', 'verify'], ctx, 'inputs', out);
  onlyKeys(v, ['strategy', 'sql', 'expected_result', 'max_wait_ms'], ctx, 'inputs.verify');
  ctx.spelling('P24 trigger/verify (cqfnbfay)', 'queue_job_check {trigger, verify: {sql, expect_row}, wait_seconds}', 'a request enqueues a job; its effect must reach the database in time');
  // ididetxj: {type: "noop"} — earlier steps of the chain enqueued the job
  const noop = isObject(i.trigger) && i.trigger.type === 'noop' && Object.keys(i.trigger).length === 1;
  if (noop) ctx.spelling('trigger {type: noop}', '(no trigger)', 'earlier steps enqueued the job');
  return {
    ...out,
    ...(noop ? {} : { trigger: request(i.trigger, ctx, 'trigger') }),
    verify: { sql: v.sql, ...(v.expected_result !== undefined ? { expect_row: v.expected_result } : { min_rows: 1 }) },
    wait_seconds: num(v.max_wait_ms, 15000) / 1000,
  };
}

export function normalizeP26(raw: Inputs, ctx: DialectContext): Inputs {
  const i = prepare(raw, ctx);
  const exp = isObject(i.expected_results) ? i.expected_results : {};
  const out: Inputs = { method: i.method ?? 'GET', path: i.path };
  if (i.params !== undefined) out.query = i.params;
  tokenHeader(out, i.token, ctx, '');
  // where each evaluator found the results: cqfnbfay `data` (else the body); jzssnoqp Chatwoot's `payload` or a count
  out.results_path = ctx.task === 'jzssnoqp' ? ['$.payload', '$.data.payload', '$.total', '$.count', '$.data'] : ['$.data'];
  out.min_count = num(exp.min_count, 0);
  if (exp.first_result_contains !== undefined) out.first_result_contains = exp.first_result_contains;
  onlyKeys(i, ['method', 'path', 'params', 'token', 'expected_results'], ctx, 'inputs', out);
  for (const k of Object.keys(exp)) if (!['min_count', 'first_result_contains'].includes(k)) ctx.issue(`inputs.expected_results.${k}`, `unknown key "${k}"`);
  ctx.spelling('P26 path/params/expected_results', 'search_query {path, query, results_path, min_count, first_result_contains}', 'a search whose results are counted');
  return out;
}

export function normalizeP28(raw: Inputs, ctx: DialectContext): Inputs {
  const i = prepare(raw, ctx);
  if ('trigger_template_render' in i) return templateRender(raw, ctx);
  const exp = isObject(i.expect) ? i.expect : {};
  ctx.spelling('P28 trigger/mailserver_api/expect (cqfnbfay)', 'email_delivery {trigger, mail_api, to, subject_contains, wait_seconds}', 'the app sends an e-mail the stack\'s mail catcher receives');
  onlyKeys(exp, ['to', 'subject_contains', 'timeout_ms'], ctx, 'inputs.expect');
  const notes: Inputs = {};
  onlyKeys(i, ['trigger', 'mailserver_api', 'expect'], ctx, 'inputs', notes);
  return {
    ...notes,
    trigger: request(i.trigger, ctx, 'trigger'),
    // the published default, MailHog's API on its usual port
    mail_api: i.mailserver_api ?? 'http://localhost:8025/api/v2/messages',
    ...(exp.to !== undefined ? { to: exp.to } : {}),
    ...(exp.subject_contains !== undefined ? { subject_contains: exp.subject_contains } : {}),
    wait_seconds: num(exp.timeout_ms, 15000) / 1000,
  };
}

/**
 * iyjruvfz's P28 renders the step's own template string with sample values inside the evaluator
 * and checks that nothing is left unrendered: it observes nothing of the application (it passed for
 * every submission). It runs as a published stub and fails, saying so.
 */
function templateRender(raw: Inputs, ctx: DialectContext): Inputs {
  ctx.spelling('P28 trigger_template_render (iyjruvfz)', 'PUBLISHED_STUB', 'a check of the DAG\'s own template string, not of the application');
  // kept as a note: the template's {{…}} are the DAG's data, not placeholders of the chain
  return { published_type: 'P28', reason: 'iyjruvfz\'s P28 renders the step\'s own template with the evaluator\'s sample values; it observes nothing of the application', _published_inputs: raw };
}

export const WORKFLOW_DIALECTS: StepDialect[] = [
  { types: ['P24', 'QUEUE_JOB_CHECK'], normalize: (_t, inputs, ctx) => ({ type: 'P24', inputs: normalizeP24(inputs, ctx) }) },
  { types: ['P26', 'SEARCH_QUERY'], normalize: (_t, inputs, ctx) => ({ type: 'P26', inputs: normalizeP26(inputs, ctx) }) },
  {
    types: ['P28', 'EMAIL_CHECK'],
    normalize: (_t, inputs, ctx) => {
      const out = normalizeP28(inputs, ctx);
      return { type: 'published_type' in out ? 'PUBLISHED_STUB' : 'P28', inputs: out };
    },
  },
];
