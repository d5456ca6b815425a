/**
 * New canonical HTTP behaviour the published dialects map onto (P04 bodies, redirects, polling,
 * concurrency, sessions, stack URLs; P05 list reads; P14 status sets and modes; P16 keys; P23
 * base64 files; the node-level published id capture switch), against a small app on 127.0.0.1.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { findPrimitive } from '../../src/primitives/registry';
import { rolesPort } from '../../src/primitives/auth/provider';
import { RolesSchema } from '../../src/model/roles';
import { runNode } from '../../src/primitives/run-chain';
import type { PrimitiveEnv } from '../../src/primitives/types';
import type { DagNode } from '../../src/model/dag';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

type Seen = { method: string; path: string; headers: http.IncomingHttpHeaders; body: Buffer };
const seen: Seen[] = [];
const items = new Map<number, { id: number; name: string }>();
let polls = 0;
let nextId = 1;
let app: http.Server;
let other: http.Server;
let baseUrl: string;
let otherUrl: string;

function send(res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(body === undefined ? '' : JSON.stringify(body));
}

before(async () => {
  app = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://x');
      const p = url.pathname;
      seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const cookie = String(req.headers.cookie ?? '');
      if (p === '/echo') return send(res, 200, { ct: req.headers['content-type'] ?? null, body: body.toString('utf8'), auth: req.headers.authorization ?? null, ocs: req.headers['ocs-apirequest'] ?? null, csrf: req.headers['x-csrf-token'] ?? null, cookie: req.headers.cookie ?? null });
      if (p === '/companies' && req.method === 'POST') return send(res, 201, { pk: 41, name: JSON.parse(body.toString('utf8')).name });
      if (p === '/orders' && req.method === 'POST') {
        const b = JSON.parse(body.toString('utf8'));
        if (b.supplier !== 41) return send(res, 400, { supplier: ['must be the company pk (a number)'] });
        const id = nextId++;
        items.set(id, { id, name: b.name });
        return send(res, 201, { pk: id, id, supplier: b.supplier });
      }
      if (p === '/imports' && req.method === 'POST') return send(res, 201, { pk: 9, data_file: 'x.csv' });
      if (p === '/go') return send(res, 302, undefined, { Location: '/landing?from=go', 'Set-Cookie': 'hop=1; Path=/' });
      if (p === '/away') return send(res, 302, undefined, { Location: 'http://evil.example/steal' });
      if (p === '/landing') return send(res, 200, { landed: true, hop: cookie.includes('hop=1'), method: req.method });
      if (p === '/fhir') return send(res, 200, { resourceType: 'CapabilityStatement' }, { 'Content-Type': 'application/fhir+json; charset=utf-8' });
      if (p === '/job') return ++polls >= 3 ? send(res, 200, { done: { at: 1 } }) : send(res, 202, { done: null });
      if (p === '/bin') {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        return res.end(Buffer.from([0, 1, 2, 255]));
      }
      if (p === '/csrf') return send(res, 200, { csrf: 'tok-123' }, { 'Set-Cookie': 'sid=s1; Path=/' });
      if (p === '/login' && req.method === 'POST') {
        const b = JSON.parse(body.toString('utf8') || '{}');
        if (req.headers['x-csrf-token'] !== 'tok-123') return send(res, 403, {});
        return b.pass === `${b.user}-pw` ? send(res, 200, { token: `t-${b.user}` }) : send(res, 401, {});
      }
      if (p === '/whoami') return req.headers.authorization ? send(res, 200, { who: req.headers.authorization }) : send(res, 401, {});
      if (p === '/apps' && req.method === 'POST') {
        const id = nextId++;
        items.set(id, { id, name: JSON.parse(body.toString('utf8')).name });
        return send(res, 201, { data: { id } });
      }
      if (p === '/apps' && req.method === 'GET') return send(res, 200, { data: [...items.values()] });
      const m = /^\/apps\/(\d+)$/.exec(p);
      if (m && items.has(Number(m[1]))) {
        if (req.method === 'PUT') Object.assign(items.get(Number(m[1]))!, JSON.parse(body.toString('utf8')));
        if (req.method === 'DELETE') items.delete(Number(m[1]));
        return send(res, req.method === 'DELETE' ? 204 : 200, items.get(Number(m[1])) ?? undefined);
      }
      if (p === '/created') return send(res, 201, { id: 77, user_id: 5 });
      send(res, 404, { error: 'no route' });
    });
  });
  other = http.createServer((_req, res) => send(res, 200, { service: 'search-engine' }));
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r()));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
after(async () => {
  await Promise.all([app, other].map((s) => new Promise<void>((r) => s.close(() => r()))));
});

const ROLES = RolesSchema.parse({
  admin: { username: 'admin', password: 'admin-pw', login: { path: '/login', body: { user: '{{username}}', pass: '{{password}}' }, csrf: { path: '/csrf', token: { from: 'body', path: '$.csrf' }, header: 'X-CSRF-Token' }, token: { from: 'body', path: '$.token' } } },
  keyed: { api_key: { headers: { Authorization: 'Key k1', 'OCS-APIRequest': 'true' } } },
});
function env(extra: Partial<PrimitiveEnv> = {}): PrimitiveEnv {
  return httpEnv(baseUrl, { roles: rolesPort(ROLES, { baseUrl, appService: 'app', exec: async () => ({ exitCode: 0, stdout: '', stderr: '', timedOut: false }), cacheKey: `t-${Math.random()}` }), hostPortUrl: (port) => (port === 9201 ? otherUrl : undefined), ...extra });
}
const P = (id: string) => findPrimitive(id)!;
const body = (r: { data?: Record<string, unknown> }) => JSON.parse(String(r.data?.body_preview));

describe('P04 bodies', () => {
  test('form (object and text), raw_body, raw_body_b64, files + multipart fields', async () => {
    const ctx = makeCtx(env());
    let r = await runPrimitive(P('P04'), { method: 'POST', path: '/echo', form: { a: 'x y', n: [1, 2] } }, ctx);
    assert.deepEqual([body(r).ct, body(r).body], ['application/x-www-form-urlencoded', 'a=x+y&n=1&n=2']);
    r = await runPrimitive(P('P04'), { method: 'POST', path: '/echo', raw_body: '{ invalid json', headers: { 'Content-Type': 'application/json' } }, ctx);
    assert.deepEqual([body(r).ct, body(r).body], ['application/json', '{ invalid json']);
    r = await runPrimitive(P('P04'), { method: 'POST', path: '/echo', raw_body_b64: Buffer.from('bytes!').toString('base64') }, ctx);
    assert.deepEqual([body(r).ct, body(r).body], ['application/octet-stream', 'bytes!']);
    r = await runPrimitive(P('P04'), { method: 'POST', path: '/echo', form: { channel: 'c1' }, files: [{ field: 'files', filename: 'a.txt', content_type: 'text/plain', content_b64: Buffer.from('hello').toString('base64') }] }, ctx);
    assert.match(body(r).ct, /^multipart\/form-data; boundary=/);
    assert.match(body(r).body, /name="channel"\r\n\r\nc1\r\n[\s\S]*name="files"; filename="a.txt"\r\nContent-Type: text\/plain\r\n\r\nhello\r\n/);
    r = await runPrimitive(P('P04'), { method: 'POST', path: '/echo', form: { dto: '{"a":1}' }, multipart: true }, ctx);
    assert.match(body(r).body, /name="dto"\r\n\r\n\{"a":1\}/);
  });
});

describe('P04 redirects, expectations, polling, concurrency', () => {
  test('same-origin redirects are followed (cookies kept, POST becomes GET); other origins are not', async () => {
    const ctx = makeCtx(env());
    let r = await runPrimitive(P('P04'), { method: 'POST', path: '/go', follow_redirects: true, body: { x: 1 } }, ctx);
    assert.equal(r.passed, true);
    assert.deepEqual(ctx.state.last?.body, { landed: true, hop: true, method: 'GET' });
    r = await runPrimitive(P('P04'), { path: '/away', follow_redirects: true }, ctx);
    assert.equal(ctx.state.last?.status, 302);
    assert.deepEqual(r.data?.redirects, [{ status: 302, location: 'http://evil.example/steal', followed: false }]);
    r = await runPrimitive(P('P04'), { path: '/go', expect_redirect: false }, ctx);
    assert.equal(r.passed, false);
    assert.match(r.message, /expected no redirect, got 302/);
    assert.equal((await runPrimitive(P('P04'), { path: '/go', expect_redirect: true }, ctx)).passed, true);
  });

  test('expect_content_type compares media types; poll until a status or a value; concurrent copies', async () => {
    const ctx = makeCtx(env());
    assert.equal((await runPrimitive(P('P04'), { path: '/fhir', expect_content_type: 'application/fhir+json' }, ctx)).passed, true);
    const wrong = await runPrimitive(P('P04'), { path: '/fhir', expect_content_type: 'application/json' }, ctx);
    assert.match(wrong.message, /Content-Type is application\/fhir\+json; charset=utf-8, expected application\/json/);
    polls = 0;
    let r = await runPrimitive(P('P04'), { path: '/job', poll: { until_path: '$.done.at', interval_ms: 10, attempts: 5 } }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.deepEqual(r.data?.statuses, [202, 202, 200]);
    polls = -100;
    r = await runPrimitive(P('P04'), { path: '/job', poll: { until_status: [200], interval_ms: 10, attempts: 3 } }, ctx);
    assert.equal(r.passed, false);
    assert.match(r.message, /poll: status 200 not reached after 3 request\(s\)/);
    const before = seen.length;
    r = await runPrimitive(P('P04'), { method: 'POST', path: '/echo', body: { q: 1 }, concurrent: 3 }, ctx);
    assert.equal(seen.length - before, 3);
    assert.deepEqual(r.data?.statuses, [200, 200, 200]);
  });
});

describe('P04 sessions, stack URLs, captures', () => {
  test('role per request, anonymous, omit_headers, attach_csrf', async () => {
    const ctx = makeCtx(env());
    let r = await runPrimitive(P('P04'), { path: '/echo', role: 'keyed' }, ctx);
    assert.deepEqual([body(r).auth, body(r).ocs], ['Key k1', 'true']);
    r = await runPrimitive(P('P04'), { path: '/echo', role: 'keyed', omit_headers: ['ocs-apirequest'] }, ctx);
    assert.deepEqual([body(r).auth, body(r).ocs], ['Key k1', null]);
    r = await runPrimitive(P('P04'), { path: '/echo', role: 'anonymous' }, ctx);
    assert.equal(body(r).auth, null);
    r = await runPrimitive(P('P04'), { method: 'POST', path: '/echo', role: 'admin', attach_csrf: 'x-csrf-token' }, ctx);
    assert.deepEqual([body(r).auth, body(r).csrf], ['Bearer t-admin', 'tok-123']);
    r = await runPrimitive(P('P04'), { path: '/echo', role: 'keyed', attach_csrf: 'x-csrf-token' }, ctx);
    assert.equal(r.passed, false);
    assert.match(r.message, /role keyed has no CSRF token/);
    r = await runPrimitive(P('P04'), { method: 'POST', path: '/echo', role: 'admin', token_cookie: 'payload-token' }, ctx);
    assert.match(String(body(r).cookie), /^sid=s1; payload-token=t-admin$/);
    r = await runPrimitive(P('P04'), { path: '/echo', role: 'keyed', token_cookie: 'payload-token' }, ctx);
    assert.match(r.message, /role keyed has no login token to send as cookie payload-token/);
  });

  test('absolute URLs reach the stack service of that host port; others fail naming the port', async () => {
    const ctx = makeCtx(env());
    let r = await runPrimitive(P('P04'), { url: 'http://localhost:9201/_cluster/health' }, ctx);
    assert.deepEqual(ctx.state.last?.body, { service: 'search-engine' });
    r = await runPrimitive(P('P04'), { url: 'http://localhost:9002/' }, ctx);
    assert.equal(r.passed, false);
    assert.match(r.message, /no service of this task's stack publishes host port 9002/);
    r = await runPrimitive(P('P04'), { url: 'http://example.com/' }, ctx);
    assert.match(r.message, /host example.com is not local/);
  });

  test('capture path lists, save_as records, binary bodies', async () => {
    const ctx = makeCtx(env());
    let r = await runPrimitive(P('P04'), { path: '/created', capture: { cid: ['$.data.id', '$.id'] }, save_as: 'made' }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.equal(ctx.state.exports.cid, 77);
    assert.deepEqual((ctx.state.exports.made as Record<string, unknown>).created_id, 77);
    assert.equal((ctx.state.exports.made as Record<string, unknown>).status, 201);
    r = await runPrimitive(P('P04'), { path: '/bin', binary_response: true }, ctx);
    assert.equal(ctx.state.last?.body, Buffer.from([0, 1, 2, 255]).toString('base64'));
  });
});

describe('P05, P14, P16, P23 canonical additions', () => {
  test('P05: id_path and a list read_path (the entity is found in the list, and gone after delete)', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(P('P05'), { resource: '/apps', id_path: '$.data.id', read_path: '/apps', create_body: { name: 'A' }, update_body: { name: 'B' } }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.deepEqual((r.data?.steps as { step: string }[]).map((s) => s.step), ['create', 'read', 'update', 'reread', 'delete', 'verify_deleted']);
  });

  test('P05: a setup request whose capture fills the {tokens} of the bodies (numbers stay numbers)', async () => {
    const r = await runPrimitive(P('P05'), { resource: '/orders', setup: { method: 'POST', path: '/companies', body: { name: 'C' }, capture: { cid: '$.pk' } }, create_body: { supplier: '{cid}', name: 'O' }, read_path: '/apps/{id}', skip_delete: true, verify_update: false }, makeCtx(env()));
    assert.deepEqual((r.data?.steps as { step: string; ok: boolean }[]).slice(0, 2).map((s) => [s.step, s.ok]), [['setup', true], ['create', true]]);
    const bad = await runPrimitive(P('P05'), { resource: '/orders', setup: { method: 'POST', path: '/companies', body: {}, capture: { cid: '$.nope' } }, create_body: { supplier: '{cid}' } }, makeCtx(env()));
    assert.match(bad.message, /setup: nothing to capture for cid/);
  });

  test('P14: acceptable_statuses decide, either / not_denied, denied_codes, from_last_response, login_as', async () => {
    const ctx = makeCtx(env());
    assert.equal((await runPrimitive(P('P14'), { action: 'GET /whoami', expected_result: 'allowed', acceptable_statuses: [200, 401] }, ctx)).passed, true);
    assert.equal((await runPrimitive(P('P14'), { action: 'GET /whoami', expected_result: 'either' }, ctx)).passed, true);
    assert.equal((await runPrimitive(P('P14'), { action: 'GET /whoami', expected_result: 'not_denied' }, ctx)).passed, false);
    assert.equal((await runPrimitive(P('P14'), { action: 'GET /nothing', expected_result: 'denied', denied_codes: [401, 403] }, ctx)).passed, false);
    await runPrimitive(P('P04'), { path: '/whoami' }, ctx);
    const judged = await runPrimitive(P('P14'), { action: 'GET /whoami', expected_result: 'denied', from_last_response: true }, ctx);
    assert.equal(judged.passed, true, judged.message);
    assert.match((await runPrimitive(P('P14'), { action: 'GET /echo', expected_result: 'denied', from_last_response: true }, ctx)).message, /last request was GET \/whoami/);
    const bad = await runPrimitive(P('P14'), { role: 'admin', login_as: { username: 'eve', password: 'wrong' }, action: 'GET /whoami', expected_result: 'allowed' }, ctx);
    assert.match(bad.message, /cannot act as role admin: login as admin: POST \/login → 401/);
    const good = await runPrimitive(P('P14'), { role: 'admin', login_as: { username: 'eve', password: 'eve-pw' }, action: 'GET /whoami', expected_result: 'allowed' }, ctx);
    assert.equal(good.passed, true, good.message);
    assert.deepEqual(ctx.state.last?.body, { who: 'Bearer t-eve' });
  });

  test('P16 require_keys; P23 file_content_b64 bytes are uploaded', async () => {
    const ctx = makeCtx(env());
    await runPrimitive(P('P04'), { path: '/created' }, ctx);
    assert.equal((await runPrimitive(P('P16'), { max_ms: 5000, require_keys: ['id', 'user_id'] }, ctx)).passed, true);
    assert.match((await runPrimitive(P('P16'), { max_ms: 5000, require_keys: ['token'] }, ctx)).message, /key\(s\) token missing/);
    const r = await runPrimitive(P('P23'), { upload: { path: '/echo', file_name: 'x.bin', content_type: 'application/octet-stream', file_content_b64: Buffer.from('abc').toString('base64') }, expected_status: [200] }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.match(seen[seen.length - 1].body.toString('utf8'), /filename="x.bin"[\s\S]*\r\n\r\nabc\r\n/);
  });

  test('P23 capture: the created id is kept; nothing at the path fails the step', async () => {
    const ctx = makeCtx(env());
    const up = { path: '/imports', file_name: 'd.csv', content_type: 'text/csv', file_content: 'name\nA\n' };
    const ok = await runPrimitive(P('P23'), { upload: up, capture: { sid: ['$.pk', '$.id'] } }, ctx);
    assert.equal(ok.passed, true, ok.message);
    assert.equal(ctx.state.vars.sid, 9);
    const bad = await runPrimitive(P('P23'), { upload: { ...up, path: '/echo' }, capture: { sid2: '$.pk' } }, ctx);
    assert.equal(bad.passed, false);
    assert.match(bad.message, /capture sid2 failed, nothing at \$\.pk/);
    assert.equal(ctx.state.vars.sid2, undefined);
  });
});

describe('the published id capture honours the node switch', () => {
  const node = (idCapture?: boolean): DagNode => ({ id: 'N', description: '', prereqs: [], chain: [{ type: 'P04', inputs: { path: '/created' } }], scoring: { category: 'API', subcategory: '', method: 'binary', maxScore: 1 }, ...(idCapture === undefined ? {} : { idCapture }) });
  test('ids are captured by default and not on an id_capture: false node', async () => {
    const e = env({ compat: { publishedIdCapture: true } });
    const on = await runNode(node(), e, { judgeEnabled: false, vars: {} });
    assert.deepEqual([on.exports.id, on.exports.user_id], [77, 5]);
    const off = await runNode(node(false), e, { judgeEnabled: false, vars: {} });
    assert.equal(off.status, 'PASSED');
    assert.equal(off.exports.id, undefined);
    const step = await runNode({ ...node(), chain: [{ type: 'P04', inputs: { path: '/created', id_capture: false } }] }, e, { judgeEnabled: false, vars: {} });
    assert.equal(step.exports.id, undefined);
  });
});
