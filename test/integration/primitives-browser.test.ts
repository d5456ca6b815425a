import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../src/primitives/browser-common';
import { SCREENSHOT } from '../../src/primitives/browser-screenshot';
import { RENDER_DOM } from '../../src/primitives/browser-render-dom';
import { rolesPort } from '../../src/primitives/auth/provider';
import { RolesSchema } from '../../src/model/roles';
import { runNode } from '../../src/primitives/run-chain';
import type { JudgeRequest, PrimitiveEnv } from '../../src/primitives/types';
import type { DagNode } from '../../src/model/dag';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

let browser: Browser;
let server: http.Server;
let baseUrl: string;
let artifacts: string;
let closedUrl: string;
const requested: string[] = [];

const ITEMS = Array.from({ length: 30 }, (_, i) => `<li class="item">Item number ${i + 1} <button onclick="alert(1)">open</button></li>`).join('');
const HOME = `<!doctype html><html><head><title>Fixture Items</title>
<style>body{font-family:sans-serif;background:#f4f4f8} h1{color:#235} .item{padding:6px;border-bottom:1px solid #ccd}</style>
<link rel="stylesheet" href="/missing.css"><script src="https://cdn.example.com/lib.js"></script></head>
<body><!-- a comment --><header><h1>Fixture Items</h1><nav><a href="/">Home</a> <a href="/account">Account</a></nav></header>
<main><ul>${ITEMS}</ul><img alt="dot" src="data:image/png;base64,iVBORw0KGgo="><svg width="10" height="10"><circle r="4"/></svg>
<p style="color:red">Styled paragraph</p><div id="late"></div></main>
<script>setTimeout(function(){document.getElementById('late').innerHTML='<p id="hydrated">Hydrated by script</p>'},300)</script></body></html>`;

