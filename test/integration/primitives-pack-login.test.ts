import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import YAML from 'yaml';
import { findPrimitive } from '../../src/primitives/registry';
import { rolesPort } from '../../src/primitives/auth/provider';
import { PackEntrySchema } from '../../src/tasks/published/pack';
import { userVariables } from '../../src/tasks/published/settings';
import type { ExecResult, PrimitiveEnv } from '../../src/primitives/types';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

/**
 * A pack-declared login of each published style, end to end against a small app of our own:
 * a JSON login returning a token in the body, a server-rendered form login whose CSRF token is in
 * the HTML and whose session is a cookie, HTTP Basic, a DeviseTokenAuth-style login (token and
 * captures in response headers), a setup request before the first login, and a refusal check.
 */

const USERS: Record<string, string> = { 'ann@x.test': 'annpw', 'bo@x.test': 'bopw' };
const formSessions = new Map<string, { csrf: string; user?: string }>();
const calls: string[] = [];
let setupCount = 0;
let server: http.Server;
let baseUrl: string;

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let b = '';
    req.on('data', (c: Buffer) => (b += c.toString('utf8')));
    req.on('end', () => resolve(b));
  });
}
const cookieOf = (req: http.IncomingMessage, name: string) => new RegExp(`(?:^|; )${name}=([^;]*)`).exec(req.headers.cookie ?? '')?.[1];
function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function whoAmI(req: http.IncomingMessage): string | undefined {
  const bearer = /^Bearer tok:(.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
  if (bearer && USERS[bearer]) return bearer;
  const basic = /^Basic (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
  if (basic) {
    const [u, p] = Buffer.from(basic, 'base64').toString('utf8').split(':');
    if (USERS[u] === p) return u;
  }
  const dev = req.headers['access-token'];
  if (dev && req.headers.client === 'c1' && USERS[String(req.headers.uid)] && dev === `at:${req.headers.uid}`) return String(req.headers.uid);
  return formSessions.get(cookieOf(req, 'sid') ?? '')?.user;
}

before(async () => {
  server = http.createServer(async (req, res) => {
    const body = await readBody(req);
    const path = (req.url ?? '/').split('?')[0];
    calls.push(`${req.method} ${path}`);
    if (req.method === 'POST' && path === '/api/login') {
      const { email, password } = JSON.parse(body || '{}') as { email?: string; password?: string };
      if (email && USERS[email] === password) return json(res, 200, { data: { token: `tok:${email}` } });
      return json(res, 401, { error: 'bad credentials' });
    }
    if (req.method === 'GET' && path === '/login') {
      const sid = `s${formSessions.size + 1}`;
      const csrf = `csrf-${sid}`;
      formSessions.set(sid, { csrf });
      res.writeHead(200, { 'Content-Type': 'text/html', 'Set-Cookie': `sid=${sid}; Path=/; HttpOnly` });
      return res.end(`<form method="post"><input name="_csrf_token" type="hidden" hidden value="${csrf}"><input name="email"></form>`);
    }
    if (req.method === 'POST' && path === '/login') {
      const f = new URLSearchParams(body);
      const s = formSessions.get(cookieOf(req, 'sid') ?? '');
      if (!s || f.get('_csrf_token') !== s.csrf) return json(res, 403, { error: 'csrf' });
      const email = f.get('email') ?? '';
      if (USERS[email] !== f.get('password')) {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        return res.end('<p>wrong password</p>');
      }
      s.user = email;
      res.writeHead(302, { Location: '/dashboard' });
      return res.end();
    }
    if (req.method === 'POST' && path === '/auth/sign_in') {
      const { email, password } = JSON.parse(body || '{}') as { email?: string; password?: string };
      if (email && USERS[email] === password) return json(res, 200, { data: { id: 1 } }, { 'access-token': `at:${email}`, client: 'c1', uid: email });
      return json(res, 401, { errors: ['Invalid login credentials'] });
    }
    if (req.method === 'POST' && path === '/setup/first-admin') {
      setupCount++;
      return json(res, setupCount === 1 ? 201 : 409, {});
    }
    if (path === '/me') {
      const who = whoAmI(req);
      return who ? json(res, 200, { email: who }) : json(res, 401, { error: 'unauthenticated' });
    }
    json(res, 404, {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

/** A pack entry of our own, parsed with the pack schema as the published loader does. */
const PACK_YAML = `
id: ourapp
product: a test app of our own
users:
  ann: {email: ann@x.test, password: annpw}
  bo: {email: bo@x.test, password: bopw}
roles:
  api: &api
    username: "{{ann_email}}"
    password: "{{ann_password}}"
    setup:
      - description: a first-run request, once per running system
        request: {path: /setup/first-admin, body: {email: "{{username}}"}, expect_status: [201, 409]}
    login:
      path: /api/login
      body: {email: "{{username}}", password: "{{password}}"}
      expect_status: [200]
      token: {from: body, path: $.data.token}
  web: &web
    username: "{{bo_email}}"
    password: "{{bo_password}}"
    login:
      path: /login
      format: form
      body: {email: "{{username}}", password: "{{password}}"}
      csrf: {path: /login, token: {from: regex, pattern: 'name="_csrf_token"[^>]*value="([^"]+)"'}, body_field: _csrf_token}
      expect_status: [302]
  basic:
    username: "{{ann_email}}"
    password: "{{ann_password}}"
    basic: {}
  devise:
    username: "{{bo_email}}"
    password: "{{bo_password}}"
    login:
      path: /auth/sign_in
      body: {email: "{{username}}", password: "{{password}}"}
      token: {from: header, name: access-token}
      capture: {client: {from: header, name: client}, uid: {from: header, name: uid}}
    send: {headers: {access-token: "{{token}}", client: "{{client}}", uid: "{{uid}}"}}
`;

const P = (id: string) => findPrimitive(id)!;

describe('pack-declared logins, end to end', () => {
  const pack = PackEntrySchema.parse(YAML.parse(PACK_YAML, { merge: true }));
  const vars = userVariables(pack.users ?? {});
  const execNever = async (): Promise<ExecResult> => {
    throw new Error('no container in this test');
  };
  const env = (): PrimitiveEnv => httpEnv(baseUrl, { roles: rolesPort(pack.roles ?? {}, { baseUrl, appService: 'app', exec: execNever, cacheKey: `pack-${Math.random()}` }) });

  test('JSON login: the token of the body goes out as Bearer; the setup request ran once; the login response is the last response', async () => {
    const e = env();
    for (let i = 0; i < 2; i++) {
      const ctx = makeCtx(e, vars);
      const r = await runPrimitive(P('P13'), { role: 'api', token_as: ['api_token'] }, ctx);
      assert.equal(r.passed, true, r.message);
      assert.deepEqual(ctx.state.last?.body, { data: { token: 'tok:ann@x.test' } }, 'P07 after P13 reads the login response');
      assert.equal(ctx.state.exports.api_token, 'tok:ann@x.test');
      await runPrimitive(P('P04'), { path: '/me' }, ctx);
      assert.deepEqual(ctx.state.last?.body, { email: 'ann@x.test' });
    }
    assert.equal(setupCount, 1, 'setup once per running system');
  });

  test('form login: CSRF token from the HTML, session cookie; a wrong password is a refusal', async () => {
    const ctx = makeCtx(env(), vars);
    const r = await runPrimitive(P('P13'), { role: 'web' }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.match(r.message, /GET \/login → 200, POST \/login → 302; cookies sid/);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.deepEqual(ctx.state.last?.body, { email: 'bo@x.test' });

    const refused = await runPrimitive(P('P13'), { role: 'web', credentials: { password: 'nope' }, expect: 'refused' }, makeCtx(env(), vars));
    assert.equal(refused.passed, true, refused.message);
    assert.match(refused.message, /refused as expected/);
    const notRefused = await runPrimitive(P('P13'), { role: 'web', expect: 'refused' }, makeCtx(env(), vars));
    assert.equal(notRefused.passed, false);
    assert.match(notRefused.message, /the login succeeded .* but this step expects it to be refused/);
    const wrong = await runPrimitive(P('P13'), { role: 'web', credentials: { password: 'nope' } }, makeCtx(env(), vars));
    assert.equal(wrong.passed, false);
    assert.match(wrong.message, /login as web: POST \/login → 200, expected 302/);
  });

  test('an inline login (the published login_path/credentials) amends the declared one; HTTP Basic; captured headers', async () => {
    const ctx = makeCtx(env(), vars);
    const r = await runPrimitive(P('P13'), { role: 'api', credentials: { username: '{{bo_email}}', password: '{{bo_password}}' }, login: { path: '/api/login' } }, ctx);
    assert.equal(r.passed, true, r.message);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.deepEqual(ctx.state.last?.body, { email: 'bo@x.test' });

    const b = makeCtx(env(), vars);
    assert.equal((await runPrimitive(P('P13'), { role: 'basic', method: 'basic_auth' }, b)).passed, true);
    await runPrimitive(P('P04'), { path: '/me' }, b);
    assert.deepEqual(b.state.last?.body, { email: 'ann@x.test' });

    const d = makeCtx(env(), vars);
    assert.equal((await runPrimitive(P('P13'), { role: 'devise' }, d)).passed, true);
    await runPrimitive(P('P04'), { path: '/me' }, d);
    assert.deepEqual(d.state.last?.body, { email: 'bo@x.test' });
  });

  test('an undeclared role with an inline login needs no declaration; without one it fails naming it', async () => {
    const ctx = makeCtx(env(), vars);
    const inline = { path: '/api/login', body: { email: '{{username}}', password: '{{password}}' }, token: { from: 'body', path: '$.data.token' } };
    const r = await runPrimitive(P('P13'), { role: 'guest', credentials: { username: 'ann@x.test', password: 'annpw' }, login: inline }, ctx);
    assert.equal(r.passed, true, r.message);
    await runPrimitive(P('P04'), { path: '/me' }, ctx);
    assert.deepEqual(ctx.state.last?.body, { email: 'ann@x.test' });
    const none = await runPrimitive(P('P13'), { role: 'guest' }, makeCtx(env(), vars));
    assert.match(none.message, /role "guest" has no credentials declared \(declared roles: api, web, basic, devise\)/);
  });
});
