import type { DialectContext, StepDialect } from './types';
import { isObject, type Inputs } from './util';
import { ADMIN, domAssert } from './browser-assert';

/**
 * Browser steps. SCREENSHOT/RENDER_DOM are canonical already apart from a few keys; P18 is
 * BROWSER_INTERACT and P19 DOM_ASSERT, each task spelling its steps and assertions its own way
 * (what each task's evaluator did is in docs/compatibility.md#browser).
 */

/** Tasks whose evaluator's P18 / P19 was a "not implemented" stub (always failing). */
const STUB: Record<string, Record<string, string>> = {
  P18: { gmdnohlg: 'not implemented', jzssnoqp: 'not implemented (a CSS style check stub)' },
  P19: { aoiwqoiq: 'not implemented', jzssnoqp: 'not implemented (an accessibility check stub)' },
};

const stub = (type: string, inputs: Inputs, ctx: DialectContext) => ({
  type: 'PUBLISHED_STUB',
  inputs: { published_type: type, reason: `task_${ctx.task}'s evaluator: ${STUB[type][ctx.task]}`, published_inputs: inputs },
});

export const browserDialect: StepDialect = {
  types: ['SCREENSHOT', 'RENDER_DOM', 'P18', 'P19'],
  normalize(type, raw, ctx) {
    const inputs = { ...raw };
    if (STUB[type]?.[ctx.task]) return stub(type, inputs, ctx);
    if (type === 'SCREENSHOT') return { type, inputs: screenshot(inputs, ctx) };
    if (type === 'RENDER_DOM') return { type, inputs: renderDom(inputs, ctx) };
    if (type === 'P18') return { type: 'BROWSER_INTERACT', inputs: interact(inputs, ctx) };
    return { type: 'DOM_ASSERT', inputs: domAssert(inputs, ctx) };
  },
};

/** mjobbzsi's SCREENSHOT `actions`: the shared steps with `timeout` for wait and `mousemove`. */
function screenshot(i: Inputs, ctx: DialectContext): Inputs {
  if (Array.isArray(i.actions)) {
    if (i.steps !== undefined) ctx.issue('inputs.actions', 'actions and steps are both given');
    const notes: Inputs = {};
    i.steps = i.actions.map((a, n) => browserStep(a, ctx, `inputs.actions[${n}]`, notes));
    if (Object.keys(notes).length) i._step_notes = notes;
    delete i.actions;
    ctx.spelling('actions[]', 'steps[]', 'browser steps run after the page opened (wait.timeout = wait.ms; mousemove = mouse_move to the middle of the viewport)');
  }
  return i;
}

function renderDom(i: Inputs, ctx: DialectContext): Inputs {
  if ('no_auth' in i) {
    const v = i.no_auth;
    delete i.no_auth;
    if (typeof v !== 'boolean') ctx.issue('inputs.no_auth', 'must be true or false');
    else i.anonymous = v;
    ctx.spelling('no_auth', 'anonymous', 'open the page without the chain\'s session');
  }
  if ('login_first' in i) {
    const on = i.login_first;
    const l = { url: i.login_url, username: i.login_username, password: i.login_password };
    for (const k of ['login_first', 'login_url', 'login_username', 'login_password']) delete i[k];
    if (on === true) {
      if (typeof l.url !== 'string') ctx.issue('inputs.login_url', 'login_first needs login_url');
      // task_cvyocaao's evaluator filled the first of these and clicked the first submit (Keycloak's form first)
      i.form_login = { url: l.url, username: String(l.username ?? 'admin'), password: String(l.password ?? 'admin'), username_selectors: ['#username', 'input[name=username]', 'input[type=email]'], password_selectors: ['#password', 'input[name=password]', 'input[type=password]'], submit_selectors: ['#kc-login', 'input[type=submit]', 'button[type=submit]'] };
    } else if (on !== false) ctx.issue('inputs.login_first', 'must be true or false');
    ctx.spelling('login_first + login_url/login_username/login_password', 'form_login', 'log in through the form at login_url (username, password, submit: the first field that exists) before opening the page');
  }
  if ('use_landing' in i) {
    const v = i.use_landing;
    delete i.use_landing;
    if (typeof v !== 'boolean') ctx.issue('inputs.use_landing', 'must be true or false');
    // the published evaluator rendered the page its browser login landed on instead of `url`;
    // the app's post-login landing page is that url, opened with the chain's (logged-in) session
    ctx.spelling('use_landing', 'url (in the chain\'s session)', 'render the page a logged-in user lands on (the url the task gives) rather than navigating anonymously');
  }
  return i;
}

