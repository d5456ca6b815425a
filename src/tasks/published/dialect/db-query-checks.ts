import type { DialectContext } from './types';
import { copy, isObject, takeNotes, type Inputs } from './util';

/**
 * The published ways of saying what a P08 result must be, mapped onto the canonical checks of
 * src/primitives/p08-db-query.ts (expected_result, row_count, affected_rows, assertions, any_of,
 * rows_contain, equals_var). `sql` is the statement text: a suffixed key such as `cnt_gte` is a
 * condition on column `cnt` only when the statement does not itself name a `cnt_gte` column.
 */
type Check = Record<string, unknown>;

const OP_WORDS: Record<string, string> = {
  '==': 'equals', '=': 'equals', eq: 'equals', equals: 'equals', '!=': 'not_equals', '<>': 'not_equals', ne: 'not_equals', not_equals: 'not_equals',
  '>': 'gt', gt: 'gt', '>=': 'gte', gte: 'gte', '<': 'lt', lt: 'lt', '<=': 'lte', lte: 'lte',
  exists: 'exists', not_exists: 'not_exists', not_null: 'not_null', is_null: 'is_null', contains: 'contains', not_contains: 'not_contains',
  in: 'in', regex: 'regex', starts_with: 'starts_with',
};
const CONDITION_SYMBOL: Record<string, string> = { equals: '==', not_equals: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=' };
const SUFFIX_OP: Record<string, string> = { gte: 'gte', min: 'gte', gt: 'gt', lte: 'lte', max: 'lte', lt: 'lt' };

export function opWord(op: unknown, ctx: DialectContext, where: string): string | undefined {
  const w = typeof op === 'string' ? OP_WORDS[op.trim().toLowerCase()] : undefined;
  if (!w) ctx.issue(where, `unknown comparison operator ${JSON.stringify(op)}`);
  else if (w !== op) ctx.spelling(`operator ${JSON.stringify(op)}`, `operator: ${w}`, 'comparison operator');
  return w;
}

/** Does the SQL text name this identifier (as a column or alias)? */
const names = (sql: string, id: string) => new RegExp(`(^|[^A-Za-z0-9_])${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^A-Za-z0-9_]|$)`, 'i').test(sql);
const isDml = (sql: string) => /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql);

export interface CheckOut {
  expected: Record<string, unknown>;
  rowCount: string[];
  affected?: string;
  assertions: Check[];
  anyOf: Check[];
  /** variable → JSONPath (an assertion's own `store_as`) */
  capture: Record<string, string>;
  rowsEqual?: unknown;
  rowsMatch?: unknown;
}

/** `${NAME}` (iyjruvfz's variable spelling) → NAME */
const varName = (v: unknown) => (typeof v === 'string' ? v.replace(/^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/, '$1') : v);

