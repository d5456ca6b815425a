import { asNumeric, deepEqual, isPlainObject, isSubset, jsonType, show } from './compare';
import { checkJwt, type JwtExpectation } from './p07-jwt';

/**
 * P07's operators: one value (the path's match, or the list of matches) against `expected`.
 * Strict by design (docs/primitives.md#p07-json_value_assert): no case folding, no type coercion
 * unless the assertion asks for it (`as_number`, `numeric_string`).
 */
export const P07_OPERATORS = [
  'equals', 'not_equals', 'exists', 'not_exists', 'absent', 'contains', 'not_contains', 'contains_all',
  'gt', 'gte', 'lt', 'lte', 'regex', 'not_regex', 'starts_with', 'ends_with', 'length', 'min_length', 'max_length',
  'empty', 'not_empty', 'is_type', 'in', 'not_in', 'numeric_string', 'is_json', 'sorted', 'has_element', 'no_element',
  'has_keys', 'has_exactly_keys', 'has_any_key', 'contains_any', 'seconds_from_now', 'jwt',
] as const;
export type Operator = (typeof P07_OPERATORS)[number];

export const JSON_TYPES = ['array', 'object', 'string', 'number', 'integer', 'boolean', 'null'] as const;

/** Operators that take no `expected` (and no `expected_path`). */
export const NO_EXPECTED: readonly Operator[] = ['exists', 'not_exists', 'absent', 'empty', 'not_empty', 'is_json', 'has_element', 'no_element'];
/** Operators whose verdict on "nothing matched" is a pass (the value is not there). */
export const PASS_ON_NO_MATCH: readonly Operator[] = ['not_exists', 'absent'];

export interface OperatorOptions {
  tolerance?: number;
  ignoreCase?: boolean;
  /** has_element / no_element: does one array element satisfy the conditions? */
  elementMatches?: (element: unknown) => boolean;
}

export type Verdict = { passed: boolean; reason?: string };

/** Why `expected` does not fit `op` (a schema error), or undefined when it fits. */
export function expectedProblem(op: Operator, e: unknown, hasExpected: boolean): string | undefined {
  if (NO_EXPECTED.includes(op)) return hasExpected ? `${op} takes no expected value` : undefined;
  if (!hasExpected) return op === 'numeric_string' || op === 'jwt' ? undefined : `${op} needs an expected value`;
  switch (op) {
    case 'gt': case 'gte': case 'lt': case 'lte':
      return typeof e === 'number' ? undefined : `${op} needs a number`;
    case 'length': case 'min_length': case 'max_length':
      return typeof e === 'number' && Number.isInteger(e) && e >= 0 ? undefined : `${op} needs a non-negative integer`;
    case 'regex': case 'not_regex':
      if (typeof e !== 'string') return `${op} needs a string pattern`;
      try { new RegExp(e); } catch (err) { return `invalid regex: ${(err as Error).message}`; }
      return undefined;
    case 'starts_with': case 'ends_with':
      return typeof e === 'string' ? undefined : `${op} needs a string`;
    case 'is_type': {
      const list = Array.isArray(e) ? e : [e];
      return list.length > 0 && list.every((t) => typeof t === 'string' && (JSON_TYPES as readonly string[]).includes(t))
        ? undefined : `is_type needs one of ${JSON_TYPES.join(', ')} (or a list of them)`;
    }
    case 'in': case 'not_in': case 'contains_all':
      return Array.isArray(e) ? undefined : `${op} needs an array`;
    case 'contains_any':
      return Array.isArray(e) && e.length > 0 ? undefined : 'contains_any needs a non-empty array';
    case 'seconds_from_now':
      return Array.isArray(e) && e.length === 2 && e.every((x) => typeof x === 'number') && (e[0] as number) <= (e[1] as number) ? undefined : 'seconds_from_now needs [min, max] seconds';
    case 'has_keys': case 'has_exactly_keys': case 'has_any_key':
      return Array.isArray(e) && e.every((k) => typeof k === 'string') ? undefined : `${op} needs an array of key names`;
    case 'numeric_string':
      return typeof e === 'number' ? undefined : 'numeric_string compares with a number';
    case 'sorted':
      return isPlainObject(e) && (e.order === 'asc' || e.order === 'desc') && (e.by === undefined || typeof e.by === 'string') && Object.keys(e).every((k) => k === 'by' || k === 'order')
        ? undefined : 'sorted needs {order: "asc"|"desc", by?: "<key>"}';
    case 'jwt':
      return isPlainObject(e) ? undefined : 'jwt needs {algorithm?, claims?, secret?}';
    default:
      return undefined;
  }
}

