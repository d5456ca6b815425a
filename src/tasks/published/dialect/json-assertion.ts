import { asNumeric } from '../../../primitives/compare';
import { EXEC_ROOTS, mapTarget, splitRoot, type SubjectKind, type Target } from './json-paths';
import { OPERATOR_WORDS, TYPE_NAMES, WORD_TYPES, isMultiPath, jsRegex, sentinel } from './json-ops';
import type { DialectContext } from './types';
import { readValueKeys } from './json-value-keys';
import { copy, isNoteKey, isObject, type Inputs } from './util';

/**
 * One published P07 assertion → one or more canonical assertions on the same target. A published
 * assertion often carried several checks at once (`{"type": "string", "min_length": 1}`,
 * `{"exists": true, "min_length": 26}`); each becomes its own canonical assertion so every key is
 * checked and reported. Keys are consumed as they are read; anything left is a load issue.
 */
export interface AssertionEnv {
  ctx: DialectContext;
  subject: SubjectKind;
  saved: ReadonlySet<string>;
  /** spelling label, e.g. `assertions[]` */
  label: string;
  /** issue path of this assertion, e.g. `inputs.assertions[3]` */
  at: string;
  /** where nested note keys go (kept as step notes) */
  notes: Record<string, unknown>;
  /** the first column the chain's last SQL step selects, when the subject is its result */
  sqlColumn?: string;
}
type Canon = Record<string, unknown>;

const typeName = (v: unknown): string | string[] | undefined => (typeof v === 'string' ? TYPE_NAMES[v.toLowerCase()] : undefined);

/** `optional_aliases` entries (rjhcjrst): a dotted alias is read from the root, a bare name as a sibling of the path's last key. */
function aliasPath(path: string, alias: string): string {
  if (alias.startsWith('$')) return alias;
  if (alias.includes('.')) return `$.${alias}`;
  const m = /^(.*)\.[^.[\]]+$/.exec(path);
  return m ? `${m[1]}.${alias}` : `$.${alias}`;
}