/** expected_result's object form, key by key. */
function expectedObject(er: Inputs, sql: string, out: CheckOut, ctx: DialectContext, tolerance: number | undefined) {
  for (const [key, raw] of Object.entries(er)) {
    let value = raw;
    // ubsmhopy's P08 compared "{{not_null}}" and "{{gte_N}}" as conditions, not as placeholders
    // (its primitives.py _check_val): the column is not null / is an integer >= N
    const sentinel = ctx.task === 'ubsmhopy' && typeof value === 'string' ? /^\{\{(not_null|gte_(\d+))\}\}$/.exec(value) : null;
    if (sentinel) {
      out.assertions.push(sentinel[2] === undefined ? { field: key, operator: 'not_null' } : { field: key, operator: 'gte', expected: Number(sentinel[2]) });
      ctx.spelling(sentinel[2] === undefined ? 'expected_result {col: "{{not_null}}"}' : 'expected_result {col: "{{gte_N}}"}', 'assertions', sentinel[2] === undefined ? 'the column of the first row is not null' : 'the column of the first row is a number >= N');
      continue;
    }
    // {"not_null": true}, {"in": [...]}, {"min": a, "max": b}: checks on the column
    if (isObject(value) && Object.keys(value).length > 0 && Object.keys(value).every((k) => ['not_null', 'in', 'min', 'max'].includes(k))) {
      if ('not_null' in value) {
        if (value.not_null === true) out.assertions.push({ field: key, operator: 'not_null' });
        else if (value.not_null === false) out.assertions.push({ field: key, operator: 'is_null' });
        else ctx.issue(`inputs.expected_result.${key}.not_null`, 'must be true or false');
      }
      if ('in' in value) out.assertions.push({ field: key, operator: 'in', expected: value.in });
      if ('min' in value) out.assertions.push({ field: key, operator: 'gte', expected: value.min });
      if ('max' in value) out.assertions.push({ field: key, operator: 'lte', expected: value.max });
      ctx.spelling('expected_result {col: {not_null|in|min|max}}', 'assertions', 'conditions on a column of the first row');
      continue;
    }
    // {"op": ">=", "value": 1} and {"$gte": 60}: a condition on the column
    if (isObject(value)) {
      const entries = Object.entries(value);
      const opKey = 'op' in value ? value.op : entries.length === 1 && entries[0][0].startsWith('$') ? entries[0][0].slice(1) : undefined;
      const operand = 'op' in value ? value.value : entries[0]?.[1];
      const op = opKey === undefined ? undefined : opWord(opKey, ctx, `inputs.expected_result.${key}`);
      if (op && CONDITION_SYMBOL[op] && typeof operand === 'number' && Object.keys(value).length === ('op' in value ? 2 : 1)) {
        ctx.spelling('op' in value ? 'expected_result {col: {op, value}}' : 'expected_result {col: {"$op": n}}', 'expected_result {col: "<op>n"}', 'a numeric condition on the column');
        value = `${CONDITION_SYMBOL[op]}${operand}`;
      } else {
        ctx.issue(`inputs.expected_result.${key}`, `unsupported condition ${JSON.stringify(raw)}`);
        continue;
      }
    }
    const m = /^(.*)_(gte|min|gt|lte|max|lt)$/.exec(key);
    if (m && !names(sql, key) && typeof value === 'number') {
      const [, base, suffix] = m;
      const op = SUFFIX_OP[suffix];
      if (base === 'row_count') out.rowCount.push(`${CONDITION_SYMBOL[op]}${value}`);
      else out.expected[base] = `${CONDITION_SYMBOL[op]}${value}`;
      ctx.spelling(`expected_result {<col>_${suffix}: n}`, base === 'row_count' ? 'row_count' : 'expected_result {col: "<op>n"}', `${base === 'row_count' ? 'the number of rows' : 'the column'} ${CONDITION_SYMBOL[op]} n (the statement names no column ${key})`);
      continue;
    }
    if (key === 'row_count' && !names(sql, key) && typeof value === 'number') {
      out.rowCount.push(`==${value}`);
      ctx.spelling('expected_result {row_count: n}', 'row_count', 'the number of rows (the statement names no row_count column)');
      continue;
    }
    if (key === 'rows_affected' && isDml(sql) && typeof value === 'number') {
      out.affected = `==${value}`;
      ctx.spelling('expected_result {rows_affected: n}', 'affected_rows', 'the rows an INSERT/UPDATE/DELETE changed');
      continue;
    }
    if (tolerance !== undefined && typeof value === 'number') out.assertions.push({ field: key, operator: 'equals', expected: value, tolerance });
    else out.expected[key] = value as unknown;
  }
}