before(async () => {
  artifacts = mkdtempSync(join(tmpdir(), 'sb-browser-'));
  browser = await launchChromium();
  server = http.createServer((req, res) => {
    requested.push(req.url ?? '');
    const cookie = req.headers.cookie ?? '';
    const url = new URL(req.url ?? '/', 'http://x');
    const html = (status: number, body: string) => {
      res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    if (url.pathname === '/') return html(200, HOME);
    if (url.pathname === '/account') return html(200, `<html><body><h1>${/sess=ok/.test(cookie) ? 'Welcome eval_admin' : 'Please log in'}</h1><p>${'Account details. '.repeat(20)}</p><p id="hdr">${req.headers['x-extra'] ?? ''}</p></body></html>`);
    if (url.pathname === '/login' && req.method === 'POST') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Set-Cookie': 'sess=ok; Path=/; HttpOnly' });
      return res.end('{"ok":true}');
    }
    if (url.pathname === '/form') return html(200, `<html><body><input id="q"><button id="go" onclick="document.getElementById('out').textContent='Searched: '+document.getElementById('q').value">Go</button><p id="out">nothing yet</p><p>${'Filler text. '.repeat(30)}</p></body></html>`);
    if (url.pathname === '/tiny') return html(200, '<html><body>x</body></html>');
    if (url.pathname === '/broken') return html(500, `<html><body><h1>Internal error</h1>${'stack '.repeat(60)}</body></html>`);
    html(404, '<html><body>not found</body></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
  closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((r) => closed.close(() => r()));
});
after(async () => {
  await browser?.close();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(artifacts, { recursive: true, force: true });
});

function env(extra: Partial<PrimitiveEnv> = {}): PrimitiveEnv {
  const roles = RolesSchema.parse({
    admin: { username: 'eval_admin', password: 'pw', login: { path: '/login', body: { u: '{{username}}', p: '{{password}}' } } },
    header_role: { api_key: { headers: { 'X-Extra': 'from-role' } } },
  });
  const noExec = async () => ({ exitCode: 1, stdout: '', stderr: '', timedOut: false });
  return httpEnv(baseUrl, { artifactsDir: artifacts, browser: async () => browser, roles: rolesPort(roles, { baseUrl, appService: 'app', exec: noExec, cacheKey: 'browser-test' }), ...extra });
}

describe('SCREENSHOT with Debian Chromium on a page served on 127.0.0.1', () => {
  test('a published-style loopback URL is mapped onto the app; a JPEG over 1 KiB lands in the artifacts; the DOM is kept sanitized', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(SCREENSHOT, { url: 'http://localhost:8020/', name: 'FE_HOME', wait_until: 'domcontentloaded', settle_ms: 600, viewport: { width: 1280, height: 900 }, full_page: false, timeout_ms: 15000, steps: [] }, ctx);
    assert.equal(r.passed, true, r.message);
    const file = ctx.state.vars.last_screenshot as string;
    assert.ok(file.startsWith(artifacts) && file.endsWith('.jpg'));
    assert.ok(statSync(file).size > 1024, `${statSync(file).size} B`);
    assert.deepEqual(readFileSync(file).subarray(0, 3), Buffer.from([0xff, 0xd8, 0xff]), 'JPEG magic');
    assert.deepEqual(ctx.state.vars.screenshots, [file]);
    const dom = ctx.state.vars.rendered_dom as string;
    assert.match(dom, /Fixture Items/);
    assert.match(dom, /Hydrated by script/, 'settled after the script ran');
    for (const gone of [/<script/i, /<style/i, /<svg/i, /<link/i, /onclick=/i, /style="/i, /data:image/i, /a comment/]) assert.doesNotMatch(dom, gone);
    assert.equal(ctx.state.vars.last_page_title, 'Fixture Items');
    assert.ok(!requested.some((u) => u.includes('cdn.example.com')), 'other origins are never contacted');
  });

  test('login_as (published {username, password, base_url} form) browses with the declared role\'s session cookies', async () => {
    const anon = makeCtx(env());
    await runPrimitive(SCREENSHOT, { url: '/account', settle_ms: 0 }, anon);
    assert.match(anon.state.vars.rendered_dom as string, /Please log in/);
    const ctx = makeCtx(env());
    const r = await runPrimitive(SCREENSHOT, { url: 'http://localhost:8020/account', settle_ms: 0, login_as: { username: 'eval_admin', password: 'EvalPass12345!', base_url: 'http://localhost:8020' } }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.match(ctx.state.vars.rendered_dom as string, /Welcome eval_admin/);
    const hdr = makeCtx(env());
    await runPrimitive(RENDER_DOM, { url: '/account', settle_ms: 0, login_as: { role: 'header_role' } }, hdr);
    assert.match(hdr.state.vars.rendered_dom as string, /<p id="hdr">from-role<\/p>/, 'role headers go with every request');
    const nobody = await runPrimitive(SCREENSHOT, { url: '/account', login_as: { username: 'ghost' } }, makeCtx(env()));
    assert.equal(nobody.passed, false);
    assert.match(nobody.message, /login_as ghost: no declared role has that username \(declared: admin, header_role\)/);
  });

  test('steps: fill, click, press_key, eval_js; a failing step fails the primitive but the screenshot is kept', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(SCREENSHOT, { url: '/form', settle_ms: 100, steps: [{ action: 'fill', selector: '#q', value: 'llamas' }, { action: 'click', selector: '#nope, #go' }, { action: 'press_key', selector: '#q', key: 'End' }, { action: 'eval_js', script: "document.body.setAttribute('data-x','1'); document.getElementById('out').textContent += '!'" }, { action: 'wait', ms: 50 }] }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.match(ctx.state.vars.rendered_dom as string, /Searched: llamas!/);
    const failing = makeCtx(env());
    const f = await runPrimitive(SCREENSHOT, { url: '/form', settle_ms: 0, timeout_ms: 1000, steps: [{ action: 'click', selector: '#does-not-exist' }] }, failing);
    assert.equal(f.passed, false);
    assert.match(f.message, /step 1 \(click\) failed/);
    assert.ok(existsSync(failing.state.vars.last_screenshot as string), 'evidence kept');
  });

  test('a 500 page fails but is captured; a closed port fails without a screenshot; other hosts are refused', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(SCREENSHOT, { url: '/broken', settle_ms: 0 }, ctx);
    assert.equal(r.passed, false);
    assert.match(r.message, /answered 500/);
    assert.ok(ctx.state.vars.last_screenshot);
    const closed = await runPrimitive(SCREENSHOT, { url: '/' }, makeCtx(env({ baseUrl: closedUrl })));
    assert.equal(closed.passed, false);
    assert.match(closed.message, /navigation to http:\/\/127\.0\.0\.1:\d+\/ failed: .*ERR_CONNECTION_REFUSED/);
    const external = await runPrimitive(SCREENSHOT, { url: 'https://example.com/' }, makeCtx(env()));
    assert.match(external.message, /not the app under test/);
  });
});

describe('RENDER_DOM', () => {
  test('hydrated, sanitized DOM; expect_text; max_chars; too small fails', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(RENDER_DOM, { url: '/', settle_ms: 0, expect_text: ['Fixture Items', 'Hydrated by script', 'Item number 30'], max_chars: 1000 }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.equal((ctx.state.vars.rendered_dom as string).length, 1000);
    assert.ok((ctx.state.vars.rendered_dom_length as number) > 1000);
    assert.ok(existsSync((r.data as { file: string }).file));
    const missing = await runPrimitive(RENDER_DOM, { url: '/', settle_ms: 0, expect_text: ['Checkout'] }, makeCtx(env()));
    assert.match(missing.message, /page lacks "Checkout"/);
    const tiny = await runPrimitive(RENDER_DOM, { url: '/tiny', settle_ms: 0 }, makeCtx(env()));
    assert.equal(tiny.passed, false);
    assert.match(tiny.message, /rendered DOM has \d+ characters \(need > 200\)/);
    const notFound = await runPrimitive(RENDER_DOM, { url: '/nothing-here', settle_ms: 0 }, makeCtx(env()));
    assert.match(notFound.message, /answered 404/);
  });
});

describe('SCREENSHOT → P17: the judge gets the image and the rendered HTML', () => {
  test('llm-judge node: screenshot evidence; no screenshot → 0 without asking', async () => {
    const asked: JudgeRequest[] = [];
    const judge = { judge: async (req: JudgeRequest) => (asked.push(req), { skipped: false as const, score: 5, reasoning: 'clear layout' }) };
    const node: DagNode = {
      id: 'FE_HOMEPAGE_LAYOUT',
      description: '',
      prereqs: [],
      chain: [
        { type: 'SCREENSHOT', inputs: { url: 'http://localhost:8020/', name: 'FE_HOMEPAGE_LAYOUT', wait_until: 'domcontentloaded', settle_ms: 400, full_page: false, viewport: { width: 1280, height: 900 }, steps: [], timeout_ms: 15000 } },
        { type: 'P17', inputs: { rubric_id: 'FE_HOMEPAGE_LAYOUT', evidence_type: 'screenshot', evidence_source: 'screenshot', prompt: 'Look for a topic list.', rubric_prompt: 'Evaluate the homepage layout. Score 0-6.', score_range: [0, 6], max_score: 6 } },
      ],
      scoring: { category: 'Frontend', subcategory: 'HomepageLayout', method: 'llm-judge', maxScore: 6 },
    };
    const run = await runNode(node, env({ judge }), { judgeEnabled: true, vars: {} });
    assert.deepEqual([run.status, run.score], ['PASSED', 5]);
    assert.equal(asked.length, 1);
    assert.equal(asked[0].evidence.images?.length, 1);
    assert.equal(asked[0].evidence.images![0].mediaType, 'image/jpeg');
    assert.ok(Buffer.from(asked[0].evidence.images![0].base64, 'base64').length > 1024);
    assert.match(asked[0].evidence.text, /Fixture Items/);
    assert.match(asked[0].rubric, /^Evaluate the homepage layout\. Score 0-6\.\n\nWhat to look for:\nLook for a topic list\.$/);
    assert.equal(asked[0].maxScore, 6);
    const down = await runNode(node, env({ judge, baseUrl: closedUrl }), { judgeEnabled: true, vars: {} });
    assert.deepEqual([down.status, down.score], ['FAILED', 0]);
    assert.match(down.steps[1].message, /no screenshot evidence: no screenshot was captured earlier in this chain — scored 0 without asking the judge/);
    assert.equal(asked.length, 1, 'not asked without evidence');
  });
});
