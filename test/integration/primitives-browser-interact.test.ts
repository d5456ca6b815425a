import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../src/primitives/browser-common';
import { BROWSER_INTERACT } from '../../src/primitives/browser-interact';
import { livePage } from '../../src/primitives/browser-live';
import { DOM_ASSERT } from '../../src/primitives/dom-assert';
import { RENDER_DOM } from '../../src/primitives/browser-render-dom';
import { releaseChain } from '../../src/primitives/chain-resources';
import { runNode } from '../../src/primitives/run-chain';
import type { PrimitiveEnv } from '../../src/primitives/types';
import type { DagNode } from '../../src/model/dag';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

let browser: Browser;
let server: http.Server;
let baseUrl: string;
let artifacts: string;

const page = (body: string, head = '') => `<!doctype html><html lang="de-DE"><head><title>Fixture</title>${head}</head><body>${body}<p>${'Filler text for length. '.repeat(60)}</p></body></html>`;

before(async () => {
  artifacts = mkdtempSync(join(tmpdir(), 'sb-interact-'));
  browser = await launchChromium();
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const loggedIn = /(^|;\s*)sid=ok/.test(req.headers.cookie ?? '');
    const html = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', ...headers });
      res.end(body);
    };
    if (url.pathname === '/login' && req.method === 'POST') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const f = new URLSearchParams(body);
        if (f.get('email') === 'admin@x.test' && f.get('password') === 'pw') html(302, '', { Location: '/dashboard', 'Set-Cookie': 'sid=ok; Path=/' });
        else html(401, page('<h1>Wrong password</h1>'));
      });
      return;
    }
    if (url.pathname === '/login') return html(200, page('<form method="post" action="/login"><input name="email" type="email"><input name="password" type="password"><button type="submit">Sign in</button></form>'));
    if (url.pathname === '/dashboard') {
      if (!loggedIn) return html(302, '', { Location: '/login?next=/dashboard' });
      return html(200, page(`<nav class="navbar main">Menu</nav><h1 class="title">Tableau de bord</h1><ul><li>a</li><li>b</li><li>c</li></ul>
        <div class="toolbar" style="opacity:0.3">tools</div><div class="ghost" style="display:none">ghost</div><div class="solid">solid</div>
        <button id="reveal" onclick="document.querySelector('.toolbar').style.opacity='1'">reveal</button>`));
    }
    if (url.pathname === '/spa') return html(200, page('<div id="root"></div><p id="present">static</p><script>document.getElementById("root").innerHTML = "<span id=\\"added\\">by script</span>"</script>'));
    if (url.pathname === '/media') return html(200, page('<p id="m">waiting</p><script>navigator.mediaDevices.getUserMedia({ video: true }).then(function () { document.getElementById("m").textContent = "camera ok"; }, function (e) { document.getElementById("m").textContent = "camera " + e.name; })</script>'));
    if (url.pathname === '/whoami') return html(200, page(`<p id="who">${(/(?:^|;\s*)t=([^;]+)/.exec(req.headers.cookie ?? '') ?? [])[1] ?? 'nobody'}</p><p id="hdr">${req.headers.authorization ?? ''}</p>`));
    if (url.pathname === '/gone') return html(404, page('<h1>Not here</h1>'));
    html(404, 'not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await browser?.close();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(artifacts, { recursive: true, force: true });
});

const env = (extra: Partial<PrimitiveEnv> = {}) => httpEnv(baseUrl, { artifactsDir: artifacts, browser: async () => browser, ...extra });
// chains run here outside run-chain: give their pages back after each test, passed or not
const chains: ReturnType<typeof makeCtx>[] = [];
const chain = () => {
  const c = makeCtx(env());
  chains.push(c);
  return c;
};
afterEach(async () => {
  for (const c of chains.splice(0)) await releaseChain(c.state);
});

const LOGIN_STEPS = [
  { action: 'goto', url: '/login' },
  { action: 'click_if_present', selector: 'button:has-text("Login with Email")' },
  { action: 'fill', selector: 'input[name=email]', value: 'admin@x.test' },
  { action: 'fill', selector: 'input[name=password]', value: 'pw' },
  { action: 'click', selector: 'button[type=submit]' },
  { action: 'wait_for_load', state: 'load', timeout_ms: 5000 },
];

