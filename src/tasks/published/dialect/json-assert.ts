import { mapAssertion, readsExecField, type AssertionEnv } from './json-assertion';
import { firstSqlColumn, hasEarlierHttp, lastResponseStep, savedResponseNames, stepReference } from './json-chain';
import type { SubjectKind } from './json-paths';
import { jsRegex } from './json-ops';
import type { CanonicalStep, DialectContext, StepDialect } from './types';
import { copy, isObject, type Inputs } from './util';

/**
 * P07 json_value_assert in every published shape: `assertions` (with any of the assertion
 * spellings of json-assertion.ts), `assertions_any_of`, ygamciur's `or_path` alternatives,
 * rjhcjrst's `header_assertions`, mnmtxiwb's single `assertion` shorthand (json_path_exists,
 * regex_match, jwt_decode), ychlukjm's top-level `path`/`operator`/`expected`, the `response`
 * input naming the body to check, and xayqujrv's `allow_empty_body`/`accept_non_json`.
 */

/** Step-level keys the canonical P07 takes as they are. */
const STEP_KEYS = new Set(['assertions', 'any_of', 'min_passing', 'allow_empty', 'allow_empty_body', 'allow_non_json', 'parse_json', 'body']);

/** The subject of the step: the last response, or the command result when the last step that answered was a P12. */
function decideSubject(inputs: Inputs, raws: unknown[], ctx: DialectContext, out: Inputs): SubjectKind {
  const last = lastResponseStep(ctx);
  if (out.body !== undefined || !last) return 'response';
  if (last.type === 'P08') return 'sql';
  if (last.type !== 'P12') return 'response';
  if (raws.some(readsExecField)) {
    out.body = '{{previous}}';
    ctx.spelling('P07 after P12 ($.exit_code, $.stdout, …)', 'body: "{{previous}}"', "the command's result {stdout, output, exit_code} is the subject");
    return 'exec';
  }
  // a check right after a command, on plain paths, reads the command's output (qmjfeopc prints JSON; xayqujrv a word)
  out.body = '{{previous.stdout}}';
  const paths = raws.map((r) => (isObject(r) && typeof r.path === 'string' ? r.path.trim() : '$'));
  if (paths.some((p) => p !== '$')) out.parse_json = true;
  ctx.spelling('P07 after P12 (plain paths)', `body: "{{previous.stdout}}"${out.parse_json ? ' + parse_json' : ''}`, hasEarlierHttp(ctx) ? "the command's stdout (printed JSON) is the subject, not the earlier HTTP response" : "the command's stdout is the subject");
  void inputs;
  return 'exec_stdout';
}

const CLAIMS: Record<string, unknown> = { uuid_format: 'uuid', uuid: 'uuid', future_timestamp: 'future', past_timestamp: 'past', present: 'present' };
function claimCheck(v: unknown): unknown {
  if (typeof v === 'string' && CLAIMS[v]) return CLAIMS[v];
  const m = typeof v === 'string' ? /^future_timestamp_(\d+)([hms])$/.exec(v) : null;
  if (m) return { future_within_seconds: Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'm' ? 60 : 1) };
  return undefined;
}

