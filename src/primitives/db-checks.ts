import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { asNumeric, deepEqual, isPlainObject, jsonType, show } from './compare';
import { queryJsonPath } from './jsonpath';

/**
 * Checks on a query result (P08), shared by SQL and MongoDB. A check reads one value — a column
 * of the result rows (`field`), a JSONPath into the result body `{rows, row_count, affected_rows?,
 * value?}` (`path`), or, with neither, the first column of the first row — and applies one
 * operator. Values compare as SQL values (see dbEqual): a number equals a numeric string, a
 * boolean equals 1/0 (MySQL has no boolean type).
 */
export const CHECK_OPS = [
  'equals', 'not_equals', 'gt', 'gte', 'lt', 'lte',
  'exists', 'not_exists', 'not_null', 'is_null',
  'contains', 'not_contains', 'contains_all', 'contains_any', 'in', 'regex', 'starts_with', 'min_length', 'length',
  'is_type', 'seconds_from_now_between',
] as const;
const TYPES = ['array', 'object', 'string', 'number', 'integer', 'boolean', 'null'];
export type CheckOp = (typeof CHECK_OPS)[number];
const NULLARY: readonly CheckOp[] = ['exists', 'not_exists', 'not_null', 'is_null'];
const NUMERIC: readonly CheckOp[] = ['gt', 'gte', 'lt', 'lte'];

const validRegex = (s: string) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
};

export const RowCheckSchema = z
  .object({
    /** a result column; default: the first column */
    field: z.string().min(1).optional(),
    /** a JSONPath into the result body {rows, row_count, affected_rows, value} */
    path: z.string().min(1).optional(),
    /** field checks: the first row (default), every row, or at least one row */
    rows: z.enum(['first', 'all', 'any']).optional(),
    /** path checks: the first match (default), the list of all matches, or each match on its own (none → fail) */
    match: z.enum(['first', 'all', 'each']).optional(),
    operator: z.enum(CHECK_OPS),
    expected: JsonSchema.optional(),
    /** equals/not_equals: numbers within this distance are equal */
    tolerance: z.number().min(0).optional(),
    /** regex: case-insensitive */
    ignore_case: z.boolean().optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const issue = (message: string, key = 'expected') => ctx.addIssue({ code: 'custom', path: [key], message });
    if (a.field !== undefined && a.path !== undefined) issue('give field or path, not both', 'path');
    if (a.rows !== undefined && a.path !== undefined) issue('rows applies to field checks', 'rows');
    if (a.match !== undefined && a.path === undefined) issue('match applies to path checks', 'match');
    if (a.tolerance !== undefined && a.operator !== 'equals' && a.operator !== 'not_equals') issue(`tolerance applies to equals/not_equals, not ${a.operator}`, 'tolerance');
    const e = a.expected;
    if (NULLARY.includes(a.operator)) {
      if (e !== undefined) issue(`${a.operator} takes no expected value`);
      return;
    }
    if (e === undefined) return issue(`${a.operator} needs an expected value`);
    if (NUMERIC.includes(a.operator) && asNumeric(e) === undefined) issue(`${a.operator} needs a number`);
    if ((a.operator === 'min_length' || a.operator === 'length') && !(Number.isInteger(e) && (e as number) >= 0)) issue(`${a.operator} needs a non-negative integer`);
    if ((a.operator === 'in' || a.operator === 'contains_all' || a.operator === 'contains_any') && !Array.isArray(e)) issue(`${a.operator} needs an array`);
    if (a.operator === 'is_type' && !TYPES.includes(e as string)) issue(`is_type needs one of ${TYPES.join(', ')}`);
    if (a.operator === 'seconds_from_now_between' && !(Array.isArray(e) && e.length === 2 && e.every((x) => typeof x === 'number'))) issue('seconds_from_now_between needs [low, high] seconds');
    if ((a.operator === 'regex' || a.operator === 'starts_with') && typeof e !== 'string') issue(`${a.operator} needs a string`);
    if (a.operator === 'regex' && typeof e === 'string' && !validRegex(e)) issue('invalid regular expression');
  });