/** One published browser step → the canonical step(s) (a kmasmnil `login` is several). */
function browserSteps(raw: unknown, ctx: DialectContext, at: string, notes: Inputs): Inputs[] {
  if (isObject(raw) && raw.action === 'tab') {
    // gavmyneb: `tab` `times` = that many Tab presses
    const n = typeof raw.times === 'number' ? raw.times : 1;
    ctx.spelling('steps[].action: tab (times)', 'press Tab × times', 'move the keyboard focus');
    return Array.from({ length: n }, () => ({ action: 'press', key: 'Tab' }));
  }
  return [browserStep(raw, ctx, at, notes)];
}

function browserStep(raw: unknown, ctx: DialectContext, at: string, notes: Inputs): Inputs {
  if (!isObject(raw) || typeof raw.action !== 'string') {
    ctx.issue(at, 'a step is an object with an action');
    return isObject(raw) ? raw : {};
  }
  const s: Inputs = { ...raw };
  // an author's note on a step is kept with the step's notes
  for (const k of Object.keys(s)) if (k === 'comment' || k.startsWith('_')) {
    notes[`${at}.${k}`] = s[k];
    delete s[k];
  }
  switch (s.action) {
    case 'navigate':
      s.action = 'goto';
      ctx.spelling('steps[].action: navigate', 'goto', 'open a URL in the page');
      return s;
    case 'wait':
      if ('timeout' in s) {
        s.ms = s.timeout;
        delete s.timeout;
        ctx.spelling('steps[].wait.timeout', 'wait.ms', 'pause this many milliseconds');
      }
      return s;
    case 'type':
      s.action = 'fill';
      s.value = s.text ?? '';
      delete s.text;
      ctx.spelling('steps[].action: type (text)', 'fill (value)', 'type text into a field');
      return s;
    case 'press':
      if (!('key' in s)) s.key = 'Enter';
      return s;
    case 'mousemove':
      s.action = 'mouse_move';
      ctx.spelling('steps[].action: mousemove', 'mouse_move', 'move the pointer (to the middle of the viewport when no x/y)');
      return s;
    default:
      return s;
  }
}


function interact(i: Inputs, ctx: DialectContext): Inputs {
  const out: Inputs = {};
  const take = (k: string) => {
    const v = i[k];
    delete i[k];
    return v;
  };
  if (ctx.task === 'kmasmnil') {
    // actions: login through the Formbricks form, cookies, status and URL assertions
    const actions = take('actions');
    out.anonymous = true;
    const kept = new Set<string>();
    out.steps = Array.isArray(actions) ? actions.flatMap((a, n) => kmasmnilAction(a, ctx, `inputs.actions[${n}]`, kept)) : [];
    if (!Array.isArray(actions)) ctx.issue('inputs.actions', 'a list of actions is required');
    ctx.spelling('actions[] (login, navigate, get_cookie, set_cookie, logout, assert_status, assert_url_contains)', 'steps[]', 'a scripted browser session: form login, navigation, cookies, status and URL assertions');
  } else if (ctx.task === 'xayqujrv') {
    // url + wait_ms; the admin's token in cookie "t" unless no_auth
    out.url = take('url');
    const wait = take('wait_ms');
    const noAuth = take('no_auth');
    out.wait_until = 'load';
    out.timeout_ms = 25_000;
    out.settle_ms = typeof wait === 'number' ? Math.min(wait, 10_000) : 5000;
    out.min_html_chars = 1000;
    out.fail_on_error_title = true;
    if (noAuth === true) out.anonymous = true;
    else Object.assign(out, { login_as: ADMIN, token_cookie: 't' });
    if ('selector' in i) out.wait_for_selector = take('selector');
    ctx.spelling('url + wait_ms (+ no_auth)', 'url, settle_ms (≤ 10 s), min_html_chars 1000, fail_on_error_title; login_as admin + token_cookie "t" unless no_auth', 'open the page as the admin (token in cookie t) or anonymously; it must render more than 1000 characters and not be an error page');
  } else if (ctx.task === 'ididetxj') {
    // url + actions [{wait_for_selector, timeout_ms} | {click} | {fill: {selector, value}}]; the admin's session token in cookie accessToken
    out.url = take('url');
    const browser = take('browser');
    if (browser !== undefined && browser !== 'chromium') ctx.issue('inputs.browser', `only chromium is available (got ${JSON.stringify(browser)})`);
    if ('auth_cookie' in i) {
      take('auth_cookie');
      Object.assign(out, { login_as: ADMIN, token_cookie: 'accessToken' });
      ctx.spelling('auth_cookie', 'login_as: admin + token_cookie: accessToken', 'browse as the admin, its token in the accessToken cookie (the evaluator minted an admin session there)');
    }
    const actions = take('actions');
    const steps: Inputs[] = [];
    let timeout = 15_000;
    for (const [n, a] of (Array.isArray(actions) ? actions : []).entries()) {
      if (isObject(a) && typeof a.wait_for_selector === 'string') {
        steps.push({ action: 'wait_for_selector', selector: a.wait_for_selector });
        if (typeof a.timeout_ms === 'number') timeout = Math.max(timeout, a.timeout_ms);
      } else if (isObject(a) && typeof a.click === 'string') steps.push({ action: 'click', selector: a.click });
      else if (isObject(a) && isObject(a.fill)) steps.push({ action: 'fill', selector: a.fill.selector, value: a.fill.value });
      else ctx.issue(`inputs.actions[${n}]`, 'expected {wait_for_selector, timeout_ms}, {click} or {fill: {selector, value}}');
    }
    out.steps = steps;
    out.timeout_ms = timeout;
    ctx.spelling('actions[{wait_for_selector | click | fill}]', 'steps[]', 'wait for / click / fill elements of the page');
  } else if (ctx.task === 'ychlukjm') {
    out.url = take('url');
    out.wait_until = 'domcontentloaded';
    out.settle_ms = 3000;
    if ('wait_for' in i) out.wait_for_selector = take('wait_for');
    ctx.spelling('url + wait_for', 'url, wait_for_selector, settle_ms 3000', 'open the page and wait for the element');
  } else {
    // steps (mjobbzsi: a Jitsi page with fake camera/microphone; rjhcjrst: a form login in steps)
    const steps = take('steps');
    out.anonymous = true;
    if (ctx.task === 'mjobbzsi') out.fake_media = true;
    const notes: Inputs = {};
    out.steps = Array.isArray(steps) ? steps.flatMap((s, n) => browserSteps(s, ctx, `inputs.steps[${n}]`, notes)) : [];
    if (Object.keys(notes).length) out._step_notes = notes;
    if (!Array.isArray(steps)) ctx.issue('inputs.steps', 'a list of steps is required');
    if ('url' in i) out.url = take('url');
    ctx.spelling('steps[] (navigate|goto, click, fill|type, wait, press, screenshot, mouse_move, evaluate)', 'steps[]', 'a scripted browser session in a fresh browser');
  }
  return { ...out, ...i };
}