/** mnmtxiwb's `{assertion: "...", path, pattern?, algorithm?, claims?}` shorthand → one raw-free canonical assertion. */
function shorthand(inputs: Inputs, ctx: DialectContext): Record<string, unknown> | undefined {
  const kind = inputs.assertion;
  delete inputs.assertion;
  const path = typeof inputs.path === 'string' ? inputs.path : undefined;
  delete inputs.path;
  const say = (canonical: string, meaning: string) => ctx.spelling(`assertion: ${JSON.stringify(kind)}`, canonical, meaning);
  switch (kind) {
    case 'json_path_exists':
      say('assertions: [{path, operator: exists}]', 'the path holds a non-null value');
      return { path: path ?? '$', operator: 'exists' };
    case 'regex_match': {
      const p = inputs.pattern;
      delete inputs.pattern;
      if (typeof p !== 'string') { ctx.issue('inputs.pattern', 'regex_match needs pattern'); return undefined; }
      const r = jsRegex(p);
      say('assertions: [{path, operator: regex}]', 'the string matches the pattern');
      return { path: path ?? '$', operator: 'regex', expected: r.pattern, ...(r.ignoreCase ? { ignore_case: true } : {}) };
    }
    case 'jwt_decode': {
      const expected: Record<string, unknown> = {};
      if (inputs.algorithm !== undefined) expected.algorithm = inputs.algorithm;
      delete inputs.algorithm;
      if (inputs.claims !== undefined) {
        const claims: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(isObject(inputs.claims) ? inputs.claims : {})) {
          const c = claimCheck(v);
          if (c === undefined) ctx.issue(`inputs.claims.${k}`, `unknown claim check ${JSON.stringify(v)}`);
          else claims[k] = c;
        }
        if (!isObject(inputs.claims)) ctx.issue('inputs.claims', 'claims must be an object');
        expected.claims = claims;
        ctx.spelling('claims: {<claim>: uuid_format|future_timestamp_<N>h}', 'expected.claims: {<claim>: uuid|{future_within_seconds}}', 'claim checks of the decoded payload');
      }
      delete inputs.claims;
      // the fork took the token from the GraphQL login answer when no path was given
      say('assertions: [{path, operator: jwt, expected: {algorithm, claims}}]', 'a signed JWT with that algorithm and claims (structure, alg and signature segment checked)');
      return { path: path ?? '$.data.loginUser.token', operator: 'jwt', expected };
    }
    default:
      ctx.issue('inputs.assertion', `unknown assertion shorthand ${JSON.stringify(kind)}`);
      return undefined;
  }
}

/** rjhcjrst `header_assertions: [{header, match_type, pattern|expected|value}]`: the fork's default match was a case-insensitive contains. */
function headerAssertions(list: unknown, ctx: DialectContext): Record<string, unknown>[] {
  if (!Array.isArray(list)) { ctx.issue('inputs.header_assertions', 'header_assertions must be a list'); return []; }
  const out: Record<string, unknown>[] = [];
  list.forEach((h, i) => {
    const at = `inputs.header_assertions[${i}]`;
    if (!isObject(h) || typeof h.header !== 'string') return ctx.issue(at, 'a header assertion is {header, match_type, pattern|expected}');
    const { header, match_type: mt = 'contains', ...rest } = h;
    const value = rest.expected ?? rest.pattern ?? rest.value;
    for (const k of Object.keys(rest)) if (!['expected', 'pattern', 'value'].includes(k)) ctx.issue(`${at}.${k}`, `unknown header assertion key "${k}"`);
    const base = { source: 'headers', path: `$['${String(header).toLowerCase()}']` };
    if (mt === 'regex' && typeof value === 'string') out.push({ ...base, operator: 'regex', expected: jsRegex(value).pattern });
    else if (mt === 'equals') out.push({ ...base, operator: 'equals', expected: value });
    else if (mt === 'contains' && typeof value === 'string') out.push({ ...base, operator: 'contains', expected: value, ignore_case: true });
    else return ctx.issue(`${at}.match_type`, `unknown header match ${JSON.stringify(mt)}`);
    ctx.spelling(`header_assertions[].match_type: ${JSON.stringify(mt)}`, `assertions[]: {source: headers, operator: ${mt}${mt === 'contains' ? ', ignore_case' : ''}}`, 'a check on a response header');
  });
  return out;
}