export function applyOperator(op: Operator, actual: unknown, expected: unknown, o: OperatorOptions = {}): Verdict {
  const num = (f: (a: number, b: number) => boolean): Verdict =>
    typeof actual === 'number' ? { passed: f(actual, expected as number) } : { passed: false, reason: `${op} needs a number, got ${jsonType(actual)}` };
  const str = (f: (a: string) => boolean): Verdict =>
    typeof actual === 'string' ? { passed: f(actual) } : { passed: false, reason: `${op} needs a string, got ${jsonType(actual)}` };
  const fold = (s: string) => (o.ignoreCase ? s.toLowerCase() : s);
  switch (op) {
    case 'exists': return { passed: actual !== null && actual !== undefined };
    case 'not_exists': return { passed: actual === null || actual === undefined };
    case 'absent': return { passed: actual === undefined, reason: actual === undefined ? undefined : 'the path is present' };
    case 'equals':
    case 'not_equals': {
      const eq = o.tolerance !== undefined && typeof actual === 'number' && typeof expected === 'number'
        ? Math.abs(actual - expected) <= o.tolerance
        : deepEqual(actual, expected);
      return { passed: op === 'equals' ? eq : !eq };
    }
    case 'contains':
    case 'not_contains': {
      const c = contains(actual, expected, o.ignoreCase);
      if (typeof c === 'string') return { passed: false, reason: c };
      return { passed: op === 'contains' ? c : !c };
    }
    case 'contains_any': {
      const cs = (expected as unknown[]).map((x) => contains(actual, x, o.ignoreCase));
      const bad = cs.find((c) => typeof c === 'string');
      if (bad !== undefined) return { passed: false, reason: bad as string };
      return { passed: cs.some((c) => c === true), reason: `contains none of ${show(expected, 80)}` };
    }
    case 'contains_all': {
      for (const x of expected as unknown[]) {
        const c = contains(actual, x, o.ignoreCase);
        if (typeof c === 'string') return { passed: false, reason: c };
        if (!c) return { passed: false, reason: `missing ${show(x, 80)}` };
      }
      return { passed: true };
    }
    case 'gt': return num((a, b) => a > b);
    case 'gte': return num((a, b) => a >= b);
    case 'lt': return num((a, b) => a < b);
    case 'lte': return num((a, b) => a <= b);
    case 'regex': return str((a) => new RegExp(expected as string, o.ignoreCase ? 'i' : '').test(a));
    case 'not_regex': return str((a) => !new RegExp(expected as string, o.ignoreCase ? 'i' : '').test(a));
    case 'starts_with': return str((a) => fold(a).startsWith(fold(expected as string)));
    case 'ends_with': return str((a) => fold(a).endsWith(fold(expected as string)));
    case 'length':
    case 'min_length':
    case 'max_length': {
      if (typeof actual !== 'string' && !Array.isArray(actual) && !isPlainObject(actual)) return { passed: false, reason: `${op} needs a string, array or object, got ${jsonType(actual)}` };
      // an object's length is its number of keys
      const n = isPlainObject(actual) ? Object.keys(actual).length : actual.length;
      const e = expected as number;
      return { passed: op === 'length' ? n === e : op === 'min_length' ? n >= e : n <= e, reason: `length ${n}` };
    }
    case 'empty':
    case 'not_empty': {
      const empty = actual === null || actual === undefined || actual === '' || (Array.isArray(actual) && actual.length === 0) || (isPlainObject(actual) && Object.keys(actual).length === 0);
      return { passed: op === 'empty' ? empty : !empty };
    }
    case 'is_type': {
      const want = (Array.isArray(expected) ? expected : [expected]) as string[];
      const t = jsonType(actual);
      return { passed: want.includes(t) || (want.includes('integer') && typeof actual === 'number' && Number.isInteger(actual)), reason: `type ${t}` };
    }
    case 'in': return { passed: (expected as unknown[]).some((x) => deepEqual(actual, x)) };
    case 'not_in': return { passed: !(expected as unknown[]).some((x) => deepEqual(actual, x)) };
    case 'numeric_string': {
      if (typeof actual !== 'string') return { passed: false, reason: `numeric_string needs a string, got ${jsonType(actual)}` };
      const n = asNumeric(actual);
      if (n === undefined) return { passed: false, reason: `${show(actual, 60)} is not a decimal number` };
      if (expected === undefined) return { passed: true };
      return { passed: Math.abs(n - (expected as number)) <= (o.tolerance ?? 0) };
    }
    case 'is_json':
      if (Array.isArray(actual) || isPlainObject(actual)) return { passed: true };
      if (typeof actual !== 'string') return { passed: false, reason: `is_json needs an object, array or JSON text, got ${jsonType(actual)}` };
      try { JSON.parse(actual); return { passed: true }; } catch { return { passed: false, reason: 'not JSON text' }; }
    case 'sorted': return sorted(actual, expected as { by?: string; order: 'asc' | 'desc' });
    case 'has_element':
    case 'no_element': {
      if (!Array.isArray(actual)) return { passed: false, reason: `${op} needs an array, got ${jsonType(actual)}` };
      const found = actual.some((x) => o.elementMatches?.(x) ?? false);
      return { passed: op === 'has_element' ? found : !found, reason: found ? 'an element matches' : 'no element matches' };
    }
    case 'seconds_from_now': {
      const t = typeof actual === 'number' ? (actual > 1e12 ? actual / 1000 : actual) : typeof actual === 'string' && /^\d{4}-\d{2}-\d{2}/.test(actual) ? Date.parse(actual) / 1000 : NaN;
      if (!Number.isFinite(t)) return { passed: false, reason: `seconds_from_now needs a date (ISO text or epoch), got ${show(actual, 60)}` };
      const d = t - Date.now() / 1000;
      const [lo, hi] = expected as [number, number];
      return { passed: d >= lo && d <= hi, reason: `${Math.round(d)} s from now, expected [${lo}, ${hi}]` };
    }
    case 'has_keys':
    case 'has_exactly_keys':
    case 'has_any_key': {
      if (!isPlainObject(actual)) return { passed: false, reason: `${op} needs an object, got ${jsonType(actual)}` };
      const keys = Object.keys(actual);
      const want = expected as string[];
      if (op === 'has_any_key') return { passed: want.some((k) => keys.includes(k)), reason: `none of [${want.join(', ')}] among [${keys.join(', ')}]` };
      const missing = want.filter((k) => !keys.includes(k));
      const extra = op === 'has_exactly_keys' ? keys.filter((k) => !want.includes(k)) : [];
      return { passed: missing.length === 0 && extra.length === 0, reason: `missing [${missing.join(', ')}]${extra.length ? ` extra [${extra.join(', ')}]` : ''}` };
    }
    case 'jwt': return checkJwt(actual, (expected ?? {}) as JwtExpectation);
  }
}

