import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { asNumeric, show } from './compare';
import { queryJsonPath } from './jsonpath';
import { expectedProblem, applyOperator, NO_EXPECTED, P07_OPERATORS, PASS_ON_NO_MATCH, type Operator, type Verdict } from './p07-operators';
import { jwtExpectationProblem } from './p07-jwt';
import { NO_RESPONSE, SOURCES, isEmptyBody, isRawText, responseAt, sourceValue, subjectBody } from './response';
import { definePrimitive, type PrimitiveContext } from './types';

export { P07_OPERATORS, applyOperator } from './p07-operators';

const VarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name ([A-Za-z_][A-Za-z0-9_]*)');

type Issue = (message: string, key?: string) => void;
function checkExpected(a: { operator: Operator; expected?: unknown; expected_path?: string; tolerance?: number; ignore_case?: boolean }, issue: Issue) {
  if (a.expected_path !== undefined) {
    // the value at expected_path is only known at run time: its type is checked by the operator then
    if (a.expected !== undefined) issue('give expected or expected_path, not both', 'expected_path');
    if (NO_EXPECTED.includes(a.operator)) issue(`${a.operator} takes no expected value`, 'expected_path');
  } else {
    const p = expectedProblem(a.operator, a.expected, a.expected !== undefined);
    if (p) issue(p);
  }
  if (a.operator === 'jwt' && a.expected !== undefined && typeof a.expected === 'object' && a.expected !== null && !Array.isArray(a.expected)) {
    const j = jwtExpectationProblem(a.expected as Record<string, unknown>);
    if (j) issue(j);
  }
  if (a.tolerance !== undefined && !['equals', 'not_equals', 'numeric_string'].includes(a.operator)) issue(`tolerance only applies to equals, not_equals and numeric_string, not ${a.operator}`, 'tolerance');
  if (a.ignore_case && !['contains', 'not_contains', 'contains_all', 'contains_any', 'regex', 'not_regex', 'starts_with', 'ends_with'].includes(a.operator)) issue(`ignore_case does not apply to ${a.operator}`, 'ignore_case');
}

/** A condition on one array element (`where` of has_element / no_element); `path` is relative to the element. */
const ConditionSchema = z
  .object({
    path: z.string().min(1).default('$'),
    operator: z.enum(P07_OPERATORS).default('equals'),
    expected: JsonSchema.optional(),
    tolerance: z.number().min(0).optional(),
    ignore_case: z.boolean().optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const issue: Issue = (message, key = 'expected') => ctx.addIssue({ code: 'custom', path: [key], message });
    if (['has_element', 'no_element', 'jwt'].includes(c.operator)) issue(`${c.operator} cannot be nested in where`, 'operator');
    checkExpected(c, issue);
  });
type Condition = z.infer<typeof ConditionSchema>;

