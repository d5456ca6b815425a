/**
 * The published vocabulary of P07 checks: operator words (under `operator`, `op`, `match_type`,
 * `match`), JSON type names, and the "sentinel" strings some forks read inside `expected`.
 * Each maps onto one canonical P07 operator (src/primitives/p07-operators.ts).
 */

/** Canonical check one published operator word stands for; `special` words need more keys. */
export type WordMeaning =
  | { op: string; meaning: string }
  | { special: 'exists' | 'strict_null' | 'contains_text' | 'type' | 'eq_path' | 'eq_or_empty' | 'exists_or' | 'array_find' | 'not_contains_id' | 'any_match' | 'store_as'; meaning: string };

const op = (o: string, meaning: string): WordMeaning => ({ op: o, meaning });
const special = (s: Extract<WordMeaning, { special: string }>['special'], meaning: string): WordMeaning => ({ special: s, meaning });

export const OPERATOR_WORDS: Record<string, WordMeaning> = {
  '==': op('equals', 'equal'), eq: op('equals', 'equal'), equals: op('equals', 'equal'), exact: op('equals', 'exactly equal'),
  '!=': op('not_equals', 'not equal'), ne: op('not_equals', 'not equal'), not_eq: op('not_equals', 'not equal'), not_equals: op('not_equals', 'not equal'),
  '>': op('gt', 'greater than'), gt: op('gt', 'greater than'), greater_than: op('gt', 'greater than'),
  '>=': op('gte', 'at least'), gte: op('gte', 'at least'), min_value: op('gte', 'at least (minimum value)'),
  '<': op('lt', 'less than'), lt: op('lt', 'less than'),
  '<=': op('lte', 'at most'), lte: op('lte', 'at most'), max_value: op('lte', 'at most (maximum value)'),
  exists: special('exists', 'present and not null'), not_null: special('exists', 'present and not null'),
  not_exists: op('not_exists', 'absent or null'), is_null: op('not_exists', 'null or absent'),
  strict_null: special('strict_null', 'present and exactly null'),
  contains: op('contains', 'substring / list element / object subset'),
  contains_text: special('contains_text', 'the text contains'),
  not_contains: op('not_contains', 'does not contain'),
  contains_all: op('contains_all', 'contains every listed element'),
  starts_with: op('starts_with', 'string prefix'), ends_with: op('ends_with', 'string suffix'),
  regex: op('regex', 'regular-expression search'), regex_match: op('regex', 'regular-expression search'), matches_regex: op('regex', 'regular-expression search'),
  in: op('in', 'one of the listed values'), one_of: op('in', 'one of the listed values'),
  length: op('length', 'exact length'), array_length: op('length', 'exact array length'),
  length_gte: op('min_length', 'length at least'), array_length_gte: op('min_length', 'array length at least'), array_min_length: op('min_length', 'array length at least'),
  min_length: op('min_length', 'length at least'), max_length: op('max_length', 'length at most'),
  is_array: special('type', 'is an array'), is_object: special('type', 'is an object'), is_string: special('type', 'is a string'),
  is_type: special('type', 'has the JSON type'), type: special('type', 'has the JSON type'),
  not_empty: op('not_empty', 'not null and not empty'),
  is_json: op('is_json', 'JSON (an object/array, or text that parses)'), is_valid_json: op('is_json', 'JSON (an object/array, or text that parses)'),
  numeric_string: op('numeric_string', 'a decimal number written as a string'),
  eq_path: special('eq_path', 'equal to the value at another path'),
  eq_or_empty: special('eq_or_empty', 'equal, or null/empty/absent'),
  exists_or: special('exists_or', 'present here or at alt_check'),
  array_find: special('array_find', 'an element matches'), array_contains: special('array_find', 'an element matches'),
  not_contains_id: special('not_contains_id', 'no element has this id'),
  any_match: special('any_match', 'some match passes'),
  store_as: special('store_as', 'present; stored in a variable'),
};

/** Published JSON type names → canonical is_type names. */
export const TYPE_NAMES: Record<string, string | string[]> = {
  string: 'string', str: 'string', integer: 'integer', int: 'integer', number: 'number', float: 'number',
  boolean: 'boolean', bool: 'boolean', array: 'array', list: 'array', object: 'object', dict: 'object', null: 'null',
  object_or_array: ['object', 'array'], array_or_object: ['array', 'object'],
};

/** For the `is_array` / `is_object` / `is_string` words. */
export const WORD_TYPES: Record<string, string> = { is_array: 'array', is_object: 'object', is_string: 'string' };

/**
 * Forks that read a check out of `expected` itself (`"expected": "not_null"`, `"is_array"`,
 * `"contains:already"`, `"regex:^…$"`): only in these forks, and only these words, are such a
 * string a check and not a value (kmasmnil's `"number"` and pkvwdnhj's `"api"` stay values).
 */
const SENTINEL_WORDS: Record<string, readonly string[]> = {
  dfhjkeb: ['not_null'],
  jzssnoqp: ['not_null', 'is_array', 'is_object', 'is_integer', 'is_integer_or_zero', 'is_array_or_object', 'is_object_or_array', 'regex:'],
  kmasmnil: ['exists', 'is_array', 'is_boolean', 'contains:', 'matches_regex', 'has_exactly_keys'],
  pkvwdnhj: ['not_empty', 'contains:', 'array'],
};

export type Sentinel = { op: string; expected?: unknown; needs?: 'pattern' | 'keys' };
export function sentinel(task: string, v: unknown): Sentinel | undefined {
  if (typeof v !== 'string') return undefined;
  const words = SENTINEL_WORDS[task] ?? [];
  const prefix = /^(contains|regex):([\s\S]+)$/.exec(v);
  if (prefix) return words.includes(`${prefix[1]}:`) ? { op: prefix[1], expected: prefix[2] } : undefined;
  if (!words.includes(v)) return undefined;
  const types: Record<string, string | string[]> = {
    is_array: 'array', array: 'array', is_object: 'object', is_boolean: 'boolean', is_integer: 'integer', is_integer_or_zero: 'integer',
    is_array_or_object: ['array', 'object'], is_object_or_array: ['object', 'array'],
  };
  if (types[v]) return { op: 'is_type', expected: types[v] };
  if (v === 'not_null' || v === 'exists') return { op: 'exists' };
  if (v === 'not_empty') return { op: 'not_empty' };
  if (v === 'matches_regex') return { op: 'regex', needs: 'pattern' };
  if (v === 'has_exactly_keys') return { op: 'has_exactly_keys', needs: 'keys' };
  return undefined;
}

/** Python-only regex syntax the forks used, made JavaScript: a leading `(?i)` becomes ignore_case. */
export function jsRegex(pattern: string): { pattern: string; ignoreCase: boolean } {
  let p = pattern.replace(/\(\?P</g, '(?<').replace(/\(\?P=(\w+)\)/g, '\\k<$1>');
  let ignoreCase = false;
  const m = /^\(\?([a-z]+)\)/.exec(p);
  if (m && /^[i]+$/.test(m[1])) {
    ignoreCase = true;
    p = p.slice(m[0].length);
  }
  return { pattern: p, ignoreCase };
}

/** A path that can match several values (wildcards, filters, recursive descent). */
export const isMultiPath = (p: string) => /\[\*\]|\.\.|\[\?|\.\*/.test(p);
