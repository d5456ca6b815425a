import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { findPrimitive } from '../../src/primitives/registry';
import { rolesPort } from '../../src/primitives/auth/provider';
import { RolesSchema } from '../../src/model/roles';
import { runNode } from '../../src/primitives/run-chain';
import type { ExecResult, PrimitiveEnv } from '../../src/primitives/types';
import type { DagNode } from '../../src/model/dag';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

// ---- a small app with sessions, CSRF, tokens, API keys, CRUD, RBAC, uploads and webhooks ----------

const USERS: Record<string, { pass: string; role: 'admin' | 'user' }> = { admin: { pass: 'adminpw', role: 'admin' }, bob: { pass: 'bobpw', role: 'user' } };
const sessions = new Map<string, { csrf: string; user?: string }>();
const items = new Map<number, { id: number; name: string; owner: string }>();
const files = new Map<string, Buffer>();
const hooks: string[] = [];
const deliveries: { event: string; ok: boolean }[] = [];
const seen: { method: string; path: string; headers: http.IncomingHttpHeaders }[] = [];
let nextId = 1;
let server: http.Server;
let baseUrl: string;
let slowMs = 0;
let brokenDelete = false;

function cookies(req: http.IncomingMessage): Record<string, string> {
  return Object.fromEntries((req.headers.cookie ?? '').split(';').map((c) => c.trim().split('=')).filter((p) => p.length === 2));
}
function whoAmI(req: http.IncomingMessage): string | undefined {
  const s = sessions.get(cookies(req).sess ?? '');
  if (s?.user) return s.user;
  const auth = /^Bearer tok-(\w+)$/.exec(String(req.headers.authorization ?? ''));
  if (auth && USERS[auth[1]]) return auth[1];
  const key = /^key-(\w+)$/.exec(String(req.headers['x-api-key'] ?? ''));
  if (key && USERS[key[1]]) return key[1];
  return undefined;
}
function send(res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string | string[]> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(body === undefined ? '' : JSON.stringify(body));
}
function parseMultipart(body: Buffer, ct: string): { fields: Record<string, string>; file?: { field: string; name: string; type: string; bytes: Buffer } } {
  const boundary = /boundary=(.+)$/.exec(ct)?.[1];
  const out: ReturnType<typeof parseMultipart> = { fields: {} };
  if (!boundary) return out;
  const sep = Buffer.from(`--${boundary}`);
  let at = body.indexOf(sep);
  while (at >= 0) {
    const next = body.indexOf(sep, at + sep.length);
    if (next < 0) break;
    const part = body.subarray(at + sep.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    const data = part.subarray(split + 4);
    const name = /name="([^"]*)"/.exec(head)?.[1] ?? '';
    const filename = /filename="([^"]*)"/.exec(head)?.[1];
    if (filename !== undefined) out.file = { field: name, name: filename, type: /Content-Type: (.+)/.exec(head)?.[1]?.trim() ?? '', bytes: Buffer.from(data) };
    else out.fields[name] = data.toString('utf8');
    at = next;
  }
  return out;
}

async function deliver(event: string): Promise<void> {
  for (const url of hooks) {
    await new Promise<void>((resolve) => {
      const u = new URL(url);
      const req = http.request({ hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Signature': 'sig' } }, (r) => {
        r.resume();
        r.on('end', () => {
          deliveries.push({ event, ok: r.statusCode === 200 });
          resolve();
        });
      });
      req.on('error', () => resolve());
      req.end(JSON.stringify({ event }));
    });
  }
}