const AssertionSchema = z
  .object({
    /** JSONPath into the subject (see `source`) */
    path: z.string().min(1).default('$'),
    /** which part of the last response: the parsed body (default), status, headers (lower-case names), text, first_line */
    source: z.enum(SOURCES).default('body'),
    /** the document `path` reads instead of the step's subject (e.g. `{{saved_response}}`); source body only */
    body: JsonSchema.optional(),
    /** which response of the chain: 0 = the last (default), 1 = the one before it, … */
    response: z.number().int().min(0).optional(),
    /** paths tried in order when `path` matches nothing */
    or_paths: z.array(z.string().min(1)).min(1).optional(),
    /** what the operator sees: the first match, the list of all matches, each match (all must pass) or any match */
    matches: z.enum(['first', 'list', 'each', 'any']).default('first'),
    operator: z.enum(P07_OPERATORS).default('equals'),
    expected: JsonSchema.optional(),
    /** compare with the first match of this path (in expected_body, else the same document) instead of `expected` */
    expected_path: z.string().min(1).optional(),
    expected_body: JsonSchema.optional(),
    /** read expected_path in that earlier response of the chain (same source) instead */
    expected_response: z.number().int().min(0).optional(),
    tolerance: z.number().min(0).optional(),
    ignore_case: z.boolean().optional(),
    /** read numeric strings (`"42"`, `"1.50"`) as numbers before comparing */
    as_number: z.boolean().optional(),
    /** read each value as its JSON text (a string stays as it is) before comparing, e.g. a regex over a list of messages */
    stringify: z.boolean().optional(),
    /** the assertion passes when the path matches nothing or matches null */
    optional: z.boolean().optional(),
    /** the assertion also passes when the last response's status is one of these */
    or_status: z.array(z.number().int().min(100).max(599)).min(1).optional(),
    /** has_element / no_element: conditions one element must satisfy */
    where: z.array(ConditionSchema).min(1).optional(),
    /** store the value (or, for has_element, the matching element) in a chain variable, exported to dependents */
    capture_as: VarName.optional(),
    /** JSONPath inside the captured value (e.g. `$.id` of the found element) */
    capture_path: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const issue: Issue = (message, key = 'expected') => ctx.addIssue({ code: 'custom', path: [key], message });
    checkExpected(a, issue);
    const element = a.operator === 'has_element' || a.operator === 'no_element';
    if (element !== (a.where !== undefined)) issue(element ? `${a.operator} needs where` : 'where only applies to has_element and no_element', 'where');
    if (a.source !== 'body' && a.body !== undefined) issue('body only applies to source body', 'body');
    if (a.expected_body !== undefined && a.expected_path === undefined) issue('expected_body needs expected_path', 'expected_body');
    if (a.expected_response !== undefined && (a.expected_path === undefined || a.expected_body !== undefined)) issue('expected_response needs expected_path (and no expected_body)', 'expected_response');
    if (a.response !== undefined && a.body !== undefined) issue('give body or response, not both', 'response');
    if (a.capture_path !== undefined && a.capture_as === undefined) issue('capture_path needs capture_as', 'capture_path');
    if (a.capture_as !== undefined && a.matches !== 'first') issue('capture_as needs matches "first"', 'capture_as');
    if (a.as_number && a.stringify) issue('as_number and stringify exclude each other', 'stringify');
  });
type Assertion = z.infer<typeof AssertionSchema>;

export const P07Schema = z
  .object({
    /** all must pass (or min_passing of them); an empty list checks nothing and passes */
    assertions: z.array(AssertionSchema),
    /** at least one of these must pass as well */
    any_of: z.array(AssertionSchema).min(1).optional(),
    min_passing: z.number().int().min(0).optional(),
    /** an empty match passes its assertion */
    allow_empty: z.boolean().default(false),
    /** an empty response body passes the step (nothing to assert on) */
    allow_empty_body: z.boolean().default(false),
    /** a response body that is not JSON passes the step (nothing to assert on) */
    allow_non_json: z.boolean().default(false),
    /** the subject is JSON text (e.g. a command's stdout): parse it before the paths apply */
    parse_json: z.boolean().default(false),
    body: JsonSchema.optional(),
  })
  .strict()
  .refine((v) => v.min_passing === undefined || v.min_passing <= v.assertions.length, {
    message: 'min_passing exceeds the number of assertions',
    path: ['min_passing'],
  });
type Input = z.infer<typeof P07Schema>;

interface AssertionVerdict { path: string; source: string; operator: Operator; passed: boolean; matches: number; actual?: unknown; reason: string }
interface Env { subject: unknown; ctx: PrimitiveContext; allowEmpty: boolean }

function firstMatch(doc: unknown, path: string): { found: boolean; value?: unknown } {
  const m = queryJsonPath(doc, path);
  return m.length ? { found: true, value: m[0] } : { found: false };
}

const numeric = (v: unknown) => (typeof v === 'string' ? asNumeric(v) ?? v : v);

function conditionHolds(c: Condition, element: unknown): boolean {
  const m = firstMatch(element, c.path);
  if (!m.found) return PASS_ON_NO_MATCH.includes(c.operator);
  return applyOperator(c.operator, m.value, c.expected, { tolerance: c.tolerance, ignoreCase: c.ignore_case }).passed;
}