export function mapAssertion(raw: Inputs, env: AssertionEnv): Canon[] {
  const { ctx } = env;
  const a = copy(raw);
  const notes: Record<string, unknown> = {};
  for (const k of Object.keys(a)) {
    if (k !== '_type' && k !== '_regex' && (isNoteKey(k) || k === '_check' || k.startsWith('comment_'))) {
      notes[k] = a[k];
      delete a[k];
    }
  }
  // the same object collects notes added below (expected_example, …); json-assert.ts drops it when empty
  env.notes[env.at] = notes;
  if (Object.keys(a).length === 0) {
    // iyjruvfz: `{"comment": "placeholder: P08 itself already contains the verification"}`
    ctx.spelling(`${env.label} (only a comment)`, '(no assertion)', 'a placeholder its author left with nothing to check');
    return [];
  }
  const take = (k: string): unknown => {
    const v = a[k];
    delete a[k];
    return v;
  };
  const has = (k: string) => Object.prototype.hasOwnProperty.call(a, k);
  const say = (key: string, canonical: string, meaning: string) => ctx.spelling(`${env.label}.${key}`, canonical, meaning);
  const issue = (key: string, msg: string) => ctx.issue(`${env.at}${key ? `.${key}` : ''}`, msg);
  function num(k: string, v: unknown): number | undefined {
    const n = typeof v === 'number' ? v : asNumeric(v);
    if (n === undefined) issue(k, `${k} must be a number`);
    return n;
  }

  dollarPlaceholders(a, say);

  // kmasmnil: `$.status_codes_match` — the last two responses of the chain have the same status
  if (a.path === '$.status_codes_match' && (a.expected === true || a.expected === false)) {
    const same = take('expected') === true;
    take('path');
    say('"$.status_codes_match"', 'source status, expected_path $ of response 1', 'the last two responses have the same status');
    for (const k of Object.keys(a)) issue(k, `unknown assertion key "${k}"`);
    return [{ path: '$', source: 'status', operator: same ? 'equals' : 'not_equals', expected_path: '$', expected_response: 1 }];
  }

  // ---- target
  if (has('path_any_of') && !has('path')) {
    a.path = take('path_any_of');
    say('path_any_of', 'path + or_paths', 'alternative paths, the first that matches is used');
  }
  let rawPath: unknown = has('path') ? take('path') : '$';
  let extraPaths: string[] = [];
  if (Array.isArray(rawPath) && rawPath.length && rawPath.every((p) => typeof p === 'string')) {
    [rawPath, ...extraPaths] = rawPath as string[];
    say('path: [..]', 'path + or_paths', 'alternative paths, the first that matches is used');
  }
  if (has('header')) {
    const h = take('header');
    if (typeof h !== 'string' || !h || rawPath !== '$') { issue('header', 'header must be a header name (and no path)'); return []; }
    rawPath = `$.headers['${h}']`;
    say('header', "source headers, path $['<name>']", 'a check on a response header');
  }
  if (!has('path') && rawPath === '$' && has('min_response_size')) {
    const n = take('min_response_size');
    say('min_response_size', 'source size, operator gte', 'the body is at least this many bytes');
    return [{ path: '$', source: 'size', operator: 'gte', expected: num('min_response_size', n) }];
  }
  if (typeof rawPath !== 'string' || rawPath === '') {
    issue('path', 'path must be a non-empty string');
    return [];
  }
  const target: Target = mapTarget(rawPath, ctx, env.subject, env.saved, env.label);
  for (const p of extraPaths) {
    const t = mapTarget(p, ctx, env.subject, env.saved, env.label);
    if ((t.source ?? 'body') !== (target.source ?? 'body') || t.body !== target.body) issue('path', 'alternative paths must address the same part of the response');
    target.or_paths = [...(target.or_paths ?? []), t.path, ...(t.or_paths ?? [])];
  }
  if (has('optional_aliases')) {
    const al = take('optional_aliases');
    if (!Array.isArray(al) || !al.every((x) => typeof x === 'string')) issue('optional_aliases', 'optional_aliases must be a list of key names');
    else {
      target.or_paths = [...(target.or_paths ?? []), ...al.map((x) => aliasPath(target.path, x))];
      say('optional_aliases', 'or_paths', 'alternative keys tried when the path matches nothing (a dotted alias from the root, a bare name beside the last key)');
    }
  }
  if (has('alternate_paths')) {
    const al = take('alternate_paths');
    if (!Array.isArray(al) || !al.every((x) => typeof x === 'string')) issue('alternate_paths', 'alternate_paths must be a list of paths');
    else {
      for (const x of al) {
        const t = mapTarget(x, ctx, env.subject, env.saved, env.label);
        if ((t.source ?? 'body') !== (target.source ?? 'body') || t.body !== target.body) issue('alternate_paths', 'alternative paths must address the same part of the response');
        target.or_paths = [...(target.or_paths ?? []), t.path, ...(t.or_paths ?? [])];
      }
      say('alternate_paths', 'or_paths', 'paths tried when the first one matches nothing');
    }
  }
  const multi = isMultiPath(target.path);

  // ---- modifiers shared by every check of this assertion
  const mods: Canon = {};
  if (has('optional')) {
    const o = take('optional');
    if (typeof o !== 'boolean') issue('optional', 'optional must be a boolean');
    else if (o) mods.optional = true;
  }
  if (has('alternative_status')) {
    const st = take('alternative_status');
    if (!Array.isArray(st) || !st.every((x) => Number.isInteger(x))) issue('alternative_status', 'alternative_status must be a list of status codes');
    else {
      mods.or_status = st;
      say('alternative_status', 'or_status', 'the check also passes when the response status is one of these');
    }
  }
  let tolerance: number | undefined;
  if (has('tolerance')) {
    const t = take('tolerance');
    if (t === null) say('tolerance: null', '(none)', 'no tolerance');
    else if (typeof t === 'number' && t >= 0) tolerance = t;
    else issue('tolerance', 'tolerance must be a non-negative number');
  }
  let capture: { as: string; path?: string } | undefined;
  for (const k of ['capture_as', 'store_as', 'save_as']) {
    if (!has(k)) continue;
    const v = take(k);
    const name = typeof v === 'string' ? /^(?:\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|([A-Za-z_][A-Za-z0-9_]*))$/.exec(v) : null;
    if (!name) { issue(k, `${k} must be a variable name`); continue; }
    const v2 = name[1] ?? name[2];
    if (name[1]) say(`${k}: "\${NAME}"`, 'capture_as: NAME', 'the variable named by the placeholder');
    if (capture && capture.as !== v2) issue(k, `two capture names (${capture.as}, ${v2})`);
    capture = { as: v2 };
    if (k !== 'capture_as') say(k, 'capture_as', 'store the value in a variable for later steps and dependent nodes');
  }
  if (has('capture_field')) {
    const f = take('capture_field');
    if (typeof f !== 'string' || !capture) issue('capture_field', 'capture_field needs a field name and capture_as');
    else {
      capture.path = `$.${f}`;
      say('capture_field', 'capture_path', 'the field of the found value that is captured');
    }
  }

  // ---- checks
  const checks: Canon[] = [];
  const add = (c: Canon) => checks.push(c);

  const regexCheck = (k: string, v: unknown, op = 'regex') => {
    if (typeof v !== 'string') return issue(k, `${k} must be a string pattern`);
    const r = jsRegex(v);
    add({ operator: op, expected: r.pattern, ...(r.ignoreCase ? { ignore_case: true } : {}) });
    if (r.ignoreCase) say(`${k} "(?i)…"`, 'ignore_case: true', 'a Python inline case-insensitive flag');
  };
  const typeCheck = (k: string, v: unknown) => {
    const t = typeName(v);
    if (t === undefined) return issue(k, `unknown type name ${JSON.stringify(v)}`);
    add({ operator: 'is_type', expected: t });
  };
  let anyMode = false;
  /** checks on the object's key names (`<path>.*~`) */
  const keyChecks: Canon[] = [];

  // operator word: operator | op | match_type | match | type: "exists"
  const wordKey = ['operator', 'op', 'match_type'].find(has) ?? (has('match') && typeof a.match === 'string' && OPERATOR_WORDS[a.match] ? 'match' : undefined) ?? (a.type === 'exists' ? 'type' : undefined);
  if (wordKey) {
    const word = take(wordKey);
    const m = typeof word === 'string' ? OPERATOR_WORDS[word] : undefined;
    if (!m) issue(wordKey, `unknown operator ${JSON.stringify(word)}`);
    else {
      // `operator: "equals"` / `"exists"` are already canonical: no record
      const canonical = wordKey === 'operator' && ('op' in m ? m.op === word : word === 'exists');
      if (!canonical) say(`${wordKey}: ${JSON.stringify(word)}`, 'op' in m ? `operator: ${m.op}` : `operator (${m.special})`, m.meaning);
      const hasExp = has('expected');
      const exp = take('expected');
      if ('op' in m) {
        if (m.op === 'regex') {
          // regex words: the pattern is `pattern` when given (gmdnohlg/rjhcjrst), else `expected`
          if (has('pattern')) {
            if (hasExp) { notes.expected_example = exp; say('expected beside pattern', '(note)', 'an example value; the check is the pattern'); }
            regexCheck('pattern', take('pattern'), 'regex');
          } else regexCheck('expected', exp);
        } else if (m.op === 'numeric_string') {
          const spelled = has('expected_numeric');
          const n = spelled ? take('expected_numeric') : exp;
          if (spelled) say('expected_numeric', 'expected', 'the number the numeric string must equal');
          add({ operator: 'numeric_string', ...(n !== undefined && n !== null ? { expected: num('expected', n) } : {}), ...(tolerance !== undefined ? { tolerance } : {}) });
          tolerance = undefined;
        } else if (m.op === 'not_exists' || m.op === 'not_empty' || m.op === 'is_json') {
          if (hasExp && exp !== true && !(m.op === 'not_empty' && (exp === '' || exp === null))) issue('expected', `${String(word)} with expected ${JSON.stringify(exp)}`);
          else if (hasExp) say(`expected with ${String(word)}`, '(none)', 'a placeholder value the check does not use');
          add({ operator: m.op });
        } else {
          if (!hasExp) issue('expected', `${String(word)} needs an expected value`);
          else if (m.op === 'contains' && typeof a.match === 'string' && !OPERATOR_WORDS[a.match]) {
            // cvyocaao: `match` is the substring the check uses; `expected` spelled out the full value
            add({ operator: 'contains', expected: take('match') });
            notes.expected_example = exp;
            say('match (substring)', 'expected', 'the substring that must be contained (expected is the full example value)');
          } else add({ operator: m.op, expected: ['gt', 'gte', 'lt', 'lte'].includes(m.op) ? num('expected', exp) : exp });
        }
      } else {
        switch (m.special) {
          case 'exists':
            if (hasExp && exp === false) add({ operator: 'not_exists' });
            else {
              add({ operator: 'exists' });
              if (hasExp && exp !== true && exp !== null) {
                // kmasmnil `{"type": "exists", "expected": "{{org_id}}"}`: present, and that value
                if (wordKey !== 'type') issue('expected', `${String(word)} with expected ${JSON.stringify(exp)}`);
                else { add({ operator: 'equals', expected: exp }); say('type: "exists" with expected', 'exists + equals', 'present and equal to expected'); }
              } else if (hasExp) say(`expected with ${String(word)}`, '(none)', 'true/null: the value must exist');
            }
            break;
          case 'strict_null': add({ operator: 'equals', expected: null }); break;
          case 'contains_text':
            if (target.path === '$' && !target.source) target.source = 'text';
            add({ operator: 'contains', expected: exp });
            break;
          case 'type':
            if (WORD_TYPES[String(word)]) {
              if (hasExp && exp !== true) issue('expected', `${String(word)} with expected ${JSON.stringify(exp)}`);
              add({ operator: 'is_type', expected: WORD_TYPES[String(word)] });
            } else typeCheck('expected', exp);
            break;
          case 'eq_path':
            if (typeof exp !== 'string') issue('expected', 'eq_path needs a path');
            else add({ operator: 'equals', expected_path: exp });
            break;
          case 'eq_or_empty':
            if (exp !== null) issue('expected', 'eq_or_empty is only read with expected null');
            else { add({ operator: 'empty' }); mods.optional = true; }
            break;
          case 'exists_or': {
            const alt = take('alt_check');
            if (typeof alt !== 'string') { issue('alt_check', 'exists_or needs alt_check'); break; }
            const t2 = mapTarget(alt, ctx, env.subject, env.saved, env.label);
            if ((t2.source ?? 'body') !== (target.source ?? 'body') || t2.body !== target.body) issue('alt_check', 'alt_check must address the same part of the response');
            target.or_paths = [...(target.or_paths ?? []), t2.path, ...(t2.or_paths ?? [])];
            say('alt_check', 'or_paths', 'the path tried when the first one is absent');
            add({ operator: 'exists' });
            break;
          }
          case 'array_find': {
            const match = take('match');
            if (!isObject(match) || !Object.keys(match).length) { issue('match', `${String(word)} needs a match object`); break; }
            const where = Object.entries(match).map(([k, v]) => k.endsWith('_contains')
              ? { path: `$.${k.slice(0, -'_contains'.length)}`, operator: 'contains', expected: v }
              : { path: `$.${k}`, operator: 'equals', expected: v });
            say('match', 'where', 'conditions on one element (`<key>_contains` = substring)');
            add({ operator: 'has_element', where });
            break;
          }
          case 'not_contains_id':
            add({ operator: 'no_element', where: [{ path: '$.id', operator: 'equals', expected: exp }] });
            break;
          case 'any_match':
            anyMode = true;
            if (hasExp && exp !== null) add({ operator: 'equals', expected: exp });
            break;
          case 'store_as': {
            const key = take('key');
            if (typeof key !== 'string') { issue('key', 'store_as needs key'); break; }
            capture = { as: key };
            say('key', 'capture_as', 'the variable the value is stored in');
            add({ operator: 'exists' });
            break;
          }
        }
      }
    }
  }

  if ((has('tolerance_max') || has('max')) && has('expected') && !wordKey) {
    // rjhcjrst: with a bound the fork checked only the bound; `expected` was the usual value (KB-011: "commonly 100")
    notes.expected_example = take('expected');
    say('expected beside tolerance_max', '(note)', 'the usual value; the check is the bound');
  }
  // value-carrying keys, each its own check (json-value-keys.ts)
  readValueKeys({ ctx, add, issue, say, num, regexCheck, typeCheck, has, take, multi, targetPath: target.path, pathRef, keyChecks, sqlColumn: env.sqlColumn });
  function pathRef(v: string, k: string): Canon {
    const t = mapTarget(v, ctx, env.subject, env.saved, env.label);
    if (t.source) issue(k, `${k} must address a JSON body`);
    return { operator: 'equals', expected_path: t.path, ...(t.body ? { expected_body: t.body } : {}) };
  }
  if (has('expected')) {
    const exp = take('expected');
    const s = sentinel(ctx.task, exp);
    if (s) {
      say(`expected: "${s.op === 'contains' || s.op === 'regex' && !s.needs ? `${s.op}:…` : String(exp)}"`, `operator ${s.op}`, "this fork read the check out of the expected string");
      if (s.needs === 'pattern') regexCheck('pattern', take('pattern'));
      else if (s.needs === 'keys') add({ operator: 'has_exactly_keys', expected: take('keys') });
      else if (s.op === 'regex') regexCheck('expected', s.expected);
      else add({ operator: s.op, ...(s.expected !== undefined ? { expected: s.expected } : {}) });
    } else if (has('pattern')) {
      issue('pattern', 'pattern beside a plain expected value');
    } else if (has('tolerance_str')) {
      // hhrdixum: decimal text compared as a number, to the precision the expected text is written with
      const ts = take('tolerance_str');
      const n = typeof exp === 'string' ? asNumeric(exp) : undefined;
      if (ts !== true || n === undefined || typeof exp !== 'string') issue('tolerance_str', 'tolerance_str needs true and a decimal expected text');
      else {
        const decimals = (/\.(\d+)\s*$/.exec(exp)?.[1] ?? '').length;
        add({ operator: 'equals', expected: n, as_number: true, tolerance: 10 ** -decimals });
        say('tolerance_str', 'as_number + equals + tolerance (10^-decimals)', 'a decimal compared as a number to the precision of the expected text');
      }
    } else add({ operator: 'equals', expected: exp, ...(tolerance !== undefined ? { tolerance } : {}) });
    if (!s) tolerance = undefined;
  }
  if (has('pattern')) regexCheck('pattern', take('pattern'));
  if (tolerance !== undefined) issue('tolerance', 'tolerance without an equality check');
  if (checks.length === 0 && keyChecks.length === 0) {
    add({ operator: 'exists' });
    say('(no check)', 'operator: exists', 'an assertion with only a path (and maybe a capture): the value must be present and not null');
  }
  for (const k of Object.keys(a)) issue(k, `unknown assertion key "${k}"`);

  // `in` a list holding null (qmjfeopc `[false, null]`, lgzivily): "not set" is allowed, so an absent value passes too
  for (const c of checks) if (c.operator === 'in' && Array.isArray(c.expected) && c.expected.includes(null) && !mods.optional) {
    c.optional = true;
    say('in [..., null]', 'in + optional', 'null among the allowed values: an absent value passes too');
  }
  // ---- assemble: every check on the same target; the capture rides on the first single-value check
  const base: Canon = { path: target.path, ...(target.source ? { source: target.source } : {}), ...(target.body ? { body: target.body } : {}), ...(target.or_paths ? { or_paths: target.or_paths } : {}), ...(target.as_number ? { as_number: true } : {}) };
  // the same check spelled twice (`"expected_present": true` + `"assert": "present"`) is checked once
  const seen = new Set<string>();
  const out: Canon[] = checks.map((c) => ({ ...base, ...mods, ...c, ...(anyMode && c.operator !== 'has_element' ? { matches: 'any' } : {}) }))
    .filter((c) => !seen.has(JSON.stringify(c)) && !!seen.add(JSON.stringify(c)));
  for (const c of keyChecks) out.push({ ...base, ...mods, path: `${target.path}.*~`, ...c });
  if (capture) {
    const host = out.find((c) => (c.matches ?? 'first') === 'first');
    const cap = { capture_as: capture.as, ...(capture.path ? { capture_path: capture.path } : {}) };
    if (host) Object.assign(host, cap);
    else out.push({ ...base, operator: 'exists', ...cap });
  }
  return out;
}

/**
 * iyjruvfz wrote variables as `${NAME}` (in capture names and expected values); they are the
 * `{{NAME}}` placeholders of every other fork.
 */
function dollarPlaceholders(a: Inputs, say: (key: string, canonical: string, meaning: string) => void): void {
  const re = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
  const conv = (v: unknown): unknown => (typeof v === 'string' ? v.replace(re, '{{$1}}') : Array.isArray(v) ? v.map(conv) : isObject(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, conv(x)])) : v);
  for (const k of Object.keys(a)) {
    if (!JSON.stringify(a[k]).match(/\$\{[A-Za-z_]/)) continue;
    a[k] = conv(a[k]);
    say(`${k}: "\${NAME}"`, '"{{NAME}}"', 'a variable written ${NAME}');
  }
}

/** Does this published assertion read a command result's field (`$.exit_code`, `$.stdout`, …)? */
export function readsExecField(raw: unknown): boolean {
  if (!isObject(raw) || typeof raw.path !== 'string') return false;
  const r = splitRoot(raw.path);
  return !!r && r.root in EXEC_ROOTS;
}
