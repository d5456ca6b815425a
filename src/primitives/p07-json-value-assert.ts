import { z } from 'zod';
import { JsonSchema } from '../json';
import { deepEqual, isPlainObject, isSubset, jsonType, show } from './compare';
import { queryJsonPath } from './jsonpath';
import { NO_RESPONSE, subjectBody } from './response';
import { definePrimitive } from './types';

export const P07_OPERATORS = [
  'equals', 'not_equals', 'exists', 'not_exists', 'contains', 'not_contains',
  'gt', 'gte', 'lt', 'lte', 'regex', 'length', 'is_type', 'in',
] as const;
type Operator = (typeof P07_OPERATORS)[number];
const JSON_TYPES = ['array', 'object', 'string', 'number', 'boolean', 'null'] as const;

const AssertionSchema = z
  .object({
    path: z.string().min(1).default('$'),
    operator: z.enum(P07_OPERATORS).default('equals'),
    expected: JsonSchema.optional(),
    tolerance: z.number().min(0).optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const issue = (message: string, key = 'expected') => ctx.addIssue({ code: 'custom', path: [key], message });
    const e = a.expected;
    if (a.tolerance !== undefined && a.operator !== 'equals' && a.operator !== 'not_equals') issue(`tolerance only applies to equals/not_equals, not ${a.operator}`, 'tolerance');
    switch (a.operator) {
      case 'exists':
      case 'not_exists':
        if (e !== undefined) issue(`${a.operator} takes no expected value`);
        return;
      case 'gt': case 'gte': case 'lt': case 'lte':
        if (typeof e !== 'number') issue(`${a.operator} needs a number`);
        return;
      case 'length':
        if (typeof e !== 'number' || !Number.isInteger(e) || e < 0) issue('length needs a non-negative integer');
        return;
      case 'regex':
        if (typeof e !== 'string') return issue('regex needs a string pattern');
        try { new RegExp(e); } catch (err) { issue(`invalid regex: ${(err as Error).message}`); }
        return;
      case 'is_type':
        if (typeof e !== 'string' || !(JSON_TYPES as readonly string[]).includes(e)) issue(`is_type needs one of ${JSON_TYPES.join(', ')}`);
        return;
      case 'in':
        if (!Array.isArray(e)) issue('in needs an array of allowed values');
        return;
      default:
        if (e === undefined) issue(`${a.operator} needs an expected value`);
    }
  });
type Assertion = z.infer<typeof AssertionSchema>;

export const P07Schema = z
  .object({
    assertions: z.array(AssertionSchema).min(1),
    min_passing: z.number().int().min(0).optional(),
    allow_empty: z.boolean().default(false),
    body: JsonSchema.optional(),
  })
  .strict()
  .refine((v) => v.min_passing === undefined || v.min_passing <= v.assertions.length, {
    message: 'min_passing exceeds the number of assertions',
    path: ['min_passing'],
  });

interface Verdict { path: string; operator: Operator; passed: boolean; matches: number; actual?: unknown; reason: string }

/** Evaluate one operator against the first JSONPath match. */
export function applyOperator(op: Operator, actual: unknown, expected: unknown, tolerance?: number): { passed: boolean; reason?: string } {
  const num = (f: (a: number, b: number) => boolean) =>
    typeof actual === 'number' ? { passed: f(actual, expected as number) } : { passed: false, reason: `${op} needs a number, got ${jsonType(actual)}` };
  switch (op) {
    case 'exists': return { passed: actual !== null && actual !== undefined };
    case 'not_exists': return { passed: actual === null || actual === undefined };
    case 'equals':
    case 'not_equals': {
      const eq = tolerance !== undefined && typeof actual === 'number' && typeof expected === 'number'
        ? Math.abs(actual - expected) <= tolerance
        : deepEqual(actual, expected);
      return { passed: op === 'equals' ? eq : !eq };
    }
    case 'contains':
    case 'not_contains': {
      const c = contains(actual, expected);
      if (typeof c === 'string') return { passed: false, reason: c };
      return { passed: op === 'contains' ? c : !c };
    }
    case 'gt': return num((a, b) => a > b);
    case 'gte': return num((a, b) => a >= b);
    case 'lt': return num((a, b) => a < b);
    case 'lte': return num((a, b) => a <= b);
    case 'regex':
      return typeof actual === 'string' ? { passed: new RegExp(expected as string).test(actual) } : { passed: false, reason: `regex needs a string, got ${jsonType(actual)}` };
    case 'length':
      return typeof actual === 'string' || Array.isArray(actual) ? { passed: actual.length === expected } : { passed: false, reason: `length needs a string or array, got ${jsonType(actual)}` };
    case 'is_type': return { passed: jsonType(actual) === expected };
    case 'in': return { passed: (expected as unknown[]).some((x) => deepEqual(actual, x)) };
  }
}

/** true/false, or a reason string when the operand types cannot be compared. */
function contains(actual: unknown, expected: unknown): boolean | string {
  if (typeof actual === 'string') return typeof expected === 'string' ? actual.includes(expected) : `contains on a string needs a string, got ${jsonType(expected)}`;
  if (Array.isArray(actual)) return actual.some((x) => deepEqual(x, expected));
  if (isPlainObject(actual)) return isPlainObject(expected) ? isSubset(actual, expected) : `contains on an object needs an object (subset), got ${jsonType(expected)}`;
  return `contains needs a string, array or object, got ${jsonType(actual)}`;
}

function check(a: Assertion, body: unknown, allowEmpty: boolean): Verdict {
  const matches = queryJsonPath(body, a.path);
  const base = { path: a.path, operator: a.operator, matches: matches.length };
  if (matches.length === 0) {
    if (allowEmpty) return { ...base, passed: true, reason: 'no match (allow_empty)' };
    if (a.operator === 'not_exists') return { ...base, passed: true, reason: 'no match' };
    return { ...base, passed: false, reason: 'path matched nothing' };
  }
  const actual = matches[0];
  const r = applyOperator(a.operator, actual, a.expected, a.tolerance);
  const want = a.expected === undefined ? '' : ` ${show(a.expected, 120)}`;
  return { ...base, actual, passed: r.passed, reason: r.reason ?? `${show(actual, 120)} ${r.passed ? '' : 'not '}${a.operator}${want}` };
}

/**
 * P07: JSONPath assertions on `body` or the last response body, each on the path's first match.
 * Passes when at least min_passing (default: all) assertions pass. An empty match fails the
 * assertion (not_exists passes) unless allow_empty.
 */
export const P07 = definePrimitive({
  id: 'P07',
  name: 'json_value_assert',
  schema: P07Schema,
  async run(input, ctx) {
    const subject = subjectBody(input, ctx);
    if (!subject) return { passed: false, message: NO_RESPONSE };
    const verdicts = input.assertions.map((a) => check(a, subject.body, input.allow_empty));
    const ok = verdicts.filter((v) => v.passed).length;
    const need = input.min_passing ?? input.assertions.length;
    const passed = ok >= need;
    const failed = verdicts.filter((v) => !v.passed).map((v) => `${v.path}: ${v.reason}`);
    return {
      passed,
      message: `${ok}/${verdicts.length} assertion(s) passed (need ${need})${failed.length ? `; ${failed.join('; ')}` : ''}`,
      data: { source: subject.source, passing: ok, required: need, assertions: verdicts },
    };
  },
});