/** One published assertion object → canonical checks (orghjavi puts several conditions in one object). */
export function assertionChecks(a: Inputs, i: number, o: { task: string; mongo: boolean }, out: CheckOut, ctx: DialectContext, list: 'assertions' | 'any_of' = 'assertions') {
  const at = `inputs.${list}[${i}]`;
  const x = copy(a);
  takeNotes(x);
  if (Object.keys(x).length === 0) {
    ctx.spelling('assertions[] with only a comment', '(no check)', 'a note in the assertion list; nothing to check');
    return;
  }
  const base: Check = {};
  let path = x.path as string | undefined;
  delete x.path;
  if (typeof x.field === 'string') base.field = x.field;
  delete x.field;
  if (path !== undefined) {
    if (o.mongo) {
      // ygamciur: the path is read against the request's own result (a document or a count)
      base.path = path === '$' ? '$.value' : path.replace(/^\$\./, '$.value.');
      ctx.spelling('MongoDB assertions[].path', 'path under $.value', 'a path into the command\'s result (document or count)');
    } else if (!path.startsWith('$')) {
      base.field = path;
      ctx.spelling('assertions[].path <column>', 'field', 'a column of the first row');
    } else if (path === '$') {
      base.path = '$.rows';
      ctx.spelling('assertions[].path "$"', 'path: $.rows', 'the list of result rows');
    } else {
      base.path = path;
      if (/\[\*\]|\.\./.test(path)) base.match = 'all';
    }
  }
  const push = (operator: string, expected?: unknown, extra: Check = {}) => {
    // "$" with a length bound is a row count
    if (base.path === '$.rows' && (operator === 'min_length' || operator === 'exists')) {
      out.rowCount.push(operator === 'exists' ? '>=1' : `>=${expected}`);
      return;
    }
    (list === 'any_of' ? out.anyOf : out.assertions).push({ ...base, operator, ...(expected !== undefined ? { expected } : {}), ...extra });
  };
  const rawOp = x.operator ?? x.op;
  if (x.op !== undefined) ctx.spelling('assertions[].op', 'operator', 'the comparison of the assertion');
  delete x.operator;
  delete x.op;
  const tolerance = typeof x.tolerance === 'number' ? x.tolerance : undefined;
  delete x.tolerance;
  let used = false;
  if (rawOp !== undefined) {
    used = true;
    if (rawOp === 'length_gte') {
      ctx.spelling('operator: length_gte', 'operator: min_length', 'at least this many items');
      push('min_length', x.expected);
    } else {
      const op = opWord(rawOp, ctx, `${at}.operator`);
      const tol = tolerance !== undefined && (op === 'equals' || op === 'not_equals') ? { tolerance } : {};
      if (tolerance !== undefined && !('tolerance' in tol)) ctx.spelling('assertions[].tolerance beside an ordering operator', '(exact bound)', 'a tolerance only widens equality; an ordering bound is applied exactly');
      if (op) push(op, ['exists', 'not_exists', 'not_null', 'is_null'].includes(op) ? undefined : x.expected, tol);
    }
    delete x.expected;
  } else if ('expected' in x) {
    used = true;
    push(x.expected === null ? 'is_null' : 'equals', x.expected === null ? undefined : x.expected, tolerance !== undefined ? { tolerance } : {});
    delete x.expected;
  }
  const KEYED: [string, string][] = [
    ['expected_in', 'in'], ['expected_min', 'gte'], ['expected_max', 'lte'], ['expected_min_length', 'min_length'], ['expected_min_count', 'min_length'],
    ['expected_contains', 'contains'], ['expected_contains_all', 'contains_all'], ['expected_contains_one_of', 'contains_any'], ['match_regex', 'regex'],
    ['expected_pattern', 'regex'], ['expected_type', 'is_type'], ['expected_array_length', 'length'], ['expected_in_range_seconds_from_now', 'seconds_from_now_between'],
    ['expected_all_match_pattern', 'regex'], ['expected_equals_var', 'equals'],
  ];
  for (const [k, op] of KEYED) {
    if (!(k in x)) continue;
    used = true;
    let value = x[k];
    const extra: Check = op === 'contains_all' && base.path && !base.match ? { match: 'all' } : {};
    if (k === 'expected_all_match_pattern') extra.match = 'each';
    if (k === 'expected_equals_var') value = `{{${varName(value)}}}`;
    if (k === 'expected_type' && value === 'array' && base.path === '$.rows') value = 'array';
    push(op, value, extra);
    ctx.spelling(`assertions[].${k}`, `operator: ${op}${extra.match === 'each' ? ' (each match)' : ''}`, k === 'expected_equals_var' ? 'equals the value of a variable stored earlier' : 'a condition on the value at the path');
    delete x[k];
  }
  if ('store_as' in x) {
    const name = varName(x.store_as);
    delete x.store_as;
    if (typeof name !== 'string' || !base.path) ctx.issue(`${at}.store_as`, 'store_as needs a path and a variable name');
    else {
      out.capture[name] = base.path as string;
      ctx.spelling('assertions[].store_as', 'capture {var: path}', 'store the value at the path (when every check passes)');
    }
  }
  if (!used) ctx.issue(at, 'an assertion with no condition');
  for (const k of Object.keys(x)) ctx.issue(`${at}.${k}`, `unknown assertion key "${k}"`);
}