before(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://x');
      const p = url.pathname;
      seen.push({ method: req.method ?? '', path: p, headers: req.headers });
      const json = () => {
        try {
          return JSON.parse(raw.toString('utf8') || '{}');
        } catch {
          return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
        }
      };
      const me = whoAmI(req);
      if (p === '/csrf') {
        let sid = cookies(req).sess;
        const headers: Record<string, string> = {};
        if (!sid || !sessions.has(sid)) {
          sid = `s${Math.random().toString(36).slice(2)}`;
          sessions.set(sid, { csrf: `c${Math.random().toString(36).slice(2)}` });
          headers['Set-Cookie'] = `sess=${sid}; Path=/; HttpOnly`;
        }
        return send(res, 200, { csrf: sessions.get(sid)!.csrf }, headers);
      }
      if (p === '/login' && req.method === 'POST') {
        const s = sessions.get(cookies(req).sess ?? '');
        if (!s || req.headers['x-csrf-token'] !== s.csrf) return send(res, 403, { error: 'bad csrf' });
        const b = json();
        if (USERS[b.user]?.pass !== b.pass) return send(res, 401, { error: 'bad credentials' });
        s.user = b.user;
        return send(res, 200, { token: `tok-${b.user}`, user: { username: b.user } }, { 'Set-Cookie': ['remember=1; Path=/', 'theme=dark; Path=/ui'] });
      }
      if (p === '/login-simple' && req.method === 'POST') {
        const b = json();
        if (USERS[b.user]?.pass !== b.pass) return send(res, 401, { error: 'bad credentials' });
        return send(res, 200, { token: `tok-${b.user}` });
      }
      if (p === '/me') return me ? send(res, 200, { username: me, role: USERS[me].role }) : send(res, 401, { error: 'login' });
      if (p === '/admin/stats') return !me ? send(res, 401, {}) : USERS[me].role !== 'admin' ? send(res, 403, {}) : send(res, 200, { users: 2 });
      if (p === '/boom') return send(res, 500, { error: 'boom' });
      if (p === '/slow') return setTimeout(() => send(res, 200, { ok: true }), slowMs);
      if (p === '/items' && req.method === 'POST') {
        if (!me) return send(res, 401, {});
        const id = nextId++;
        items.set(id, { id, name: json().name, owner: me });
        return send(res, 201, { item: items.get(id) });
      }
      const m = /^\/items\/(\d+)$/.exec(p);
      if (m) {
        const it = items.get(Number(m[1]));
        if (!it) return send(res, 404, { error: 'not found' });
        if (req.method === 'GET') return send(res, 200, { item: it });
        if (req.method === 'PUT') {
          Object.assign(it, { name: json().name ?? it.name });
          return send(res, 200, { item: it });
        }
        if (req.method === 'DELETE') {
          if (!me || USERS[me].role !== 'admin') return send(res, 403, {});
          if (!brokenDelete) items.delete(it.id);
          return send(res, 204);
        }
      }
      if (p === '/upload' && req.method === 'POST') {
        if (!me) return send(res, 401, {});
        if (raw.length > 20_000) return send(res, 413, { error: 'too large' });
        const mp = parseMultipart(raw, String(req.headers['content-type']));
        if (!mp.file) return send(res, 422, { error: 'no file' });
        const id = `f${nextId++}`;
        files.set(id, mp.file.bytes);
        return send(res, 201, { url: `http://localhost:8020/files/${id}`, name: mp.file.name, field: mp.file.field, type: mp.file.type, kind: mp.fields.kind, size: mp.file.bytes.length });
      }
      const f = /^\/files\/(\w+)$/.exec(p);
      if (f) {
        const b = files.get(f[1]);
        if (!b) return send(res, 404);
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        return res.end(url.searchParams.has('corrupt') ? Buffer.concat([b, Buffer.from('x')]) : b);
      }
      if (p === '/hooks' && req.method === 'POST') {
        hooks.push(json().url);
        return send(res, 201, { ok: true });
      }
      if (p === '/events' && req.method === 'POST') {
        const ev = json().event;
        send(res, 202, { queued: true });
        if (ev !== 'silent') setTimeout(() => void deliver(ev), 100);
        return;
      }
      send(res, 404, { error: 'no route' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

// ---- roles and env ------------------------------------------------------------------------------

const ROLES = RolesSchema.parse({
  admin: {
    username: '{{admin_username}}',
    password: '{{admin_password}}',
    login: { path: '/login', body: { user: '{{username}}', pass: '{{password}}' }, csrf: { path: '/csrf', token: { from: 'body', path: '$.csrf' }, header: 'X-CSRF-Token' } },
  },
  tokenuser: { username: 'bob', password: 'bobpw', login: { path: '/login-simple', format: 'form', body: { user: '{{username}}', pass: '{{password}}' }, token: { from: 'body', path: '$.token' } } },
  keyuser: { username: 'bob', api_key: { headers: { 'X-Api-Key': 'key-{{username}}' } } },
  seeded: { seed: { command: 'make-key admin' }, send: { headers: { 'X-Api-Key': '{{token}}' } } },
  badpass: { username: 'admin', password: 'nope', login: { path: '/login-simple', body: { user: '{{username}}', pass: '{{password}}' } } },
  visitor: { anonymous: true },
});
const seedCalls: string[] = [];
function env(extra: Partial<PrimitiveEnv> = {}): PrimitiveEnv {
  const exec = async (service: string, command: string): Promise<ExecResult> => {
    seedCalls.push(`${service}: ${command}`);
    return command === 'make-key admin' ? { exitCode: 0, stdout: 'warming up\nkey-admin\n', stderr: '', timedOut: false } : { exitCode: 1, stdout: '', stderr: 'no', timedOut: false };
  };
  return httpEnv(baseUrl, { roles: rolesPort(ROLES, { baseUrl, appService: 'app', exec, cacheKey: `test-${Math.random()}` }), exec, ...extra });
}
const VARS = { admin_username: 'admin', admin_password: 'adminpw' };
const P = (id: string) => findPrimitive(id)!;
const stepNode = (chain: { type: string; inputs: Record<string, unknown> }[], method: DagNode['scoring']['method'] = 'binary'): DagNode => ({ id: 'N', description: '', prereqs: [], chain, scoring: { category: 'X', subcategory: '', method, maxScore: 4 } });

// ---- tests ---------------------------------------------------------------------------------------

describe('P13 auth_login and per-role sessions', () => {
  test('HTTP login with CSRF: the cookie jar carries the session; later P04s are authenticated; data has no secrets', async () => {
    const run = await runNode(stepNode([
      { type: 'P13', inputs: { role: 'admin' } },
      { type: 'P04', inputs: { path: '/me' } },
      { type: 'P15', inputs: { expected_status: 200 } },
      { type: 'P07', inputs: { assertions: [{ path: '$.username', expected: '{{admin_username}}' }] } },
    ]), env(), { judgeEnabled: false, vars: VARS });
    assert.equal(run.status, 'PASSED', run.message);
    assert.match(run.steps[0].message, /GET \/csrf → 200, POST \/login → 200; cookies sess, remember, theme/);
    assert.doesNotMatch(JSON.stringify(run.steps), /adminpw|tok-admin/);
    const last = seen.filter((s) => s.path === '/me').pop()!;
    assert.match(String(last.headers.cookie), /sess=s\w+/);
    assert.match(String(last.headers.cookie), /remember=1/);
    assert.doesNotMatch(String(last.headers.cookie), /theme/, 'a Path=/ui cookie is not sent to /me');
  });

  test('token from the login body is sent as Authorization: Bearer; a form-encoded login', async () => {
    const ctx = makeCtx(env(), VARS);
    assert.equal((await runPrimitive(P('P13'), { role: 'tokenuser' }, ctx)).passed, true);
    const r = await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.equal(ctx.state.last?.status, 200, r.message);
    assert.equal(seen.filter((s) => s.path === '/login-simple').pop()!.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(seen.filter((s) => s.path === '/me').pop()!.headers.authorization, 'Bearer tok-bob');
  });

  test('API-key roles, explicit headers win, anonymous clears, switching roles keeps separate jars', async () => {
    const ctx = makeCtx(env(), VARS);
    await runPrimitive(P('P13'), { role: 'keyuser', method: 'api_key' }, ctx);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.deepEqual(ctx.state.last?.body, { username: 'bob', role: 'user' });
    await runPrimitive(P('P04'), { path: '/me', headers: { 'x-api-key': 'key-admin' } }, ctx);
    assert.deepEqual(ctx.state.last?.body, { username: 'admin', role: 'admin' }, 'explicit header wins (case-insensitive)');
    await runPrimitive(P('P13'), { role: 'anonymous' }, ctx);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.equal(ctx.state.last?.status, 401);
    await runPrimitive(P('P13'), { role: 'admin' }, ctx);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.equal(ctx.state.last?.status, 200);
    await runPrimitive(P('P13'), { role: 'visitor' }, ctx);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.equal(ctx.state.last?.status, 401, 'a declared anonymous role sends nothing');
  });

  test('seed command: run in the app service once per running system, token from the last stdout line', async () => {
    const e = env();
    seedCalls.length = 0;
    for (let i = 0; i < 2; i++) {
      const ctx = makeCtx(e, VARS);
      assert.equal((await runPrimitive(P('P13'), { role: 'seeded' }, ctx)).passed, true);
      await runPrimitive(P('P04'), { path: '/me' }, ctx);
      assert.equal(ctx.state.last?.status, 200);
    }
    assert.deepEqual(seedCalls, ['app: make-key admin'], 'cached across chains');
    const ctx = makeCtx(e, VARS);
    await runPrimitive(P('P13'), { role: 'seeded', force_refresh: true }, ctx);
    assert.equal(seedCalls.length, 2, 'force_refresh runs it again');
  });

  test('failures name the role and the reason; a method the role does not declare fails', async () => {
    const ctx = makeCtx(env(), VARS);
    const undeclared = await runPrimitive(P('P13'), { role: 'moderator' }, ctx);
    assert.equal(undeclared.passed, false);
    assert.match(undeclared.message, /role "moderator" has no credentials declared \(declared roles: admin, tokenuser, keyuser, seeded, badpass, visitor\)/);
    const wrong = await runPrimitive(P('P13'), { role: 'badpass' }, ctx);
    assert.match(wrong.message, /login as badpass: POST \/login-simple → 401, expected 2xx or 3xx/);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.equal(ctx.state.last?.status, 401, 'after a failed P13 the chain acts as that role without credentials');
    const method = await runPrimitive(P('P13'), { role: 'admin', method: 'api_key' }, ctx);
    assert.match(method.message, /role "admin" declares login credentials, but the step asks for method "api_key"/);
    const unset = await runPrimitive(P('P13'), { role: 'admin' }, makeCtx(env(), {}));
    assert.match(unset.message, /role admin: username: unresolved placeholder: \{\{admin_username\}\}/);
  });

  test('without roles: P13 fails clearly; anonymous still works', async () => {
    const ctx = makeCtx(httpEnv(baseUrl), {});
    assert.match((await runPrimitive(P('P13'), { role: 'admin' }, ctx)).message, /role "admin" has no credentials declared: this task declares no roles/);
    assert.equal((await runPrimitive(P('P13'), { role: 'anonymous' }, ctx)).passed, true);
  });

  test('a chain without P13 keeps its own cookies (CSRF flow as published DAGs write it)', async () => {
    const run = await runNode(stepNode([
      { type: 'P04', inputs: { path: '/csrf' } },
      { type: 'P04', inputs: { method: 'POST', path: '/login', headers: { 'X-CSRF-Token': '{{previous.csrf}}' }, body: { user: 'admin', pass: 'adminpw' } } },
      { type: 'P15', inputs: { expected_status: 200 } },
      { type: 'P04', inputs: { path: '/me' } },
      { type: 'P15', inputs: { expected_status: 200 } },
    ]), httpEnv(baseUrl), { judgeEnabled: false, vars: {} });
    assert.equal(run.status, 'PASSED', run.message);
  });

  test('published id capture (compat): ids of 2xx JSON bodies become chain variables, exported', async () => {
    const run = await runNode(stepNode([
      { type: 'P13', inputs: { role: 'admin' } },
      { type: 'P04', inputs: { method: 'POST', path: '/items', body: { name: 'compat' } } },
      { type: 'P04', inputs: { path: '/items/{{item_id}}' } },
      { type: 'P07', inputs: { assertions: [{ path: '$.item.name', expected: 'compat' }] } },
    ]), env({ compat: { publishedIdCapture: true } }), { judgeEnabled: false, vars: VARS });
    assert.equal(run.status, 'PASSED', run.message);
    assert.equal(typeof run.exports.item_id, 'number');
    assert.equal((run.exports.N as Record<string, unknown>).item_id, run.exports.item_id, 'also exported under the node id');
    const off = await runNode(stepNode([{ type: 'P13', inputs: { role: 'admin' } }, { type: 'P04', inputs: { method: 'POST', path: '/items', body: { name: 'x' } } }, { type: 'P04', inputs: { path: '/items/{{item_id}}' } }]), env(), { judgeEnabled: false, vars: VARS });
    assert.match(off.message, /unresolved placeholder: \{\{item_id\}\}/);
  });
});

describe('P05 api_crud', () => {
  test('create → read → update → re-read → delete → gone, in the role session; capture_id_as exports the id', async () => {
    const ctx = makeCtx(env(), VARS);
    await runPrimitive(P('P13'), { role: 'admin' }, ctx);
    const r = await runPrimitive(P('P05'), { resource: '/items', create_body: { name: 'a' }, update_body: { name: 'b' }, response_root: 'item', expected_read_fields: ['owner'], capture_id_as: 'item_id' }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.deepEqual((r.data!.steps as { step: string }[]).map((s) => s.step), ['create', 'read', 'update', 'reread', 'delete', 'verify_deleted']);
    assert.equal(typeof ctx.state.exports.item_id, 'number');
  });
  test('each broken step is named: no auth, read field missing, update not applied, delete that keeps the item', async () => {
    const anon = await runPrimitive(P('P05'), { resource: '/items', create_body: { name: 'a' } }, makeCtx(env(), VARS));
    assert.match(anon.message, /failed at create: status 401, expected 200\/201/);
    const ctx = makeCtx(env(), VARS);
    await runPrimitive(P('P13'), { role: 'admin' }, ctx);
    assert.match((await runPrimitive(P('P05'), { resource: '/items', create_body: { name: 'a' }, expected_read_fields: ['color'] }, ctx)).message, /read: field color missing/);
    assert.match((await runPrimitive(P('P05'), { resource: '/items', create_body: { name: 'a' }, update_body: { name: 'b', color: 'red' } }, ctx)).message, /reread: color missing after update/);
    brokenDelete = true;
    try {
      assert.match((await runPrimitive(P('P05'), { resource: '/items', create_body: { name: 'a' } }, ctx)).message, /verify_deleted: still readable after DELETE \(status 200\)/);
      assert.equal((await runPrimitive(P('P05'), { resource: '/items', create_body: { name: 'a' }, verify_deleted: false }, ctx)).passed, true);
    } finally {
      brokenDelete = false;
    }
    const user = makeCtx(env(), VARS);
    await runPrimitive(P('P13'), { role: 'keyuser' }, user);
    assert.match((await runPrimitive(P('P05'), { resource: '/items', create_body: { name: 'a' } }, user)).message, /delete: status 403/);
    assert.equal((await runPrimitive(P('P05'), { resource: '/items', create_body: { name: 'a' }, skip_delete: true }, user)).passed, true);
  });
});

describe('P14 permission_check', () => {
  const check = async (role: string | undefined, inputs: Record<string, unknown>) => {
    const ctx = makeCtx(env(), VARS);
    if (role) await runPrimitive(P('P13'), { role }, ctx);
    return runPrimitive(P('P14'), inputs, ctx);
  };
  test('allowed / denied by the current role; the role input acts for one request only', async () => {
    assert.equal((await check('admin', { action: 'GET /admin/stats', expected_result: 'allowed' })).passed, true);
    assert.equal((await check('keyuser', { action: 'GET /admin/stats', expected_result: 'denied' })).passed, true);
    assert.equal((await check('keyuser', { action: 'GET /admin/stats', expected_result: 'allowed' })).passed, false);
    const ctx = makeCtx(env(), VARS);
    await runPrimitive(P('P13'), { role: 'admin' }, ctx);
    assert.equal((await runPrimitive(P('P14'), { role: 'keyuser', action: 'GET /admin/stats', expected_result: 'denied' }, ctx)).passed, true);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.equal((ctx.state.last?.body as { username: string }).username, 'admin', 'the chain is still admin');
  });
  test('expected_status, strict_denied_codes_only, denied_codes_extend, allowed_codes_extend are honoured', async () => {
    assert.equal((await check(undefined, { action: 'GET /admin/stats', expected_result: 'denied', expected_status: 401 })).passed, true);
    assert.match((await check('keyuser', { action: 'GET /admin/stats', expected_result: 'denied', expected_status: 401 })).message, /status 403, expected 401/);
    assert.equal((await check('admin', { action: 'GET /nowhere', expected_result: 'denied' })).passed, true, '404 is denied by default');
    assert.match((await check('admin', { action: 'GET /nowhere', expected_result: 'denied', strict_denied_codes_only: true })).message, /404 means an error/);
    assert.equal((await check('admin', { action: 'GET /nowhere', expected_result: 'denied', strict_denied_codes_only: true, denied_codes_extend: [404] })).passed, true);
    assert.equal((await check('admin', { action: 'GET /nowhere', expected_result: 'allowed', allowed_codes_extend: [404] })).passed, true);
    assert.match((await check('admin', { action: 'GET /boom', expected_result: 'denied' })).message, /500 means an error \(neither allowed nor denied\)/);
    assert.equal((await check('admin', { method: 'POST', path: '/items', body: { name: 'p14' }, expected_result: 'allowed', expected_status: [201] })).passed, true);
    assert.match((await check(undefined, { role: 'moderator', action: 'GET /me', expected_result: 'denied' })).message, /cannot act as role moderator/);
  });
});

describe('P16 response_time_check', () => {
  test('own sample: median of N after warmup; slow fails; error statuses fail even when fast; ratio to a baseline', async () => {
    const ctx = makeCtx(env(), VARS);
    slowMs = 0;
    const fast = await runPrimitive(P('P16'), { path: '/slow', samples: 4, max_ms: 150 }, ctx);
    assert.equal(fast.passed, true, fast.message);
    assert.equal((fast.data!.samples_ms as number[]).length, 4);
    slowMs = 120;
    const slow = await runPrimitive(P('P16'), { path: '/slow', samples: 3, warmup: 0, max_ms: 60 }, ctx);
    assert.equal(slow.passed, false);
    assert.match(slow.message, /median \d+(\.\d+)? ms > 60 ms/);
    assert.match((await runPrimitive(P('P16'), { path: '/boom', samples: 2, max_ms: 1000 }, ctx)).message, /2\/2 samples answered 500/);
    slowMs = 250;
    const ratio = await runPrimitive(P('P16'), { path: '/slow', samples: 2, max_ms: 5000, baseline_path: '/me', max_ratio: 1.2 }, ctx);
    assert.match(ratio.message, /ratio [\d.]+ to \/me > 1.2/);
    slowMs = 0;
  });
  test('without path: the chain last response is the one sample', async () => {
    const ctx = makeCtx(env(), VARS);
    assert.match((await runPrimitive(P('P16'), { max_ms: 100 }, ctx)).message, /no HTTP response in this chain/);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.equal((await runPrimitive(P('P16'), { max_ms: 1000 }, ctx)).passed, true);
  });
});

describe('P23 file_upload_download', () => {
  test('multipart upload in the session, download by url_from (loopback URL mapped), same bytes', async () => {
    const ctx = makeCtx(env(), VARS);
    await runPrimitive(P('P13'), { role: 'admin' }, ctx);
    const r = await runPrimitive(P('P23'), { upload: { path: '/upload', field_name: 'attachment', file_name: 'a.png', content_type: 'image/png', file_size_kb: 2, extra_fields: { kind: 'avatar' } }, expected_status: 201, download: { url_from: '$.url' } }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.match(r.message, /download GET \/files\/f\d+ → 200, same bytes/);
    const up = await runPrimitive(P('P23'), { upload: { path: '/upload', file_content: 'hello' } }, ctx);
    assert.equal(up.passed, true);
    assert.deepEqual(Object.fromEntries(Object.entries(ctx.state.last!.body as object).filter(([k]) => ['name', 'field', 'type', 'size'].includes(k))), { name: 'upload.txt', field: 'file', type: 'text/plain', size: 5 });
  });
  test('expect_failure with acceptable statuses (published EDGE_UPLOAD_MAX_SIZE shape); corrupt download; unauthenticated', async () => {
    const ctx = makeCtx(env(), VARS);
    await runPrimitive(P('P13'), { role: 'admin' }, ctx);
    assert.equal((await runPrimitive(P('P23'), { upload: { method: 'POST', path: '/upload', field_name: 'file', file_name: 'large_file.bin', file_size_kb: 50, content_type: 'application/octet-stream', extra_fields: { type: 'composer' } }, expect_failure: true, acceptable_statuses: [400, 413, 422] }, ctx)).passed, true);
    assert.equal((await runPrimitive(P('P23'), { upload: { path: '/upload', file_size_kb: 1 }, expect_failure: true }, ctx)).passed, false, 'a 201 is not a failure');
    const good = await runPrimitive(P('P23'), { upload: { path: '/upload', file_content: 'abc' }, download: { url_from: '$.url', compare: true } }, ctx);
    assert.equal(good.passed, true, good.message);
    const path = (good.data!.download as { path: string }).path;
    const corrupt = await runPrimitive(P('P23'), { upload: { path: '/upload', file_content: 'abc' }, download: { path: `${path}?corrupt` } }, ctx);
    assert.equal(corrupt.passed, false);
    assert.match(corrupt.message, /returned 4 B that differ from the 3 B uploaded/);
    const anon = await runPrimitive(P('P23'), { upload: { path: '/upload', file_content: 'x' } }, makeCtx(env(), VARS));
    assert.match(anon.message, /→ 401, expected 200\/201/);
  });
});

describe('P27 webhook_delivery', () => {
  test('receiver: register {webhook_url}, trigger, the delivery arrives with the signature header', async () => {
    hooks.length = 0;
    const ctx = makeCtx(env(), VARS);
    const r = await runPrimitive(P('P27'), { register: { path: '/hooks', body: { url: '{webhook_url}' } }, trigger_path: '/events', trigger_body: { event: 'item.created' }, receiver: { path: '/wh', body_contains: 'item.created', require_header: 'X-Signature' }, wait_seconds: 3 }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.match(r.message, /1 matching delivery\(ies\)/);
  });
  test('receiver: nothing delivered within wait_seconds fails; verify_sql polls the app record', async () => {
    hooks.length = 0;
    const ctx = makeCtx(env(), VARS);
    const none = await runPrimitive(P('P27'), { register: { path: '/hooks', body: { url: '{webhook_url}' } }, trigger_path: '/events', trigger_body: { event: 'silent' }, receiver: {}, wait_seconds: 0.5 }, ctx);
    assert.equal(none.passed, false);
    assert.match(none.message, /0 matching deliveries .* within 0.5s/);
    deliveries.length = 0;
    const sql = async () => ({ rows: [{ n: String(deliveries.filter((d) => d.ok).length) }], columns: ['n'] });
    const ctx2 = makeCtx(env({ sql }), VARS);
    const rec = await runPrimitive(P('P27'), { register: { path: '/hooks', body: { url: '{webhook_url}' } }, trigger_path: '/events', trigger_body: { event: 'e2' }, receiver: {}, verify_sql: 'SELECT count(*) AS n FROM deliveries', verify_condition: '>=1', wait_seconds: 3 }, ctx2);
    assert.equal(rec.passed, true, rec.message);
    assert.match(rec.message, /verify_sql count 1 \(need >=1\)/);
    const failing = await runPrimitive(P('P27'), { trigger_path: '/events', trigger_body: { event: 'silent' }, verify_sql: 'SELECT 1 WHERE false', wait_seconds: 0.3 }, makeCtx(env({ sql: async () => ({ rows: [], columns: ['x'] }) }), VARS));
    assert.match(failing.message, /verify_sql count 0 \(need >=1\) after 0.3s/);
    const trig = await runPrimitive(P('P27'), { trigger_path: '/boom', verify_sql: 'SELECT 1', wait_seconds: 0 }, makeCtx(env({ sql }), VARS));
    assert.match(trig.message, /trigger POST \/boom → 500/);
  });
});