function evaluate(a: Assertion, env: Env, capture: Record<string, Json>): AssertionVerdict {
  const base = { path: a.path, source: a.source, operator: a.operator };
  const read = (back: number | undefined): { doc: unknown } | { missing: string } => {
    if (back !== undefined && back > 0) {
      const r = responseAt(env.ctx.state, back);
      if (!r) return { missing: `this chain has no response ${back} before the last` };
      if (a.source === 'body') return { doc: r.body };
      const v = sourceValue(a.source, r);
      return 'missing' in v ? v : { doc: v.value };
    }
    if (a.source === 'body') return { doc: a.body !== undefined ? a.body : env.subject };
    const v = sourceValue(a.source, env.ctx.state.last);
    return 'missing' in v ? v : { doc: v.value };
  };
  const subj = read(a.response);
  if ('missing' in subj) return { ...base, passed: false, matches: 0, reason: subj.missing };
  const doc = subj.doc;
  let matches = queryJsonPath(doc, a.path);
  let usedPath = a.path;
  for (const alt of a.or_paths ?? []) {
    if (matches.length) break;
    matches = queryJsonPath(doc, alt);
    usedPath = alt;
  }
  const at = { ...base, path: usedPath, matches: matches.length };
  if (a.as_number) matches = matches.map(numeric);
  if (a.stringify) matches = matches.map((m) => (typeof m === 'string' ? m : JSON.stringify(m) ?? ''));
  if (matches.length === 0 && a.matches !== 'list') {
    if (a.optional) return { ...at, passed: true, reason: 'no match (optional)' };
    const st = env.ctx.state.last?.status;
    if (a.or_status && st !== undefined && a.or_status.includes(st)) return { ...at, passed: true, reason: `no match; status ${st} (or_status)` };
    if (env.allowEmpty) return { ...at, passed: true, reason: 'no match (allow_empty)' };
    if (PASS_ON_NO_MATCH.includes(a.operator)) return { ...at, passed: true, reason: 'no match' };
    return { ...at, passed: false, reason: 'path matched nothing' };
  }
  let expected: unknown = a.expected;
  if (a.expected_path !== undefined) {
    let edoc: unknown = doc;
    if (a.expected_body !== undefined) edoc = a.expected_body;
    else if (a.expected_response !== undefined) {
      const r = read(a.expected_response);
      if ('missing' in r) return { ...at, passed: false, reason: r.missing };
      edoc = r.doc;
    }
    const e = firstMatch(edoc, a.expected_path);
    if (!e.found) return { ...at, passed: false, reason: `expected_path ${a.expected_path} matched nothing` };
    expected = a.as_number ? numeric(e.value) : e.value;
  }
  let found: unknown;
  const opts = {
    tolerance: a.tolerance,
    ignoreCase: a.ignore_case,
    elementMatches: (x: unknown) => {
      const ok = (a.where ?? []).every((c) => conditionHolds(c, x));
      if (ok && found === undefined) found = x;
      return ok;
    },
  };
  const one = (v: unknown): Verdict => applyOperator(a.operator, v, expected, opts);
  let r: Verdict;
  let actual: unknown = matches[0];
  if (a.matches === 'list') r = one((actual = matches));
  else if (a.matches === 'each') {
    const bad = matches.map((m, i) => ({ i, v: one(m) })).filter((x) => !x.v.passed);
    r = bad.length ? { passed: false, reason: `match ${bad[0].i} (${show(matches[bad[0].i], 60)}) fails${bad[0].v.reason ? `: ${bad[0].v.reason}` : ''}; ${bad.length}/${matches.length} fail` } : { passed: true };
    actual = matches;
  } else if (a.matches === 'any') {
    r = matches.some((m) => one(m).passed) ? { passed: true } : { passed: false, reason: `none of ${matches.length} match(es) passes` };
    actual = matches;
  } else r = one(actual);
  if (!r.passed && a.optional && (actual === null || actual === undefined)) return { ...at, actual, passed: true, reason: 'null (optional)' };
  const status = env.ctx.state.last?.status;
  if (!r.passed && a.or_status && status !== undefined && a.or_status.includes(status)) return { ...at, actual, passed: true, reason: `status ${status} (or_status)` };
  const want = expected === undefined ? '' : ` ${show(expected, 120)}`;
  const verdict = { ...at, actual, passed: r.passed, reason: r.reason && !r.passed ? r.reason : `${show(actual, 120)} ${r.passed ? '' : 'not '}${a.operator}${want}` };
  if (verdict.passed && a.capture_as) {
    const from = a.operator === 'has_element' ? found : actual;
    const v = a.capture_path ? firstMatch(from, a.capture_path) : { found: from !== undefined, value: from };
    if (!v.found || v.value === undefined) return { ...verdict, passed: false, reason: `capture_as ${a.capture_as}: ${a.capture_path ?? 'the value'} matched nothing` };
    capture[a.capture_as] = v.value as Json;
  }
  return verdict;
}