export const P07Dialect: StepDialect = {
  types: ['P07', 'JSON_VALUE_ASSERT'],
  normalize(type: string, raw: Inputs, ctx: DialectContext): CanonicalStep {
    const inputs = copy(raw);
    const out: Inputs = {};
    const nested: Record<string, unknown> = {};

    if ('response' in inputs) {
      const r = inputs.response;
      delete inputs.response;
      const ref = typeof r === 'string' ? stepReference(r, ctx) : undefined;
      if (ref?.ok) ctx.spelling(`response: "${ref.label}"`, '(the last response)', 'the response of the step it names, which is the chain\'s latest');
      else if (ref) ctx.issue('inputs.response', ref.message);
      else { out.body = r; ctx.spelling('response', 'body', 'the body to check, e.g. a response saved earlier'); }
    }

    let raws: unknown[] = Array.isArray(inputs.assertions) ? inputs.assertions : [];
    let single: Record<string, unknown> | undefined;
    if ('assertion' in inputs) single = shorthand(inputs, ctx);
    else if (!('assertions' in inputs) && ('path' in inputs || 'operator' in inputs)) {
      // ychlukjm: one assertion written at the step level
      const one: Inputs = {};
      for (const k of Object.keys(inputs)) if (!STEP_KEYS.has(k) && !k.startsWith('_') && !['assertions_any_of', 'header_assertions', 'accept_non_json'].includes(k)) { one[k] = inputs[k]; delete inputs[k]; }
      raws = [one];
      inputs.assertions = raws;
      ctx.spelling('path/operator/expected at the step level', 'assertions: [{…}]', 'a single assertion written without the list');
    }
    const anyRaw: unknown[] = Array.isArray(inputs.assertions_any_of) ? inputs.assertions_any_of : [];
    const subject = decideSubject(inputs, [...raws, ...anyRaw, ...(single ? [single] : [])], ctx, out);
    const saved = savedResponseNames(ctx);
    const lastStep = lastResponseStep(ctx);
    const sqlColumn = subject === 'sql' && lastStep ? firstSqlColumn(ctx.chain?.[lastStep.index]) : undefined;
    const env = (label: string, at: string): AssertionEnv => ({ ctx, subject, saved, label, at, notes: nested, sqlColumn });

    const assertions: Record<string, unknown>[] = single ? [single] : [];
    const anyOf: Record<string, unknown>[] = [];
    if ('assertions' in inputs) {
      if (!Array.isArray(inputs.assertions)) ctx.issue('inputs.assertions', 'assertions must be a list');
      else inputs.assertions.forEach((a, i) => {
        const at = `inputs.assertions[${i}]`;
        if (!isObject(a)) return ctx.issue(at, 'an assertion is an object');
        if ('or_header' in a && !('path' in a) && !('header' in a)) {
          // ididetxj: an alternative on a response header
          const { or_header: h, ...rest } = a;
          anyOf.push(...mapAssertion({ header: h, ...rest }, env('assertions[] (or_header)', at)));
          ctx.spelling('assertions[].or_header', 'any_of[]: {source: headers}', 'alternative assertions: at least one of the or_ assertions must pass');
        } else if ('or_path' in a && !('path' in a)) {
          // ygamciur: the or_path assertions of a step are alternatives — at least one must hold
          const { or_path: p, ...rest } = a;
          anyOf.push(...mapAssertion({ path: p, ...rest }, env('assertions[] (or_path)', at)));
          ctx.spelling('assertions[].or_path', 'any_of[].path', 'alternative assertions: at least one of the or_path assertions must pass');
        } else assertions.push(...mapAssertion(a, env('assertions[]', at)));
      });
      delete inputs.assertions;
    }
    if ('assertions_any_of' in inputs) {
      if (!Array.isArray(inputs.assertions_any_of)) ctx.issue('inputs.assertions_any_of', 'assertions_any_of must be a list');
      else {
        inputs.assertions_any_of.forEach((a, i) => {
          const at = `inputs.assertions_any_of[${i}]`;
          if (!isObject(a)) return ctx.issue(at, 'an assertion is an object');
          anyOf.push(...mapAssertion(a, env('assertions_any_of[]', at)));
        });
        ctx.spelling('assertions_any_of', inputs.assertions_any_of.length ? 'any_of' : '(nothing: an empty list)', 'at least one of these must pass');
      }
      delete inputs.assertions_any_of;
    }
    if ('header_assertions' in inputs) {
      assertions.push(...headerAssertions(inputs.header_assertions, ctx));
      delete inputs.header_assertions;
    }
    if ('accept_non_json' in inputs) {
      out.allow_non_json = inputs.accept_non_json;
      delete inputs.accept_non_json;
      ctx.spelling('accept_non_json', 'allow_non_json', 'a body that is not JSON passes the step');
    }
    out.assertions = assertions;
    if (anyOf.length) out.any_of = anyOf;
    // everything else (min_passing, allow_empty, allow_empty_body, body, unknown keys) as written: the schema judges it
    for (const [k, v] of Object.entries(inputs)) {
      if (k === 'body' && out.body !== undefined) ctx.issue('inputs.body', 'body given beside response');
      else out[k] = v;
    }
    for (const [k, v] of Object.entries(nested)) if (isObject(v) && Object.keys(v).length === 0) delete nested[k];
    if (Object.keys(nested).length) out._assertion_notes = nested;
    return { type, inputs: out };
  },
};
