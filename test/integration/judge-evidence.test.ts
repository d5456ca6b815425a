import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { clearJudgeMemoryCache, createJudge } from '../../src/judge/judge-port';
import { launchChromium } from '../../src/primitives/browser-common';
import { p17LlmJudge } from '../../src/primitives/p17-llm-judge';
import { runNode } from '../../src/primitives/run-chain';
import type { PrimitiveEnv } from '../../src/primitives/types';
import type { DagNode } from '../../src/model/dag';
import { startFakeJudge, type FakeJudgeServer } from '../fakes/fake-anthropic-judge';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

// Each evidence source of P17, end to end: a chain against a small app on 127.0.0.1, the judge
// a fake Anthropic server; the assertions read what the judge was sent.
let fake: FakeJudgeServer;
let app: http.Server;
let baseUrl: string;
let runDir: string;
const hits: string[] = [];

const PAGE = (title: string) => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>${'Content of the page. '.repeat(40)}</p></body></html>`;

before(async () => {
  fake = await startFakeJudge();
  runDir = mkdtempSync(join(tmpdir(), 'sb-judge-ev-'));
  app = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/a') return json(200, { a: 'alpha-body' });
    if (req.url === '/entry') {
      res.writeHead(201, { 'Content-Type': 'application/json', 'X-Frame-Options': 'DENY', 'Set-Cookie': ['sid=s3cr3t-session; Path=/; HttpOnly; SameSite=Lax', 'csrf=t0ken; Secure'] });
      return res.end(JSON.stringify({ entry: { id: 1, message: '<p>ok</p>' }, other: 'not-shown' }));
    }
    if (req.url === '/b') return json(404, { error: 'beta-not-found' });
    if (req.url === '/realms/x/token') return json(400, { error: 'invalid_grant', error_description: 'token-error-text' });
    if (req.url === '/api/content') return json(200, { gear: ['sword-of-content'] });
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(PAGE(`Page ${req.url}`));
  });
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
});
after(async () => {
  await fake.close();
  await new Promise<void>((r) => app.close(() => r()));
  rmSync(runDir, { recursive: true, force: true });
});
beforeEach(() => {
  fake.reset();
  fake.setHandler(() => ({ text: '{"score": 3, "reasoning": "seen"}' }));
  clearJudgeMemoryCache();
  hits.length = 0;
});

const judge = () => createJudge({ provider: 'anthropic', apiKey: 'sk-test-judge-key', baseUrl: fake.url, model: 'judge-model', cacheDir: null, maxAttempts: 2 });

/** A workspace of three files under /app and one config file outside it. */
const FILES: Record<string, string> = {
  '/app/src/a.rb': 'class A\nend\n',
  '/app/src/b.rb': Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n'),
  '/app/docs/readme.md': '# readme',
  '/etc/php/app.ini': 'session.cookie_secure = 1',
};
const TREE = ['docs/', 'docs/readme.md', 'src/', 'src/a.rb', 'src/b.rb'];
function env(node: string, extra: Partial<PrimitiveEnv> = {}): PrimitiveEnv {
  return httpEnv(baseUrl, {
    judge: judge(),
    artifactsDir: join(runDir, node),
    listTree: async (dir) => (dir === '/app' ? TREE : dir === '/app/src' ? ['a.rb', 'b.rb'] : null),
    statPath: async (p) => (FILES[p] ? 'file' : ['/app', '/app/src', '/app/docs'].includes(p) ? 'dir' : null),
    readFile: async (p) => (FILES[p] !== undefined ? Buffer.from(FILES[p]) : null),
    sql: async () => ({ rows: [{ user_id: 7, event: 'patient-update' }], columns: ['user_id', 'event'] }),
    exec: async (_s, cmd) => ({ exitCode: 0, stdout: `ran: ${cmd}\nINFO request-id=42 GET /`, stderr: '', timedOut: false }),
    ...extra,
  });
}

function node(id: string, chain: DagNode['chain'], prereqs: string[] = []): DagNode {
  return { id, description: '', prereqs, chain, scoring: { category: 'ArchitectureQuality', subcategory: 'X', method: 'llm-judge', maxScore: 5 } };
}
const judgeStep = (inputs: Record<string, unknown>) => ({ type: 'P17', inputs: { rubric_prompt: 'Judge the evidence. Score 0-5.', score_range: [0, 5], ...inputs } });

describe('P17 evidence sources', () => {
  test('chain_responses: every response of the chain, in order, with bodies', async () => {
    const run = await runNode(node('CHAIN', [{ type: 'P04', inputs: { path: '/a' } }, { type: 'P04', inputs: { path: '/b' } }, judgeStep({ evidence_type: 'chain_responses' })]), env('CHAIN'), { judgeEnabled: true, vars: {} });
    assert.equal(run.score, 3, run.message);
    const t = fake.calls[0].text;
    assert.match(t, /#1 GET \/a → 200[\s\S]*alpha-body[\s\S]*#2 GET \/b → 404[\s\S]*beta-not-found/);
  });

  test('last_response: only the last one', async () => {
    await runNode(node('LAST', [{ type: 'P04', inputs: { path: '/a' } }, { type: 'P04', inputs: { path: '/b' } }, judgeStep({ evidence_type: 'last_response' })]), env('LAST'), { judgeEnabled: true, vars: {} });
    assert.match(fake.calls[0].text, /beta-not-found/);
    assert.doesNotMatch(fake.calls[0].text, /alpha-body/);
  });

  test('response_headers: status and headers, cookie values redacted; response_paths: only those values', async () => {
    await runNode(node('HDR', [{ type: 'P04', inputs: { path: '/entry' } }, judgeStep({ evidence_type: ['response_headers', 'last_response'], response_paths: ['$.entry.message'] })]), env('HDR'), { judgeEnabled: true, vars: {} });
    const t = fake.calls[0].text;
    assert.match(t, /x-frame-options: DENY/);
    assert.match(t, /sid=<redacted>; Path=\/; HttpOnly; SameSite=Lax/);
    assert.match(t, /csrf=<redacted>; Secure/);
    assert.doesNotMatch(t, /s3cr3t|t0ken/);
    assert.match(t, /\$\.entry\.message: \["<p>ok<\/p>"\]/);
    assert.doesNotMatch(t, /not-shown/);
  });

  test('prereq_responses: what the prerequisites recorded, filtered by path; none matching → 0 without a call', async () => {
    await runNode(node('PRE_A', [{ type: 'P04', inputs: { path: '/realms/x/token' } }, { type: 'P04', inputs: { path: '/a' } }]), env('PRE_A'), { judgeEnabled: true, vars: {} });
    const run = await runNode(node('PRE_B', [judgeStep({ evidence_type: 'prereq_responses', path_filters: ['/token'] })], ['PRE_A']), env('PRE_B'), { judgeEnabled: true, vars: {} });
    assert.equal(run.score, 3, run.message);
    assert.match(fake.calls[0].text, /GET \/realms\/x\/token → 400[\s\S]*token-error-text/);
    assert.doesNotMatch(fake.calls[0].text, /alpha-body/);
    const none = await runNode(node('PRE_C', [judgeStep({ evidence_type: 'prereq_responses', path_filters: ['/userinfo'] })], ['PRE_A']), env('PRE_C'), { judgeEnabled: true, vars: {} });
    assert.deepEqual([none.status, none.score, fake.calls.length], ['FAILED', 0, 1]);
    assert.match(none.message, /recorded 2 response\(s\), none under \/userinfo/);
  });

  test('sql_result: the last SQL result; without a query → 0 without a call', async () => {
    await runNode(node('SQL', [{ type: 'P08', inputs: { sql: 'SELECT * FROM audit' } }, judgeStep({ evidence_type: 'sql_result' })]), env('SQL'), { judgeEnabled: true, vars: {} });
    assert.match(fake.calls[0].text, /SQL: SELECT \* FROM audit[\s\S]*patient-update/);
    const none = await runNode(node('SQL0', [judgeStep({ evidence_type: 'sql_result' })]), env('SQL0'), { judgeEnabled: true, vars: {} });
    assert.deepEqual([none.score, fake.calls.length], [0, 1]);
  });

  test('command_output: what the chain\'s P12 printed', async () => {
    await runNode(node('CMD', [{ type: 'P12', inputs: { command: 'docker logs app' } }, judgeStep({ evidence_type: 'command_output' })]), env('CMD'), { judgeEnabled: true, vars: {} });
    assert.match(fake.calls[0].text, /Command output \(exit code 0\):\nran: docker logs app\nINFO request-id=42/);
  });

  test('log_tail: the tail a P21 kept; an empty tail is evidence, an absent one is not', async () => {
    const ctx = makeCtx(env('LOG'), { last_log_tail: '{"level":"info","request_id":"r-1"}' });
    const out = await runPrimitive(p17LlmJudge, { rubric: 'Logs structured?', evidence_type: 'log_tail', score_range: [0, 8] }, ctx);
    assert.equal(out.passed, true, out.message);
    assert.match(fake.calls[0].text, /Log tail:\n\{"level":"info","request_id":"r-1"\}/);
    await runPrimitive(p17LlmJudge, { rubric: 'Logs structured?', evidence_type: 'log_tail', score_range: [0, 8] }, makeCtx(env('LOG2'), { last_log_tail: '' }));
    assert.match(fake.calls[1].text, /the log is empty/);
    const none = await runPrimitive(p17LlmJudge, { rubric: 'Logs structured?', evidence_type: 'log_tail', score_range: [0, 8] }, makeCtx(env('LOG3')));
    assert.deepEqual([none.passed, fake.calls.length], [false, 2]);
  });

  test('http_get beside the codebase: the judge step GETs the path; both sections are sent', async () => {
    await runNode(node('PROBE', [judgeStep({ evidence_type: ['codebase', 'http_get'], files_to_sample: ['src/a.rb'], http_get: ['/api/content'] })]), env('PROBE'), { judgeEnabled: true, vars: {} });
    assert.ok(hits.includes('GET /api/content'), hits.join(', '));
    const t = fake.calls[0].text;
    assert.match(t, /=== Evidence: codebase ===[\s\S]*--- File: src\/a\.rb ---[\s\S]*=== Evidence: http_get ===\nGET \/api\/content → 200[\s\S]*sword-of-content/);
  });

  test('codebase: focus paths first, a file outside the workspace, lines and characters cut per file', async () => {
    await runNode(node('CODE', [judgeStep({ focus_paths: ['/app/src/b.rb'], files_to_sample: ['src/', '/etc/php/app.ini'], max_lines_per_file: 3 })]), env('CODE'), { judgeEnabled: true, vars: {} });
    const t = fake.calls[0].text;
    assert.match(t, /--- File: src\/b\.rb ---\nline 1\nline 2\nline 3\n\n--- File: src\/a\.rb ---/);
    assert.doesNotMatch(t, /line 4/);
    assert.match(t, /--- File: \/etc\/php\/app\.ini ---\nsession\.cookie_secure = 1/);
  });

  test('directory_listing: the tree, depth-limited', async () => {
    await runNode(node('LIST', [judgeStep({ evidence_type: 'directory_listing', listing_root: '/app', listing_depth: 1 })]), env('LIST'), { judgeEnabled: true, vars: {} });
    const t = fake.calls[0].text;
    assert.match(t, /Directory listing of \/app \(1 level\(s\) deep\): 2 entries\ndocs\/\nsrc\//);
    assert.doesNotMatch(t, /a\.rb/);
  });

  test('criteria and a scoring guide on its own scale are part of the rubric the judge sees', async () => {
    await runNode(node('RUB', [judgeStep({ files_to_sample: ['src/'], criteria: [{ dimension: 'Layering', weight: 2, description: 'controllers are thin' }], scoring_guide: { text: '0 = none; 2 = complete', scale: [0, 2] } })]), env('RUB'), { judgeEnabled: true, vars: {} });
    assert.match(fake.calls[0].text, /Criteria:\n- Layering \(weight 2\): controllers are thin\n\nScoring guide \(written on a 0–2 scale: map it proportionally onto the score range 0–5\):\n0 = none; 2 = complete/);
  });

  test('one missing source of several: 0 without a call, the message names it', async () => {
    const run = await runNode(node('MISS', [judgeStep({ evidence_type: ['codebase', 'sql_result'] })]), env('MISS'), { judgeEnabled: true, vars: {} });
    assert.deepEqual([run.status, run.score, fake.calls.length], ['FAILED', 0, 0]);
    assert.match(run.message, /sql_result: no SQL query earlier in this chain/);
  });
});

describe('P17 pages (Chromium)', () => {
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  test('screenshot evidence with pages: the chain\'s shot plus one per page not captured last', async () => {
    const e = env('PAGES', { browser: async () => browser });
    const run = await runNode(node('PAGES', [{ type: 'SCREENSHOT', inputs: { url: '/home' } }, { type: 'P17', inputs: { rubric: 'UI ok?', evidence_type: 'screenshot', pages: ['/home', '/login', '/files'], max_score: 5 } }]), e, { judgeEnabled: true, vars: {} });
    assert.equal(run.score, 3, run.message);
    assert.equal(fake.calls[0].images, 3);
    assert.deepEqual(hits.filter((h) => h.startsWith('GET /home') || h.startsWith('GET /login') || h.startsWith('GET /files')), ['GET /home', 'GET /login', 'GET /files']);
    assert.match(fake.calls[0].text, /Rendered HTML \(sanitized\) of \/login[\s\S]*Page \/login/);
  });

  test('rendered_dom evidence with pages: each page\'s DOM, labelled', async () => {
    const e = env('DOMS', { browser: async () => browser });
    await runNode(node('DOMS', [{ type: 'P17', inputs: { rubric: 'Pages ok?', evidence_type: 'rendered_dom', pages: ['/one', '/two'], max_score: 5 } }]), e, { judgeEnabled: true, vars: {} });
    assert.match(fake.calls[0].text, /Rendered HTML of \/one[\s\S]*Page \/one[\s\S]*Rendered HTML of \/two[\s\S]*Page \/two/);
  });
});