function kmasmnilAction(raw: unknown, ctx: DialectContext, at: string, kept: Set<string>): Inputs[] {
  if (!isObject(raw) || typeof raw.action !== 'string') {
    ctx.issue(at, 'an action is an object with an action name');
    return [];
  }
  const a = raw;
  switch (a.action) {
    case 'login': {
      const c = isObject(a.credentials) ? a.credentials : {};
      // the evaluator's Formbricks login: /auth/login, the optional "Login with Email" button, #email, #password, submit
      return [
        { action: 'goto', url: '/auth/login' },
        { action: 'wait_for_load', state: 'networkidle', timeout_ms: 30_000 },
        { action: 'wait', ms: 2000 },
        { action: 'click_if_present', selector: 'button:has-text("Login with Email")' },
        { action: 'wait', ms: 2000 },
        { action: 'fill', selector: '#email', value: String(c.email ?? '{{admin_email}}') },
        { action: 'fill', selector: '#password', value: String(c.password ?? '{{admin_password}}') },
        { action: 'click', selector: 'button:has-text("Login with Email"), button[type="submit"]' },
        { action: 'wait', ms: 5000 },
      ];
    }
    case 'navigate':
      return [{ action: 'goto', url: a.url }, { action: 'wait_for_load', state: 'networkidle', timeout_ms: 6000 }, { action: 'wait', ms: 10_000 }];
    case 'get_cookie':
      kept.add(String(a.store_as ?? a.name));
      return [{ action: 'get_cookie', name: a.name, store_as: a.store_as ?? a.name }];
    case 'set_cookie': {
      // "{{x}}" naming a cookie an earlier get_cookie of these actions kept: read when the step runs
      const m = typeof a.value === 'string' ? /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(a.value) : null;
      if (m && kept.has(m[1])) {
        ctx.spelling('set_cookie value "{{kept}}"', 'set_cookie value_from', 'the cookie value an earlier get_cookie of the same session kept');
        return [{ action: 'set_cookie', name: a.name, value_from: m[1] }];
      }
      return [{ action: 'set_cookie', name: a.name, value: a.value }];
    }
    case 'logout':
      return [{ action: 'goto', url: '/auth/login' }, { action: 'wait_for_load', state: 'networkidle', timeout_ms: 15_000 }, { action: 'clear_cookies' }];
    case 'assert_status':
      return [{ action: 'assert_status', status: a.expected ?? 200 }];
    case 'assert_url_contains':
      return [{ action: 'assert_url_contains', value: a.expected }];
    default:
      ctx.issue(`${at}.action`, `unknown action ${JSON.stringify(a.action)}`);
      return [];
  }
}
