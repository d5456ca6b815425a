import type { DialectContext } from './types';
import { isObject, rename, type Inputs } from './util';

/** the evaluator's own admin session (the tasks whose browser steps ran logged in) */
export const ADMIN = { role: 'admin' };

/** P19 → DOM_ASSERT: each task's assertion spellings onto the canonical assertion (docs/compatibility.md#browser). */
export function domAssert(i: Inputs, ctx: DialectContext): Inputs {
  const out: Inputs = {};
  const notes: Inputs = {};
  const assertions: Inputs[] = [];
  const take = (k: string) => {
    const v = i[k];
    delete i[k];
    return v;
  };
  if ('url' in i) out.url = take('url');
  else if (ctx.task === 'gavmyneb') {
    out.url = '/';
    ctx.spelling('(no url)', 'url: /', 'task_gavmyneb\'s evaluator opened / when the step named no page');
  }
  if ('selector_or_text_one_of' in i) {
    out.source_contains_any = take('selector_or_text_one_of');
    out.source = 'last_response';
    ctx.spelling('selector_or_text_one_of', 'source_contains_any (source: last_response)', 'the last response\'s text contains one of these strings');
  }
  if ('assertion' in i && 'selector' in i) {
    const kind = take('assertion');
    if (kind !== 'visible') ctx.issue('inputs.assertion', `unknown assertion ${JSON.stringify(kind)} (known: visible)`);
    assertions.push({ selector: take('selector'), visibility: 'visible' });
    ctx.spelling('selector + assertion: visible', 'assertions[{selector, visibility: visible}]', 'the element is visible');
  }
  if ('no_auth' in i) {
    if (take('no_auth') === true) out.anonymous = true;
    ctx.spelling('no_auth', 'anonymous', 'check the page without the chain\'s session');
  } else if (ctx.task === 'xayqujrv' && out.url) Object.assign(out, { login_as: ADMIN, token_cookie: 't' });
  if ('authenticate' in i) {
    if (take('authenticate') === true) out.login_as = ADMIN;
    else out.anonymous = true;
    ctx.spelling('authenticate', 'login_as: {role: admin}', 'check the page as the signed-in setup (admin) user');
  } else if (ctx.task === 'cqfnbfay') out.anonymous = true;
  // lgzivily: one selector per step
  if ('selector' in i) {
    const present = 'expect_present' in i ? take('expect_present') : true;
    assertions.push({ selector: take('selector'), exists: present });
    ctx.spelling('selector + expect_present', 'assertions[{selector, exists}]', 'the element is (or is not) in the page');
  }
  // sgdoserd: selectors (strings) + all_required; xayqujrv: selectors [{selector, should_exist}]
  if ('selectors' in i) {
    const sels = take('selectors');
    if (!Array.isArray(sels)) ctx.issue('inputs.selectors', 'must be a list');
    else for (const [n, s] of sels.entries()) {
      if (typeof s === 'string') assertions.push({ selector: s, exists: true });
      else if (isObject(s) && typeof s.selector === 'string') assertions.push({ selector: s.selector, exists: s.should_exist ?? true });
      else ctx.issue(`inputs.selectors[${n}]`, 'a selector string or {selector, should_exist}');
    }
    ctx.spelling('selectors[]', 'assertions[{selector, exists}]', 'each selector matches an element');
  }
  if ('all_required' in i) {
    const all = take('all_required');
    if (all === false) out.require = 'any';
    ctx.spelling('all_required: false', 'require: any', 'one of the assertions is enough');
  }
  if ('assertions' in i) {
    const list = take('assertions');
    if (!Array.isArray(list)) ctx.issue('inputs.assertions', 'must be a list');
    else for (const [n, a] of list.entries()) {
      const c = assertion(a, ctx, `inputs.assertions[${n}]`, notes, n);
      if (c) assertions.push(c);
    }
  }
  // a selector given twice (xayqujrv repeats its assertions under `selectors`) is checked once
  const seen = new Set<string>();
  const unique = assertions.filter((a) => {
    const k = JSON.stringify(a);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  if (unique.length || !out.source_contains_any) out.assertions = unique;
  if (Object.keys(notes).length) out._assertion_notes = notes;
  return { ...out, ...i };
}

/** assertion keys that are one canonical key under another name: [published, canonical, meaning] */
const RENAMES: [string, string, string][] = [
  ['shouldExist', 'exists', 'the element is (or is not) in the page'],
  ['caseInsensitive', 'case_insensitive', 'text comparison ignores case'],
  ['minCount', 'min_count', 'at least this many elements match'],
];

function assertion(raw: unknown, ctx: DialectContext, at: string, notes: Inputs, n: number): Inputs | undefined {
  if (!isObject(raw) || typeof raw.selector !== 'string') {
    ctx.issue(at, 'an assertion is an object with a selector');
    return undefined;
  }
  const a: Inputs = { ...raw };
  const out: Inputs = { selector: a.selector };
  delete a.selector;
  for (const k of Object.keys(a)) if (k === 'comment' || k.startsWith('_')) {
    notes[`${n}.${k}`] = a[k];
    delete a[k];
  }
  for (const [from, to, meaning] of RENAMES) rename(a, from, to, ctx, meaning, at, `assertions[].${from}`);
  if ('exists' in a) {
    out.exists = a.exists;
    delete a.exists;
  }
  if (a.check === 'visibility_or_opacity' && a.expected === 'hidden_or_reduced') {
    out.visibility = 'hidden_or_faded';
    delete a.check;
    delete a.expected;
    ctx.spelling('assertions[].check: visibility_or_opacity + expected: hidden_or_reduced', 'visibility: hidden_or_faded', 'every matching element is hidden or drawn with reduced opacity (an auto-hidden toolbar)');
  }
  if (a.visible === true) {
    out.visibility = 'visible';
    delete a.visible;
    ctx.spelling('assertions[].visible', 'visibility: visible', 'the element is visible');
  }
  if ('attr' in a && a.assert === 'matches') {
    out.attribute = a.attr;
    out.value_regex = a.pattern;
    delete a.attr;
    delete a.assert;
    delete a.pattern;
    ctx.spelling('assertions[].attr + assert: matches + pattern', 'attribute + value_regex', 'the element\'s attribute matches the regex');
  }
  if ('expected' in a) {
    const e = a.expected;
    delete a.expected;
    if (e === 'exists') out.exists = true;
    else if (e === 'visible') out.visibility = 'visible';
    else ctx.issue(`${at}.expected`, `unknown expectation ${JSON.stringify(e)} (known: exists, visible)`);
    ctx.spelling('assertions[].expected: exists|visible', 'exists / visibility: visible', 'the element exists / is visible');
  }
  if ('textContains' in a) {
    const texts = [a.textContains, ...(Array.isArray(a.i18nFallback) ? a.i18nFallback : [])].filter((t): t is string => typeof t === 'string');
    out.text_any = [...new Set(texts)];
    delete a.textContains;
    delete a.i18nFallback;
    ctx.spelling('assertions[].textContains (+ i18nFallback)', 'text_any', 'a matching element\'s text contains the text or one of its translations');
  }
  if ('attribute' in a) {
    out.attribute = a.attribute;
    delete a.attribute;
    if ('valueRegex' in a) {
      out.value_regex = a.valueRegex;
      delete a.valueRegex;
    }
    ctx.spelling('assertions[].attribute + valueRegex', 'attribute + value_regex', 'a matching element has the attribute, its value matching the regex');
  }
  for (const k of Object.keys(a)) out[k] = a[k]; // unknown keys meet the canonical schema
  return out;
}
