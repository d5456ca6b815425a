import { jsRegex } from './json-ops';
import type { DialectContext } from './types';

/**
 * The value-carrying keys of a published P07 assertion (`expected_gte`, `regex`, `type`, …) and
 * gavmyneb's `assert` form: each key read becomes one canonical check on the assertion's target.
 * json-assertion.ts owns the target and modifiers and passes in its check builder.
 */
type Canon = Record<string, unknown>;
export interface CheckBuilder {
  ctx: DialectContext;
  add(c: Canon): void;
  issue(key: string, msg: string): void;
  say(key: string, canonical: string, meaning: string): void;
  num(k: string, v: unknown): number | undefined;
  regexCheck(k: string, v: unknown, op?: string): void;
  typeCheck(k: string, v: unknown): void;
  has(k: string): boolean;
  take(k: string): unknown;
  /** the target path can match several values */
  multi: boolean;
  targetPath: string;
  pathRef(v: string, k: string): Canon;
  /** checks on the object's key names (`<path>.*~`) */
  keyChecks: Canon[];
  /** the first column the last SQL step selects (gavmyneb row checks) */
  sqlColumn?: string;
}

function pathOrValue(b: CheckBuilder, v: unknown, k: string): Canon {
  return typeof v === 'string' && /^\$[.[]/.test(v) ? b.pathRef(v, k) : { operator: 'equals', expected: v };
}

export function readValueKeys(b: CheckBuilder): void {
  const valueKeys: [string, (v: unknown, k: string) => void, string][] = [
    ['type', (v, k) => b.typeCheck(k, v), 'is_type'],
    ['_type', (v, k) => b.typeCheck(k, v), 'is_type'],
    ['expected_type', (v, k) => b.typeCheck(k, v), 'is_type'],
    ['_regex', (v, k) => b.regexCheck(k, v), 'regex'],
    ['regex', (v, k) => b.regexCheck(k, v), 'regex'],
    ['match_regex', (v, k) => b.regexCheck(k, v), 'regex'],
    ['expected_regex', (v, k) => b.regexCheck(k, v), 'regex'],
    ['expected_pattern', (v, k) => b.regexCheck(k, v), 'regex'],
    ['exists', (v, k) => (typeof v === 'boolean' ? b.add({ operator: v ? 'exists' : 'not_exists' }) : b.issue(k, `${k} must be a boolean`)), 'exists / not_exists'],
    ['expected_present', (v, k) => (typeof v === 'boolean' ? b.add({ operator: v ? 'exists' : 'not_exists' }) : b.issue(k, `${k} must be a boolean`)), 'exists / not_exists'],
    ['not_exists', (v, k) => (v === true ? b.add({ operator: 'not_exists' }) : b.issue(k, `${k} must be true`)), 'not_exists'],
    ['expected_not_null', (v, k) => (v === true ? b.add({ operator: 'exists' }) : b.issue(k, `${k} must be true`)), 'exists'],
    ['expected_not_empty', (v, k) => (v === true ? b.add({ operator: 'not_empty' }) : b.issue(k, `${k} must be true`)), 'not_empty'],
    ['expected_absent', (v, k) => (v === true ? b.add({ operator: 'absent' }) : b.issue(k, `${k} must be true`)), 'absent'],
    ['expected_absent_or_null', (v, k) => (v === true ? b.add({ operator: 'not_exists' }) : b.issue(k, `${k} must be true`)), 'not_exists'],
    ['expected_all_false_or_absent', (v, k) => (v === true ? b.add({ operator: 'equals', expected: false, matches: 'each', optional: true }) : b.issue(k, `${k} must be true`)), 'matches each equals false (none matched passes)'],
    ['contains', (v) => b.add({ operator: 'contains', expected: v, ...(b.multi ? { matches: 'list' } : {}) }), 'contains'],
    ['expected_contains', (v) => b.add({ operator: Array.isArray(v) ? 'contains_all' : 'contains', expected: v, ...(b.multi ? { matches: 'list' } : {}) }), 'contains / contains_all'],
    ['expected_not_contains', (v) => b.add({ operator: 'not_contains', expected: v, ...(b.multi ? { matches: 'list' } : {}) }), 'not_contains'],
    ['must_not_contain', (v) => b.add({ operator: 'not_contains', expected: v, ...(b.multi ? { matches: 'each' } : {}) }), 'not_contains on each match'],
    ['expected_gte', (v, k) => b.add({ operator: 'gte', expected: b.num(k, v) }), 'gte'],
    ['expected_lte', (v, k) => b.add({ operator: 'lte', expected: b.num(k, v) }), 'lte'],
    ['min_value', (v, k) => b.add({ operator: 'gte', expected: b.num(k, v) }), 'gte'],
    ['max', (v, k) => b.add({ operator: 'lte', expected: b.num(k, v) }), 'lte'],
    ['tolerance_max', (v, k) => b.add({ operator: 'lte', expected: b.num(k, v) }), 'lte (the bound)'],
    ['expected_all_gt', (v, k) => b.add({ operator: 'gt', expected: b.num(k, v), matches: 'each' }), 'gt on each match'],
    ['expected_all_lte', (v, k) => b.add({ operator: 'lte', expected: b.num(k, v), matches: 'each' }), 'lte on each match'],
    ['expected_in', (v) => b.add({ operator: 'in', expected: v }), 'in'],
    ['expected_one_of', (v) => b.add({ operator: 'in', expected: v }), 'in'],
    ['expected_includes', (v) => b.add({ operator: 'contains', expected: v, ...(b.multi ? { matches: 'list' } : {}) }), 'contains'],
    ['expected_contains_one_of', (v) => b.add({ operator: 'contains_any', expected: v, ...(b.multi ? { matches: 'list' } : {}) }), 'contains_any'],
    ['expected_contains_all', (v) => b.add({ operator: 'contains_all', expected: v, ...(b.multi ? { matches: 'list' } : {}) }), 'contains_all'],
    ['expected_regex_all', (v, k) => (Array.isArray(v) ? v.forEach((x) => b.regexCheck(k, x)) : b.issue(k, `${k} must be a list of patterns`)), 'regex (each pattern)'],
    ['expected_one_of_keys', (v) => b.add({ operator: 'has_any_key', expected: v }), 'has_any_key'],
    ['expected_keys_match_regex', (v, k) => {
      if (typeof v !== 'string') return b.issue(k, `${k} must be a pattern`);
      const r = jsRegex(v);
      b.keyChecks.push({ operator: 'regex', expected: r.pattern, matches: 'each', optional: true, ...(r.ignoreCase ? { ignore_case: true } : {}) });
    }, 'regex on each key (path.*~)'],
    ['expected_in_range_seconds_from_now', (v) => b.add({ operator: 'seconds_from_now', expected: v }), 'seconds_from_now [min, max]'],
    ['expected_max', (v, k) => b.add({ operator: 'lte', expected: b.num(k, v) }), 'lte'],
    ['expected_max_length', (v, k) => b.add({ operator: 'max_length', expected: b.num(k, v) }), 'max_length'],
    ['expected_equals_previous_uid', (v, k) => (v === true ? b.add({ operator: 'equals', expected_path: b.targetPath, expected_response: 1 }) : b.issue(k, `${k} must be true`)), 'equals the same path in the previous response'],
    ['expected_length', (v, k) => b.add({ operator: 'length', expected: b.num(k, v) }), 'length'],
    ['expected_length_gte', (v, k) => b.add({ operator: 'min_length', expected: b.num(k, v) }), 'min_length'],
    ['expected_min_length', (v, k) => b.add({ operator: 'min_length', expected: b.num(k, v) }), 'min_length'],
    ['min_length', (v, k) => b.add({ operator: 'min_length', expected: b.num(k, v) }), 'min_length'],
    ['max_length', (v, k) => b.add({ operator: 'max_length', expected: b.num(k, v) }), 'max_length'],
    ['expected_not_equals', (v) => b.add({ operator: 'not_equals', expected: v }), 'not_equals'],
    ['expected_eq', (v, k) => b.add(pathOrValue(b, v, k)), 'equals (a "$…" string: the value at that path)'],
    ['expected_equals', (v, k) => b.add(pathOrValue(b, v, k)), 'equals (a "$…" string: the value at that path)'],
    ['equals', (v) => b.add({ operator: 'equals', expected: v }), 'equals'],
    ['equals_path', (v, k) => (typeof v === 'string' ? b.add(b.pathRef(v, k)) : b.issue(k, 'equals_path must be a path')), 'equals the value at that path'],
    ['expected_sorted_by', (v, k) => {
      const order = b.has('order') ? b.take('order') : 'asc';
      if (typeof v !== 'string' || (order !== 'asc' && order !== 'desc')) return b.issue(k, 'expected_sorted_by needs a key and order asc|desc');
      b.add({ operator: 'sorted', expected: { by: v, order } });
    }, 'sorted {by, order}'],
    ['deep_equal', (v) => b.add({ operator: 'equals', expected: v }), 'equals'],
    ['regex_in_str', (v, k) => {
      if (typeof v !== 'string') return b.issue(k, `${k} must be a pattern`);
      const r = jsRegex(v);
      b.add({ operator: 'regex', expected: r.pattern, stringify: true, ...(r.ignoreCase ? { ignore_case: true } : {}) });
    }, 'regex on the value as text (stringify)'],
    ['array_min_length', (v, k) => b.add({ operator: 'min_length', expected: b.num(k, v) }), 'min_length'],
    ['empty_or_absent', (v, k) => (v === true ? b.add({ operator: 'empty', optional: true }) : b.issue(k, `${k} must be true`)), 'empty (absent passes)'],
  ];
  for (const [k, fn, canonical] of valueKeys) {
    if (!b.has(k)) continue;
    fn(b.take(k), k);
    b.say(k, canonical, `published ${k}`);
  }
  if (b.has('predicate')) {
    const p = b.take('predicate');
    const v = b.take('value');
    b.say(`predicate: ${JSON.stringify(p)}`, p === 'string_min_length' ? 'is_type string + min_length' : 'contains', 'a named predicate with its value');
    if (p === 'string_min_length') { b.add({ operator: 'is_type', expected: 'string' }); b.add({ operator: 'min_length', expected: b.num('value', v) }); }
    else if (p === 'contains') b.add({ operator: 'contains', expected: v });
    else b.issue('predicate', `unknown predicate ${JSON.stringify(p)}`);
  }
  if (b.has('assert')) readAssert(b);
}

/**
 * gavmyneb `{"assert": "<word>", "value"|"allowed"|"values": …}`. On a SQL result (`$.rows`) the
 * value of a row is the first column the query selects (`SELECT workflow_state, COUNT(*) …`).
 */
function readAssert(b: CheckBuilder): void {
  const word = b.take('assert');
  const say = (canonical: string, meaning: string) => b.say(`assert: ${JSON.stringify(word)}`, canonical, meaning);
  const rowsPath = () => {
    if (b.targetPath !== '$.rows' || !b.sqlColumn) { b.issue('assert', `${String(word)} reads the rows of a SQL step before it`); return undefined; }
    return `$.rows[*].${b.sqlColumn}`;
  };
  switch (word) {
    case 'present': case 'not_null': say('operator: exists', 'present and not null'); return b.add({ operator: 'exists' });
    case 'object': say('is_type object', 'an object'); return b.add({ operator: 'is_type', expected: 'object' });
    case 'equals': say('operator: equals (value)', 'equal to value'); return b.add({ operator: 'equals', expected: b.take('value') });
    case 'contains': say('operator: contains (value)', 'contains value'); return b.add({ operator: 'contains', expected: b.take('value') });
    case 'subset_of': case 'values_in': {
      const allowed = b.take('allowed');
      const p = rowsPath();
      if (!p || !Array.isArray(allowed)) return void (p && b.issue('allowed', 'allowed must be a list'));
      say(`path ${p}, matches each, operator in (allowed)`, "every row's value is one of the allowed values");
      return b.add({ path: p, operator: 'in', expected: allowed, matches: 'each' });
    }
    case 'contains_state': {
      const values = b.take('values');
      const p = rowsPath();
      if (!p || !Array.isArray(values)) return void (p && b.issue('values', 'values must be a list'));
      say(`path ${p}, matches list, operator contains_all (values)`, 'the rows include every listed value');
      return b.add({ path: p, operator: 'contains_all', expected: values, matches: 'list' });
    }
    default:
      b.issue('assert', `unknown assert ${JSON.stringify(word)}`);
  }
}