function subjectOf(input: Input, ctx: PrimitiveContext): { body: unknown; source: string } | { stop: { passed: boolean; message: string } } {
  const s = subjectBody(input, ctx);
  if (!s) {
    const needsBody = [...input.assertions, ...(input.any_of ?? [])].some((a) => a.source === 'body' && a.body === undefined);
    return needsBody ? { stop: { passed: false, message: NO_RESPONSE } } : { body: undefined, source: 'none' };
  }
  if (input.allow_empty_body && isEmptyBody(s.body)) return { stop: { passed: true, message: 'the body is empty (allow_empty_body): nothing to assert' } };
  if (input.allow_non_json && s.source === 'last_response' && isRawText(s.body, ctx.state.last)) {
    return { stop: { passed: true, message: `the body is not JSON (allow_non_json): nothing to assert; body ${show(s.body, 120)}` } };
  }
  if (input.parse_json && typeof s.body === 'string') {
    try {
      return { body: JSON.parse(s.body) as unknown, source: s.source };
    } catch {
      return { stop: { passed: false, message: `parse_json: the subject is not JSON text: ${show(s.body, 200)}` } };
    }
  }
  return s;
}

/**
 * P07: assertions on the chain's last response (body by JSONPath, status, headers, text) or on a
 * `body` input. Passes when at least min_passing (default: all) `assertions` pass and, when
 * `any_of` is given, at least one of those. An empty match fails the assertion (absent/not_exists
 * pass) unless `optional` or allow_empty. `capture_as` values are set only when the step passes.
 */
export const P07 = definePrimitive({
  id: 'P07',
  name: 'json_value_assert',
  schema: P07Schema,
  produces: (i) => {
    const names = [i.assertions, i.any_of].flatMap((l) => (Array.isArray(l) ? l : []))
      .map((a) => (a && typeof a === 'object' ? (a as { capture_as?: unknown }).capture_as : undefined))
      .filter((n): n is string => typeof n === 'string');
    return { exported: names, local: [] };
  },
  async run(input, ctx) {
    if (input.assertions.length === 0 && !input.any_of) return { passed: true, message: 'no assertions: nothing to check', data: { passing: 0, required: 0, assertions: [] } };
    const s = subjectOf(input, ctx);
    if ('stop' in s) return s.stop;
    const env: Env = { subject: s.body, ctx, allowEmpty: input.allow_empty };
    const captured: Record<string, Json> = {};
    const verdicts = input.assertions.map((a) => evaluate(a, env, captured));
    const anyOf = (input.any_of ?? []).map((a) => evaluate(a, env, captured));
    const ok = verdicts.filter((v) => v.passed).length;
    const need = input.min_passing ?? input.assertions.length;
    const anyOk = !input.any_of || anyOf.some((v) => v.passed);
    const passed = ok >= need && anyOk;
    if (passed) for (const [k, v] of Object.entries(captured)) ctx.setVar(k, v);
    const failed = verdicts.filter((v) => !v.passed).map((v) => `${v.source === 'body' ? '' : `${v.source} `}${v.path}: ${v.reason}`);
    const anyMsg = input.any_of ? `; any_of ${anyOf.filter((v) => v.passed).length}/${anyOf.length} passed${anyOk ? '' : ` (${anyOf.map((v) => `${v.path}: ${v.reason}`).join('; ')})`}` : '';
    return {
      passed,
      message: `${ok}/${verdicts.length} assertion(s) passed (need ${need})${anyMsg}${failed.length ? `; ${failed.join('; ')}` : ''}`,
      data: { source: s.source, passing: ok, required: need, assertions: verdicts, ...(input.any_of ? { any_of: anyOf } : {}), ...(passed && Object.keys(captured).length ? { captured: Object.keys(captured) } : {}) },
    };
  },
});