export type RowCheck = z.infer<typeof RowCheckSchema>;

/** SQL value equality: numbers and numeric strings compare as numbers; true/false equal 1/0; else strict JSON equality. */
export function dbEqual(actual: unknown, expected: unknown, tolerance?: number): boolean {
  if (typeof expected === 'boolean' && typeof actual !== 'boolean') {
    const n = asNumeric(actual);
    return n !== undefined && n === (expected ? 1 : 0);
  }
  const a = asNumeric(actual);
  const e = asNumeric(expected);
  if ((typeof actual === 'number' || typeof expected === 'number') && a !== undefined && e !== undefined) {
    return tolerance !== undefined ? Math.abs(a - e) <= tolerance : a === e;
  }
  if (typeof actual === 'number' || typeof expected === 'number') return false;
  return deepEqual(actual, expected);
}

/** Does `actual` satisfy `op expected`? A reason comes back when it does not. */
export function applyCheck(op: CheckOp, actual: unknown, expected: unknown, o: { tolerance?: number; ignoreCase?: boolean } = {}): { ok: boolean; why?: string } {
  const num = (f: (a: number, b: number) => boolean) => {
    const a = asNumeric(actual);
    if (a === undefined) return { ok: false, why: `${show(actual)} is not a number` };
    return { ok: f(a, asNumeric(expected) as number) };
  };
  switch (op) {
    case 'exists':
    case 'not_null': return { ok: actual !== null && actual !== undefined };
    case 'not_exists':
    case 'is_null': return { ok: actual === null || actual === undefined };
    case 'equals': return { ok: dbEqual(actual, expected, o.tolerance) };
    case 'not_equals': return { ok: !dbEqual(actual, expected, o.tolerance) };
    case 'gt': return num((a, b) => a > b);
    case 'gte': return num((a, b) => a >= b);
    case 'lt': return num((a, b) => a < b);
    case 'lte': return num((a, b) => a <= b);
    case 'in': return { ok: (expected as unknown[]).some((x) => dbEqual(actual, x)) };
    case 'starts_with': return typeof actual === 'string' ? { ok: actual.startsWith(expected as string) } : { ok: false, why: `${show(actual)} is not a string` };
    case 'regex': {
      if (actual === null || actual === undefined) return { ok: false, why: 'no value' };
      const text = typeof actual === 'string' ? actual : JSON.stringify(actual);
      return { ok: new RegExp(expected as string, o.ignoreCase ? 'i' : '').test(text) };
    }
    case 'contains':
    case 'not_contains': {
      let hit: boolean;
      if (typeof actual === 'string') hit = actual.includes(typeof expected === 'string' ? expected : JSON.stringify(expected));
      else if (Array.isArray(actual)) hit = actual.some((x) => dbEqual(x, expected));
      else if (isPlainObject(actual) && isPlainObject(expected)) hit = Object.entries(expected).every(([k, v]) => dbEqual(actual[k], v));
      else return { ok: false, why: `contains needs a string, list or object, got ${jsonType(actual)}` };
      return { ok: op === 'contains' ? hit : !hit };
    }
    case 'contains_all': {
      if (!Array.isArray(actual)) return { ok: false, why: `${show(actual)} is not a list` };
      const missing = (expected as unknown[]).filter((w) => !actual.some((x) => dbEqual(x, w)));
      return missing.length ? { ok: false, why: `missing ${show(missing)}` } : { ok: true };
    }
    case 'contains_any': {
      const alts = expected as unknown[];
      const hit = typeof actual === 'string' ? alts.some((w) => actual.includes(String(w))) : Array.isArray(actual) ? alts.some((w) => actual.some((x) => dbEqual(x, w))) : undefined;
      return hit === undefined ? { ok: false, why: `${show(actual)} is not a string or list` } : { ok: hit };
    }
    case 'is_type': {
      const t = expected as string;
      // a PostgreSQL bigint arrives as a numeric string: it is an integer (and a number)
      const n = asNumeric(actual);
      if (t === 'integer') return { ok: n !== undefined && typeof actual !== 'boolean' && Number.isInteger(n) };
      if (t === 'number') return { ok: n !== undefined && typeof actual !== 'boolean' };
      return { ok: jsonType(actual) === t };
    }
    case 'seconds_from_now_between': {
      const at = typeof actual === 'string' ? Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(actual) ? actual : `${actual.replace(' ', 'T')}Z`) : NaN;
      if (Number.isNaN(at)) return { ok: false, why: `${show(actual)} is not a timestamp` };
      const d = (at - Date.now()) / 1000;
      const [lo, hi] = expected as number[];
      return d >= lo && d <= hi ? { ok: true } : { ok: false, why: `${Math.round(d)} s from now` };
    }
    case 'min_length':
    case 'length': {
      if (typeof actual !== 'string' && !Array.isArray(actual)) return { ok: false, why: `${show(actual)} has no length` };
      return { ok: op === 'length' ? actual.length === expected : actual.length >= (expected as number) };
    }
  }
}