export function readChecks(inputs: Inputs, o: { task: string; sql: string; mongo: boolean }, ctx: DialectContext): CheckOut {
  const out: CheckOut = { expected: {}, rowCount: [], assertions: [], anyOf: [], capture: {} };
  const take = (k: string) => {
    const v = inputs[k];
    delete inputs[k];
    return v;
  };
  const tolerance = typeof inputs.tolerance === 'number' ? (take('tolerance') as number) : undefined;
  if (tolerance !== undefined) ctx.spelling('P08 tolerance', 'assertions[].tolerance', 'numbers of expected first-row values within this distance count as equal (minimums stay exact)');
  if ('expected' in inputs) {
    if ('expected_result' in inputs) ctx.issue('inputs.expected', 'expected and expected_result are both given');
    inputs.expected_result = take('expected');
    ctx.spelling('P08 expected', 'expected_result', 'what the result must be');
  }
  if ('expected_result' in inputs) {
    const er = inputs.expected_result;
    if (er === null) {
      delete inputs.expected_result;
      ctx.spelling('expected_result: null', '(no check)', 'the statement only has to run');
    } else if (er === 'empty' || er === 'non_empty') {
      delete inputs.expected_result;
      out.rowCount.push(er === 'empty' ? '==0' : '>=1');
      ctx.spelling(`expected_result: "${er}"`, 'row_count', er === 'empty' ? 'no rows' : 'at least one row');
    } else if (isObject(er)) {
      delete inputs.expected_result;
      expectedObject(er, o.sql, out, ctx, tolerance);
    } else if (Array.isArray(er)) {
      delete inputs.expected_result;
      if (!er.every(isObject)) ctx.issue('inputs.expected_result', 'a list expected_result must hold row objects');
      else out.rowsEqual = er;
      ctx.spelling('expected_result [rows]', 'rows_equal', 'the result is exactly these rows, in order');
    }
  }
  for (const k of ['expected_first_row', 'expected_row_match', 'expected_match', 'first_row_assertions']) {
    const firstRow = take(k);
    if (isObject(firstRow)) {
      expectedObject(firstRow, o.sql, out, ctx, tolerance);
      ctx.spelling(k, 'expected_result {col: value}', 'values of the first row');
    } else if (firstRow !== undefined) ctx.issue(`inputs.${k}`, 'must be an object');
  }
  if ('expected_partial_result' in inputs) {
    const pr = take('expected_partial_result');
    if (!Array.isArray(pr) || !pr.every(isObject)) ctx.issue('inputs.expected_partial_result', 'must be a list of row objects');
    else out.rowsMatch = pr;
    ctx.spelling('expected_partial_result [..]', 'rows_match', 'the result has these rows, in order, on the named columns');
  }
  if ('expect_rowcount_min' in inputs) {
    const v = take('expect_rowcount_min');
    if (typeof v !== 'number') ctx.issue('inputs.expect_rowcount_min', 'must be a number');
    else if (isDml(o.sql)) out.affected = `>=${v}`;
    else out.rowCount.push(`>=${v}`);
    ctx.spelling('expect_rowcount_min', 'row_count / affected_rows ">=n"', 'at least n rows (for INSERT/UPDATE/DELETE: rows changed)');
  }
  if ('expected_rows' in inputs) {
    const er = take('expected_rows');
    if (!Array.isArray(er) || !er.every(isObject)) ctx.issue('inputs.expected_rows', 'must be a list of row objects');
    else out.rowsEqual = er;
    ctx.spelling('expected_rows [..]', 'rows_equal', 'the result is exactly these rows, in order');
  }
  const mins: [string, unknown][] = [];
  for (const k of ['min_first_row', 'expected_min']) {
    const v = take(k);
    if (v === undefined) continue;
    if (isObject(v)) {
      mins.push(...Object.entries(v));
      ctx.spelling(`${k} {col: n}`, 'assertions gte', 'each column of the first row is at least n');
    } else if (typeof v === 'number') {
      const field = take('field');
      mins.push([typeof field === 'string' ? field : '', v]);
      ctx.spelling(`${k}: n${typeof field === 'string' ? ' + field' : ''}`, 'assertions gte', `${typeof field === 'string' ? 'the field' : 'the first column'} of the first row is at least n`);
    } else ctx.issue(`inputs.${k}`, 'must be a number or an object');
  }
  if ('expected_min_field' in inputs || 'expected_min_value' in inputs) {
    mins.push([String(take('expected_min_field') ?? ''), take('expected_min_value') ?? 0]);
    ctx.spelling('expected_min_field + expected_min_value', 'assertions gte', 'the field of the first row is at least the value (default 0)');
  }
  if ('min_value' in inputs) {
    mins.push(['', take('min_value')]);
    ctx.spelling('min_value', 'assertions gte', 'the first column of the first row is at least n');
  }
  if ('expected_result_min' in inputs) {
    const v = take('expected_result_min');
    if (isObject(v)) mins.push(...Object.entries(v));
    else mins.push(['', v]);
    ctx.spelling(isObject(v) ? 'expected_result_min {col: n}' : 'expected_result_min: n', 'assertions gte', isObject(v) ? 'each column of the first row is at least n' : 'the first column of the first row is at least n');
  }
  for (const [field, n] of mins) out.assertions.push({ ...(field ? { field } : {}), operator: 'gte', expected: n });
  const match = take('expected_first_row_match');
  if (isObject(match)) {
    for (const [field, re] of Object.entries(match)) out.assertions.push({ field, operator: 'regex', expected: re });
    ctx.spelling('expected_first_row_match {col: regex}', 'assertions regex', 'columns of the first row match these regular expressions');
  } else if (match !== undefined) ctx.issue('inputs.expected_first_row_match', 'must be an object');
  const fr = take('expected_field_regex');
  if (isObject(fr)) {
    out.assertions.push({ ...(typeof fr.field === 'string' ? { field: fr.field } : {}), operator: 'regex', expected: fr.pattern });
    ctx.spelling('expected_field_regex {field?, pattern}', 'assertions regex', 'the field (default the first column) of the first row matches');
  } else if (fr !== undefined) ctx.issue('inputs.expected_field_regex', 'must be {field?, pattern}');
  const cond = take('expected_result_condition');
  if (cond !== undefined) {
    const m = typeof cond === 'string' ? /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|==|!=|=|>|<)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(cond) : null;
    if (!m) ctx.issue('inputs.expected_result_condition', `expected "<column> <op> <number>", got ${JSON.stringify(cond)}`);
    else {
      out.assertions.push({ field: m[1], operator: OP_WORDS[m[2]], expected: Number(m[3]) });
      ctx.spelling('expected_result_condition "<col> <op> n"', 'assertions', 'a numeric condition on a column of the first row');
    }
  }
  for (const k of ['expect_rows', 'expected_result_present']) {
    const v = take(k);
    if (v === undefined) continue;
    if (typeof v !== 'boolean') ctx.issue(`inputs.${k}`, 'must be true or false');
    else out.rowCount.push(v ? '>=1' : '==0');
    ctx.spelling(`${k}: true|false`, 'row_count', 'at least one row (false: none)');
  }
  for (const k of ['expected_min_rows', 'min_rows', 'expected_result_min_rows']) {
    const v = take(k);
    if (v === undefined) continue;
    if (typeof v !== 'number') ctx.issue(`inputs.${k}`, 'must be a number');
    else out.rowCount.push(`>=${v}`);
    ctx.spelling(k, 'row_count ">=n"', 'at least n rows');
  }
  for (const [k, list] of [['expected_predicates', 'assertions'], ['any_of_predicates', 'any_of']] as const) {
    const v = take(k);
    if (v === undefined) continue;
    if (!Array.isArray(v)) {
      ctx.issue(`inputs.${k}`, 'must be a list');
      continue;
    }
    v.forEach((p, i) => {
      if (!isObject(p)) return ctx.issue(`inputs.${k}[${i}]`, 'must be an object');
      const q = copy(p);
      if ('value' in q) (q.expected = q.value), delete q.value;
      assertionChecks(q, i, { task: o.task, mongo: o.mongo }, out, ctx, list);
    });
    ctx.spelling(k, list, list === 'any_of' ? 'at least one condition on the first row holds' : 'every condition on the first row holds');
  }
  const all = take('expected_all_rows_match');
  if (isObject(all)) {
    for (const [field, v] of Object.entries(all)) out.assertions.push({ field, rows: 'all', operator: v === null ? 'is_null' : 'equals', ...(v === null ? {} : { expected: v }) });
    ctx.spelling('expected_all_rows_match {col: value}', 'assertions rows: all', 'every row has these values');
  } else if (all !== undefined) ctx.issue('inputs.expected_all_rows_match', 'must be an object');
  const ra = take('row_assertions');
  if (Array.isArray(ra)) {
    ra.forEach((a, i) => {
      if (!isObject(a) || typeof a.field !== 'string' || !('expected' in a)) return ctx.issue(`inputs.row_assertions[${i}]`, 'expected {field, expected}');
      out.assertions.push({ field: a.field, rows: 'all', operator: a.expected === null ? 'is_null' : 'equals', ...(a.expected === null ? {} : { expected: a.expected }) });
    });
    ctx.spelling('row_assertions [{field, expected}]', 'assertions rows: all', 'every row has the value');
  } else if (ra !== undefined) ctx.issue('inputs.row_assertions', 'must be a list');
  const aa = take('additional_assertions');
  if (Array.isArray(aa)) {
    aa.forEach((a, i) => {
      if (!isObject(a) || typeof a.field !== 'string') return ctx.issue(`inputs.additional_assertions[${i}]`, 'expected {field, match_type, …}');
      const tol = typeof a.tolerance === 'number' ? { tolerance: a.tolerance } : {};
      if (a.match_type === 'numeric_equal_to_zero') out.assertions.push({ field: a.field, operator: 'equals', expected: 0, ...tol });
      else if (a.match_type === 'numeric_equal' && typeof a.expected_numeric === 'number') out.assertions.push({ field: a.field, operator: 'equals', expected: a.expected_numeric, ...tol });
      else ctx.issue(`inputs.additional_assertions[${i}]`, `unsupported match_type ${JSON.stringify(a.match_type)}`);
    });
    ctx.spelling('additional_assertions [{field, match_type: numeric_equal…}]', 'assertions equals', 'a numeric value of the first row (zero, or expected_numeric within tolerance)');
  } else if (aa !== undefined) ctx.issue('inputs.additional_assertions', 'must be a list');
  const rc = take('expected_rows_contain');
  if (rc !== undefined) {
    inputs.rows_contain = rc;
    ctx.spelling('expected_rows_contain', 'rows_contain', 'each object matches some row');
  }
  const saved = take('expected_first_row_equals_saved');
  if (saved !== undefined) {
    inputs.equals_var = saved;
    ctx.spelling('expected_first_row_equals_saved', 'equals_var', 'the first row equals the row stored earlier under that name');
  }
  if (Array.isArray(inputs.assertions)) {
    const list = take('assertions') as unknown[];
    list.forEach((a, i) => (isObject(a) ? assertionChecks(a, i, { task: o.task, mongo: o.mongo }, out, ctx) : ctx.issue(`inputs.assertions[${i}]`, 'must be an object')));
  }
  return out;
}