/** true/false, or a reason string when the operand types cannot be compared. */
function contains(actual: unknown, expected: unknown, ignoreCase?: boolean): boolean | string {
  if (typeof actual === 'string') {
    if (typeof expected !== 'string') return `contains on a string needs a string, got ${jsonType(expected)}`;
    return ignoreCase ? actual.toLowerCase().includes(expected.toLowerCase()) : actual.includes(expected);
  }
  if (Array.isArray(actual)) return actual.some((x) => deepEqual(x, expected));
  if (isPlainObject(actual)) return isPlainObject(expected) ? isSubset(actual, expected) : `contains on an object needs an object (subset), got ${jsonType(expected)}`;
  return `contains needs a string, array or object, got ${jsonType(actual)}`;
}

function sorted(actual: unknown, e: { by?: string; order: 'asc' | 'desc' }): Verdict {
  if (!Array.isArray(actual)) return { passed: false, reason: `sorted needs an array, got ${jsonType(actual)}` };
  const keys = actual.map((x) => (e.by === undefined ? x : isPlainObject(x) ? x[e.by] : undefined));
  const kind = typeof keys[0];
  if (keys.some((k) => (typeof k !== 'number' && typeof k !== 'string') || typeof k !== kind)) {
    return { passed: false, reason: `sorted needs ${e.by ? `"${e.by}" values` : 'elements'} that are all numbers or all strings` };
  }
  for (let i = 1; i < keys.length; i++) {
    const a = keys[i - 1] as number | string;
    const b = keys[i] as number | string;
    if (e.order === 'asc' ? a > b : a < b) return { passed: false, reason: `element ${i} (${show(b, 40)}) is out of ${e.order} order after ${show(a, 40)}` };
  }
  return { passed: true };
}