export interface CheckSubject {
  rows: Record<string, Json>[];
  columns: string[];
  body: Record<string, Json>;
}

function describe(c: RowCheck): string {
  const target = c.path ?? c.field ?? 'first column';
  const scope = c.rows && c.rows !== 'first' ? ` (${c.rows} rows)` : c.match === 'all' ? ' (all matches)' : c.match === 'each' ? ' (each match)' : '';
  return `${target}${scope} ${c.operator}${c.expected !== undefined ? ` ${show(c.expected, 80)}` : ''}`;
}

/** Evaluate one check; undefined = passed, else the failure text. */
export function runCheck(c: RowCheck, s: CheckSubject): string | undefined {
  const opts = { tolerance: c.tolerance, ignoreCase: c.ignore_case };
  if (c.path !== undefined) {
    const matches = queryJsonPath(s.body, c.path);
    if (c.match === 'each') {
      if (matches.length === 0) return `${describe(c)}: no match`;
      const bad = matches.map((m) => ({ m, r: applyCheck(c.operator, m, c.expected, opts) })).find((x) => !x.r.ok);
      return bad ? `${describe(c)}: ${show(bad.m, 120)}${bad.r.why ? ` (${bad.r.why})` : ''}` : undefined;
    }
    const actual = c.match === 'all' ? matches : matches[0];
    const r = applyCheck(c.operator, actual, c.expected, opts);
    return r.ok ? undefined : `${describe(c)}: got ${matches.length || c.match === 'all' ? show(actual, 120) : 'no match'}${r.why ? ` (${r.why})` : ''}`;
  }
  const column = c.field ?? s.columns[0];
  if (column === undefined) return `${describe(c)}: the result has no columns`;
  const rows = c.rows === 'all' || c.rows === 'any' ? s.rows : s.rows.slice(0, 1);
  if (rows.length === 0) return `${describe(c)}: no rows`;
  const verdicts = rows.map((row) => {
    if (!Object.prototype.hasOwnProperty.call(row, column)) {
      // a missing column is "not there": only not_exists holds (Mongo documents may lack a field)
      return c.operator === 'not_exists' ? { ok: true } : { ok: false, why: `no column ${column} (columns: ${Object.keys(row).join(', ')})` };
    }
    return applyCheck(c.operator, row[column], c.expected, opts);
  });
  const ok = c.rows === 'any' ? verdicts.some((v) => v.ok) : verdicts.every((v) => v.ok);
  if (ok) return undefined;
  const bad = verdicts.findIndex((v) => !v.ok);
  const shown = rows[bad]?.[column];
  return `${describe(c)}: ${c.rows === 'any' ? 'no row matches' : `row ${bad + 1} has ${show(shown, 120)}`}${verdicts[bad]?.why ? ` (${verdicts[bad].why})` : ''}`;
}