describe('BROWSER_INTERACT + DOM_ASSERT on pages served on 127.0.0.1 (Debian Chromium)', () => {
  test('a form login in steps; cookies into variables; status and URL assertions; the page stays open for DOM_ASSERT', async () => {
    const ctx = chain();
    const r = await runPrimitive(BROWSER_INTERACT, { anonymous: true, steps: [...LOGIN_STEPS, { action: 'assert_url_contains', value: '/dashboard' }, { action: 'get_cookie', name: 'sid', store_as: 'kept_sid' }, { action: 'goto', url: '/dashboard' }, { action: 'assert_status', status: 200 }, { action: 'screenshot', name: 'dash' }] }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.equal(ctx.state.exports.kept_sid, 'ok', 'get_cookie exports its value');
    assert.match(String(ctx.state.vars.last_page_url), /\/dashboard$/);
    assert.ok(existsSync(String(ctx.state.vars.last_screenshot)));
    const a = await runPrimitive(DOM_ASSERT, { assertions: [
      { selector: 'nav.navbar, header nav' },
      { selector: 'h1, h2', text_any: ['Dashboard', 'tableau DE BORD'], case_insensitive: true },
      { selector: 'li', min_count: 3 },
      { selector: 'html', attribute: 'lang', value_regex: '^de(-DE|_DE)?$' },
      { selector: '.solid', visibility: 'visible' },
      { selector: '.toolbar, .ghost', visibility: 'hidden_or_faded' },
      { selector: '.nothing-like-this', exists: false },
    ] }, ctx);
    assert.equal(a.passed, true, a.message);
    assert.match(a.message, /7\/7 DOM assertion\(s\) hold on the open page \(\/dashboard\)/);
    const fail = await runPrimitive(DOM_ASSERT, { assertions: [{ selector: 'h1', text_any: ['Dashboard'] }, { selector: 'li', min_count: 4 }, { selector: '.solid', visibility: 'hidden_or_faded' }, { selector: 'html', attribute: 'lang', value_regex: '^en' }, { selector: 'a:bogus(' }] }, ctx);
    assert.equal(fail.passed, false);
    const why = (fail.data as { results: { why: string }[] }).results.map((x) => x.why);
    assert.match(why[0], /no match's text contains "Dashboard"/, 'case-sensitive by default');
    assert.match(why[1], /3 element\(s\) match \(need ≥ 4\)/);
    assert.match(why[2], /fully visible/);
    assert.match(why[3], /no match has lang matching \/\^en\/ \(values: "de-DE"\)/);
    assert.match(why[4], /invalid selector/);
    const any = await runPrimitive(DOM_ASSERT, { require: 'any', assertions: [{ selector: '#nope' }, { selector: 'nav' }] }, ctx);
    assert.equal(any.passed, true, any.message);
    // revealing the toolbar changes what the open page shows
    const cont = await runPrimitive(BROWSER_INTERACT, { continue: true, url: '/dashboard', steps: [{ action: 'click', selector: '#reveal' }] }, ctx);
    assert.equal(cont.passed, true, cont.message);
    const shown = await runPrimitive(DOM_ASSERT, { assertions: [{ selector: '.toolbar', visibility: 'hidden_or_faded' }] }, ctx);
    assert.equal(shown.passed, false, 'the toolbar is fully visible now');
    // DOM_ASSERT with a url navigates the open page: the form login's cookie is still there
    const there = await runPrimitive(DOM_ASSERT, { url: '/dashboard', settle_ms: 0, assertions: [{ selector: 'nav' }] }, ctx);
    assert.equal(there.passed, true, there.message);
    const fresh = await runPrimitive(BROWSER_INTERACT, { url: '/dashboard' }, ctx);
    assert.match(String(ctx.state.vars.last_page_url), /\/login\?next=/, `a fresh browser has no login cookie (${fresh.message})`);
    await releaseChain(ctx.state);
    assert.equal(livePage(ctx.state), undefined, 'closed when the chain ends');
  });

  test('cookies: clear_cookies logs out; set_cookie restores; assertions that fail name the step; a 404 first page fails', async () => {
    const ctx = chain();
    const r = await runPrimitive(BROWSER_INTERACT, { anonymous: true, steps: [...LOGIN_STEPS, { action: 'clear_cookies' }, { action: 'goto', url: '/dashboard' }, { action: 'assert_url_contains', value: '/login' }, { action: 'set_cookie', name: 'sid', value: 'ok' }, { action: 'goto', url: '/dashboard' }, { action: 'assert_url_contains', value: '/dashboard' }] }, ctx);
    assert.equal(r.passed, true, r.message);
    const replay = await runPrimitive(BROWSER_INTERACT, { anonymous: true, steps: [...LOGIN_STEPS, { action: 'get_cookie', name: 'sid', store_as: 'kept' }, { action: 'clear_cookies' }, { action: 'set_cookie', name: 'sid', value_from: 'kept' }, { action: 'goto', url: '/dashboard' }, { action: 'assert_url_contains', value: '/dashboard' }] }, ctx);
    assert.equal(replay.passed, true, replay.message);
    assert.equal(r.passed, true, r.message);
    const bad = await runPrimitive(BROWSER_INTERACT, { url: '/login', steps: [{ action: 'assert_status', status: 404 }] }, ctx);
    assert.equal(bad.passed, false);
    assert.match(bad.message, /step 1 \(assert_status\) failed: the last navigation answered 200, expected 404/);
    const gone = await runPrimitive(BROWSER_INTERACT, { url: '/gone' }, ctx);
    assert.equal(gone.passed, false);
    assert.match(gone.message, /GET \/gone answered 404/);
    const small = await runPrimitive(BROWSER_INTERACT, { url: '/gone', steps: [], min_html_chars: 100_000, fail_on_error_title: true }, chain());
    assert.match(small.message, /HTML has \d+ characters \(need > 100000\)/);
    const click = await runPrimitive(BROWSER_INTERACT, { url: '/login', timeout_ms: 2000, steps: [{ action: 'click', selector: '#missing' }, { action: 'get_cookie', name: 'x', store_as: 'y' }] }, ctx);
    assert.match(click.message, /step 1 \(click\) failed/);
    assert.doesNotMatch(click.message, /step 2/, 'later steps do not run on a page that is not what they expect');
    await releaseChain(ctx.state);
  });

  test('without url DOM_ASSERT reads the chain\'s last HTTP response as static HTML (scripts not run); a newer response wins over the open page', async () => {
    const ctx = chain();
    const res = await fetch(`${baseUrl}/spa`);
    ctx.state.last = { method: 'GET', path: '/spa', status: 200, headers: {}, body: await res.text(), elapsedMs: 1 };
    const r = await runPrimitive(DOM_ASSERT, { assertions: [{ selector: '#present' }, { selector: '#added', exists: false }] }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.match(r.message, /the response of GET \/spa \(200\)/);
    // a browser page opened later is the newer evidence …
    await runPrimitive(BROWSER_INTERACT, { url: '/spa', settle_ms: 200 }, ctx);
    const live = await runPrimitive(DOM_ASSERT, { assertions: [{ selector: '#added' }] }, ctx);
    assert.equal(live.passed, true, live.message);
    // … until an HTTP response arrives after it
    ctx.state.last = { method: 'GET', path: '/login', status: 200, headers: {}, body: page('<form id="f"></form>'), elapsedMs: 1 };
    const newer = await runPrimitive(DOM_ASSERT, { assertions: [{ selector: '#f' }] }, ctx);
    assert.equal(newer.passed, true, newer.message);
    const forced = await runPrimitive(DOM_ASSERT, { source: 'page', assertions: [{ selector: '#added' }] }, ctx);
    assert.equal(forced.passed, true, forced.message);
    await releaseChain(ctx.state);
    const none = await runPrimitive(DOM_ASSERT, { assertions: [{ selector: 'p' }] }, makeCtx(env()));
    assert.match(none.message, /no page is open and the chain has no HTTP response/);
  });

  test('a chain holds at most one page: with one page slot, BROWSER_INTERACT → RENDER_DOM → DOM_ASSERT(url) runs, twice in a row', async () => {
    const prev = process.env.SAASBENCH_BROWSER_PAGES;
    process.env.SAASBENCH_BROWSER_PAGES = '1';
    try {
      const node: DagNode = {
        id: 'ONE_SLOT',
        description: '',
        prereqs: [],
        chain: [
          { type: 'BROWSER_INTERACT', inputs: { anonymous: true, steps: LOGIN_STEPS } },
          { type: 'RENDER_DOM', inputs: { url: '/spa', settle_ms: 0 } },
          { type: 'DOM_ASSERT', inputs: { url: '/spa', assertions: [{ selector: '#added' }] } },
        ],
        scoring: { category: 'Frontend', subcategory: 'x', method: 'binary', maxScore: 1 },
      };
      for (let i = 0; i < 2; i++) {
        const run = await runNode(node, env(), { judgeEnabled: false, vars: {} });
        assert.equal(run.status, 'PASSED', JSON.stringify(run.steps.map((s) => s.message)));
      }
    } finally {
      if (prev === undefined) delete process.env.SAASBENCH_BROWSER_PAGES;
      else process.env.SAASBENCH_BROWSER_PAGES = prev;
    }
  });
});

describe('BROWSER_INTERACT: keyboard focus, URL checks, the token cookie; DOM_ASSERT source texts', () => {
  test('Tab moves the focus onto a visible field; URL assertions; the role token lands in the named cookie; texts in the page source', async () => {
    const ctx = chain();
    const r = await runPrimitive(BROWSER_INTERACT, { url: '/login', steps: [{ action: 'press', key: 'Tab' }, { action: 'assert_focus_visible' }, { action: 'assert_url_not_contains', value: '/dashboard' }] }, ctx);
    assert.equal(r.passed, true, r.message);
    // one chain at a time: each holds a page slot until it is released (two slots here)
    const blank = await runPrimitive(BROWSER_INTERACT, { url: '/spa', steps: [{ action: 'assert_focus_visible' }] }, ctx);
    assert.match(blank.message, /no visible element has the keyboard focus/);
    const still = await runPrimitive(BROWSER_INTERACT, { url: '/login', steps: [{ action: 'assert_url_not_contains', value: '/login' }] }, ctx);
    assert.match(still.message, /still at \/login/);
    await releaseChain(ctx.state);
    const tok = chain();
    tok.state.auth = { role: 'admin', sessions: { admin: { headers: { Authorization: 'Token abc123' }, cookies: [], kind: 'api_key' } } };
    await runPrimitive(BROWSER_INTERACT, { url: '/whoami', token_cookie: 't' }, tok);
    assert.match(String(tok.state.vars.rendered_dom), /<p id="who">abc123<\/p>/);
    const src = await runPrimitive(DOM_ASSERT, { source: 'page', source_contains_any: ['nothing-like-it', 'Token abc123'] }, tok);
    assert.equal(src.passed, true, src.message);
    tok.state.last = { method: 'GET', path: '/x', status: 200, headers: {}, body: '<script>window.parent.postMessage({dimension: 1})</script>', elapsedMs: 1 };
    const resp = await runPrimitive(DOM_ASSERT, { source: 'last_response', source_contains_any: ['postMessage'] }, tok);
    assert.equal(resp.passed, true, resp.message);
    const none = await runPrimitive(DOM_ASSERT, { source: 'last_response', source_contains_any: ['Sign in'] }, tok);
    assert.match(none.message, /the source contains none of \["Sign in"\]/);
  });
});

describe('BROWSER_INTERACT fake_media', () => {
  test('a page granted fake media gets a camera stream; without it the camera is refused', async () => {
    const withMedia = chain();
    await runPrimitive(BROWSER_INTERACT, { url: '/media', fake_media: true, settle_ms: 800 }, withMedia);
    assert.match(String(withMedia.state.vars.rendered_dom), /camera ok/);
    const without = chain();
    await runPrimitive(BROWSER_INTERACT, { url: '/media', settle_ms: 800 }, without);
    assert.doesNotMatch(String(without.state.vars.rendered_dom), /camera ok/);
  });
});

describe('RENDER_DOM: several urls, strip_classes, a form login first, anonymous', () => {
  test('urls are joined under PAGE headers; classes stripped; form_login lands a logged-in page; anonymous ignores the session', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(RENDER_DOM, { urls: ['/login', '/spa'], settle_ms: 0, strip_classes: true }, ctx);
    assert.equal(r.passed, true, r.message);
    const dom = String(ctx.state.vars.rendered_dom);
    assert.match(dom, /^--- PAGE: http:\/\/127\.0\.0\.1:\d+\/login ---/);
    assert.match(dom, /--- PAGE: http:\/\/127\.0\.0\.1:\d+\/spa ---/);
    assert.match(String(ctx.state.vars.rendered_dom_url), /^2 pages: /);
    const logged = makeCtx(env());
    const form_login = { url: '/login', username: 'admin@x.test', password: 'pw', username_selectors: ['#username', 'input[name=email]'], password_selectors: ['input[type=password]'], submit_selectors: ['#kc-login', 'button[type=submit]'] };
    const l = await runPrimitive(RENDER_DOM, { url: '/dashboard', settle_ms: 0, strip_classes: true, form_login }, logged);
    assert.equal(l.passed, true, l.message);
    assert.match(String(logged.state.vars.rendered_dom), /Tableau de bord/);
    assert.doesNotMatch(String(logged.state.vars.rendered_dom), /class=/);
    const wrong = await runPrimitive(RENDER_DOM, { url: '/dashboard', settle_ms: 0, form_login: { ...form_login, submit_selectors: ['#kc-login'] } }, makeCtx(env()));
    assert.equal(wrong.passed, false);
    assert.match(wrong.message, /form login at \/login: no submit button \(#kc-login\)/);
    const anon = makeCtx(env());
    anon.state.auth = { role: 'admin', sessions: { admin: { headers: {}, cookies: [{ name: 'sid', value: 'ok', path: '/' }], kind: 'login' } } };
    await runPrimitive(RENDER_DOM, { url: '/dashboard', settle_ms: 0 }, anon);
    assert.match(String(anon.state.vars.rendered_dom), /Tableau de bord/, 'the session cookie logs in');
    await runPrimitive(RENDER_DOM, { url: '/dashboard', settle_ms: 0, anonymous: true }, anon);
    assert.match(String(anon.state.vars.rendered_dom), /<form/, 'anonymous: redirected to the login form');
  });
});
