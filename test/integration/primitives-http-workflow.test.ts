/**
 * The workflow primitives (P24 queue_job_check, P26 search_query, P28 email_delivery, P29
 * multi_step_workflow) and P27's new receiver criteria, against a small app, a mail catcher and a
 * webhook history service on 127.0.0.1.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { findPrimitive } from '../../src/primitives/registry';
import type { ExecResult, PrimitiveEnv, SqlResult } from '../../src/primitives/types';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

const mails: { ID: string; To: { Mailbox: string; Domain: string }[]; Content: { Headers: { Subject: string[] } } }[] = [];
const history: { path: string; headers: Record<string, string>; body: string }[] = [];
let hookUrl = '';
let jobsDone = 0;
let stored = '';
let nextId = 1;
const subs = new Map<number, { id: number; status: string }>();
let app: http.Server;
let mail: http.Server;
let hist: http.Server;
let baseUrl: string;
const port = (s: http.Server) => (s.address() as AddressInfo).port;

function send(res: http.ServerResponse, status: number, body?: unknown) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(body === undefined ? '' : JSON.stringify(body));
}
function post(url: string, body: string, headers: Record<string, string>) {
  const u = new URL(url);
  const req = http.request({ hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } }, (r) => r.resume());
  req.on('error', () => undefined);
  req.end(body);
}

before(async () => {
  app = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const p = url.pathname;
      const json = () => JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      if (p === '/jobs' && req.method === 'POST') {
        setTimeout(() => jobsDone++, 300);
        return send(res, 202, { queued: true });
      }
      if (p === '/search') {
        const q = url.searchParams.get('q') ?? '';
        const all = [{ name: 'Eval one' }, { name: 'Eval two' }, { name: 'other' }].filter((x) => x.name.includes(q));
        return send(res, 200, { data: all, total: all.length });
      }
      if (p === '/invite' && req.method === 'POST') {
        const to = String(json().email);
        setTimeout(() => mails.push({ ID: `m${mails.length}`, To: [{ Mailbox: to.split('@')[0], Domain: to.split('@')[1] }], Content: { Headers: { Subject: ['Please sign the document'] } } }), 200);
        return send(res, 201, { ok: true });
      }
      if (p === '/hooks' && req.method === 'POST') {
        hookUrl = json().url;
        return send(res, 201, {});
      }
      if (p === '/fire' && req.method === 'POST') {
        const payload = JSON.stringify({ uuid: 'u-1', content: { event: 'STORE' } });
        const ts = '1700000000';
        const sig = createHmac('sha3-512', 'sekret').update(`${ts}.${payload}`).digest('hex');
        setTimeout(() => post(hookUrl, payload, { Signature: `t=${ts},v1=${sig}`, 'User-Agent': 'PFM/1' }), 100);
        history.push({ path: '/hook', headers: { 'X-Webhook-Signature': 'sha256=abc' }, body: payload });
        return send(res, 200, {});
      }
      if (p === '/subs' && req.method === 'POST') {
        const made = [1, 2].map(() => ({ id: nextId++, status: 'awaiting', submission_id: 900 }));
        for (const s of made) subs.set(s.id, s);
        return send(res, 200, made);
      }
      const m = /^\/subs\/(\d+)$/.exec(p);
      if (m && subs.has(Number(m[1]))) {
        const s = subs.get(Number(m[1]))!;
        if (req.method === 'PUT' && json().completed) s.status = 'completed';
        return send(res, 200, s);
      }
      if (p === '/flags') return send(res, 200, { flags: [{ name: 'a', on: true }] });
      // the Canvas file API: metadata → upload_url + params → multipart → Location → the file
      if (p === '/courses/1/files' && req.method === 'POST') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        return send(res, 200, { upload_url: `${baseUrl}/store`, upload_params: { key: `k-${form.get('name')}-${form.get('size')}` } });
      }
      if (p === '/store' && req.method === 'POST') {
        const text = Buffer.concat(chunks).toString('utf8');
        stored = /name="key"\r\n\r\n([^\r]*)/.exec(text)?.[1] ?? '';
        stored += /filename="([^"]*)"[\s\S]*?\r\n\r\n([^\r]*)/.exec(text)?.slice(1).join(':') ?? '';
        res.writeHead(201, { Location: `${baseUrl}/files/9` });
        return res.end();
      }
      if (p === '/files/9') return stored ? send(res, 200, { id: 9, stored }) : send(res, 404, {});
      send(res, 404, { error: 'no route' });
    });
  });
  mail = http.createServer((_req, res) => send(res, 200, { total: mails.length, items: mails }));
  hist = http.createServer((_req, res) => send(res, 200, { events: history }));
  for (const s of [app, mail, hist]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${port(app)}`;
});
after(async () => {
  await Promise.all([app, mail, hist].map((s) => new Promise<void>((r) => s.close(() => r()))));
});

const execs: string[] = [];
function env(sql?: (text: string) => Promise<SqlResult>): PrimitiveEnv {
  const exec = async (service: string, command: string): Promise<ExecResult> => {
    execs.push(`${service}: ${command}`);
    return { exitCode: 0, stdout: '', stderr: '', timedOut: false };
  };
  const ports: Record<number, string> = { 8025: `http://127.0.0.1:${port(mail)}`, 9011: `http://127.0.0.1:${port(hist)}` };
  return httpEnv(baseUrl, { exec, sql, hostPortUrl: (p) => ports[p] });
}
const P = (id: string) => findPrimitive(id)!;

describe('P24 queue_job_check', () => {
  test('the job\'s effect must reach the database within wait_seconds', async () => {
    jobsDone = 0;
    const sql = async () => ({ rows: [{ cnt: String(jobsDone) }], columns: ['cnt'] });
    const r = await runPrimitive(P('P24'), { trigger: { method: 'POST', path: '/jobs', body: {} }, verify: { sql: 'SELECT count(*) AS cnt FROM jobs', expect_row: { cnt: 1 } }, wait_seconds: 3 }, makeCtx(env(sql)));
    assert.equal(r.passed, true, r.message);
    const late = await runPrimitive(P('P24'), { trigger: { method: 'POST', path: '/jobs', body: {} }, verify: { sql: 'SELECT 1', expect_row: { cnt: 99 } }, wait_seconds: 0.3 }, makeCtx(env(sql)));
    assert.match(late.message, /after 0.3s: cnt is "\d", expected 99/);
    const done = async () => ({ rows: [{ cnt: '1' }], columns: ['cnt'] });
    const untriggered = await runPrimitive(P('P24'), { verify: { sql: 'SELECT 1', expect_row: { cnt: 1 } }, wait_seconds: 0 }, makeCtx(env(done)));
    assert.equal(untriggered.passed, true, untriggered.message);
    const noRoute = await runPrimitive(P('P24'), { trigger: { method: 'POST', path: '/nope' }, verify: { sql: 'SELECT 1', min_rows: 1 } }, makeCtx(env(sql)));
    assert.match(noRoute.message, /trigger POST \/nope → 404, expected < 400/);
  });
});

describe('P26 search_query', () => {
  test('results counted at results_path; the first must contain the text', async () => {
    const ctx = makeCtx(env());
    let r = await runPrimitive(P('P26'), { path: '/search', query: { q: 'Eval' }, results_path: ['$.data'], min_count: 2, first_result_contains: 'Eval one' }, ctx);
    assert.equal(r.passed, true, r.message);
    r = await runPrimitive(P('P26'), { path: '/search', query: { q: 'zzz' }, results_path: ['$.data'], min_count: 1 }, ctx);
    assert.match(r.message, /0 result\(s\), need at least 1/);
    r = await runPrimitive(P('P26'), { path: '/search', query: { q: 'Eval' }, results_path: '$.total', max_count: 1, min_count: 0 }, ctx);
    assert.match(r.message, /2 result\(s\), at most 1 expected/);
    r = await runPrimitive(P('P26'), { path: '/missing', min_count: 0 }, ctx);
    assert.match(r.message, /→ 404, expected 200/);
  });
});

describe('P23 canvas flow', () => {
  test('metadata, the file to the returned upload_url with its params, then the confirmed file id', async () => {
    const r = await runPrimitive(P('P23'), { upload: { path: '/courses/1/files', file_name: 'bench.txt', flow: 'canvas', file_content: 'test' } }, makeCtx(env()));
    assert.equal(r.passed, true, r.message);
    assert.equal(stored, 'k-bench.txt-4bench.txt:test');
    stored = '';
    const bad = await runPrimitive(P('P23'), { upload: { path: '/flags', file_name: 'x.txt', flow: 'canvas' } }, makeCtx(env()));
    assert.match(bad.message, /no upload_url in/);
  });
});

describe('P28 email_delivery', () => {
  test('a new message to the recipient with the subject; no mail catcher on the port fails saying so', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(P('P28'), { trigger: { method: 'POST', path: '/invite', body: { email: 'Sig@Example.com' } }, mail_api: 'http://localhost:8025/api/v2/messages', to: 'sig@example.com', subject_contains: 'SIGN', wait_seconds: 3 }, ctx);
    assert.equal(r.passed, true, r.message);
    const none = await runPrimitive(P('P28'), { trigger: { method: 'POST', path: '/invite', body: { email: 'x@example.com' } }, mail_api: 'http://localhost:8025/api/v2/messages', to: 'someone-else@example.com', wait_seconds: 0.5 }, ctx);
    assert.match(none.message, /no new mail to someone-else@example.com within 0.5s \(new: /);
    const absent = await runPrimitive(P('P28'), { trigger: { method: 'POST', path: '/invite', body: {} }, mail_api: 'http://localhost:8026/api/v2/messages', to: 'a@b.c' }, ctx);
    assert.match(absent.message, /no service of this task's stack publishes host port 8026 \(the e-mail cannot be observed\)/);
  });
});

describe('P27 receiver criteria', () => {
  test('headers_match, body_json_paths, an HMAC-SHA3 signature, {webhook_base}, run_after_trigger', async () => {
    execs.length = 0;
    const ctx = makeCtx(env());
    const receiver = { headers_match: { 'User-Agent': '^PFM/' }, body_json_paths: ['$.uuid', '$.content'], signature: { header: 'Signature', pattern: '^t=(?<ts>\\d+),v1=(?<sig>[0-9a-f]{128})$', algorithm: 'sha3-512', secret: 'sekret', preimage: '{ts}.{raw_payload}' } };
    const r = await runPrimitive(P('P27'), { register: { path: '/hooks', body: { url: '{webhook_base}/hook' } }, trigger_path: '/fire', run_after_trigger: { command: 'php artisan queue:work --once' }, receiver, wait_seconds: 3 }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.deepEqual(execs, ['app: php artisan queue:work --once']);
    const wrongSecret = await runPrimitive(P('P27'), { register: { path: '/hooks', body: { url: '{webhook_base}/hook' } }, trigger_path: '/fire', receiver: { ...receiver, signature: { ...receiver.signature, secret: 'other' } }, wait_seconds: 1 }, ctx);
    assert.match(wrongSecret.message, /not counted: Signature: the sha3-512 HMAC does not verify/);
  });

  test('receiver_history: only deliveries recorded after the step began count', async () => {
    history.length = 0;
    history.push({ path: '/hook', headers: {}, body: 'old' });
    const ctx = makeCtx(env());
    const r = await runPrimitive(P('P27'), { trigger_path: '/fire', receiver_history: { url: 'http://localhost:9011/history?since=0', criteria: { path: '/hook', headers_match: { 'X-Webhook-Signature': 'sha256=.+' }, min_deliveries: 1 } }, wait_seconds: 2 }, ctx);
    assert.equal(r.passed, true, r.message);
    const two = await runPrimitive(P('P27'), { trigger_path: '/fire', receiver_history: { url: 'http://localhost:9011/history', criteria: { min_deliveries: 2 } }, wait_seconds: 0.5 }, ctx);
    assert.match(two.message, /1 matching delivery in http:\/\/localhost:9011\/history within 0.5s \(need 2/);
    const capped = await runPrimitive(P('P27'), { trigger_path: '/fire', receiver_history: { url: 'http://localhost:9011/history', criteria: { max_deliveries: 0, min_deliveries: 0 } }, wait_seconds: 0.3 }, ctx);
    assert.match(capped.message, /1 matching deliveries, at most 0 expected/);
  });
});

describe('P29 multi_step_workflow', () => {
  test('setup captures fill {tokens}; expectations, body comparisons, waits and a final SQL check', async () => {
    const sql = async (text: string) => ({ rows: [{ done: text.includes('900') ? '2' : '0' }], columns: ['done'] });
    const ctx = makeCtx(env(sql));
    const r = await runPrimitive(P('P29'), {
      setup: { method: 'POST', path: '/subs', body: {}, capture: { id: ['$.id', '$[0].submission_id'], s0: '$[0].id', s1: '$[1].id' } },
      steps: [
        { name: 'a', method: 'PUT', path: '/subs/{s0}', body: { completed: true }, expect_status: [200], expect: [{ path: '$.status', equals: 'completed' }] },
        { name: 'pause', wait_seconds: 0.1 },
        { name: 'b', method: 'GET', path: '/flags' },
        { name: 'c', method: 'GET', path: '/flags', same_body_as: 'b' },
        { name: 'd', method: 'GET', path: '/subs/{s1}', differs_from: 'a', expect: [{ path: '$.status', present: true }] },
      ],
      final_verify: { sql: 'SELECT count(*) AS done FROM subs WHERE submission_id = {id}', expect_row: { done: 2 } },
    }, ctx);
    assert.equal(r.passed, true, r.message);
    const failing = await runPrimitive(P('P29'), { steps: [{ name: 'x', method: 'GET', path: '/flags', expect: [{ path: '$.flags[0].on', equals: false }] }, { name: 'never', method: 'GET', path: '/flags' }] }, ctx);
    assert.match(failing.message, /x: \$\.flags\[0\]\.on is true, expected false/);
    assert.doesNotMatch(failing.message, /never/);
    const missing = await runPrimitive(P('P29'), { setup: { method: 'POST', path: '/subs', body: {}, capture: { gone: '$.nothing' } }, steps: [{ name: 'y', method: 'GET', path: '/subs/{gone}' }] }, ctx);
    assert.match(missing.message, /y: \{gone\} not captured by this workflow/);
  });

  test('a final check of a receiver service\'s record', async () => {
    history.length = 0;
    history.push({ path: '/hook', headers: { 'x-webhook-signature': 'sha256=' + 'a'.repeat(64) }, body: '{}' }, { path: '/hook', headers: {}, body: '{}' });
    const ctx = makeCtx(env());
    const ok = await runPrimitive(P('P29'), { steps: [{ name: 'w', wait_seconds: 0 }], final_verify: { history_url: 'http://localhost:9011/history?since=0', min_deliveries: 1, header_regex: 'sha256=[a-f0-9]{64}' } }, ctx);
    assert.equal(ok.passed, true, ok.message);
    const bad = await runPrimitive(P('P29'), { steps: [{ name: 'w', wait_seconds: 0 }], final_verify: { history_url: 'http://localhost:9011/history', min_deliveries: 2, header_regex: 'sha256=[a-f0-9]{64}' } }, ctx);
    assert.match(bad.message, /1 recorded delivery with a header matching .*, need 2/);
  });
});
