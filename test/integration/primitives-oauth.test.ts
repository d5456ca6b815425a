import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../src/primitives/browser-common';
import { OAUTH_FLOW } from '../../src/primitives/oauth-flow';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

/** A small authorization server of our own: registration, login form, patient picker, consent, PKCE, private_key_jwt with jti replay. */
let server: http.Server;
let baseUrl: string;
let browser: Browser;
const clients = new Map<string, { secret: string; method: string; jwks?: { keys: Record<string, unknown>[] }; redirect: string }>();
const codes = new Map<string, { client: string; challenge?: string; method?: string; patient?: string; scope: string }>();
const usedJti = new Set<string>();

const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': typeof body === 'string' ? 'text/html' : 'application/json', ...headers });
  res.end(text);
};

before(async () => {
  browser = await launchChromium();
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const cookie = req.headers.cookie ?? '';
      const form = new URLSearchParams(raw);
      if (url.pathname === '/oauth2/default/registration' && req.method === 'POST') {
        const meta = JSON.parse(raw);
        const id = `c_${randomBytes(4).toString('hex')}`;
        clients.set(id, { secret: `s_${randomBytes(4).toString('hex')}`, method: meta.token_endpoint_auth_method, jwks: meta.jwks, redirect: meta.redirect_uris[0] });
        // a public client (token_endpoint_auth_method none) gets no secret
        return send(res, 201, { client_id: id, ...(meta.token_endpoint_auth_method === 'none' ? {} : { client_secret: clients.get(id)!.secret }) });
      }
      if (url.pathname === '/oauth2/default/authorize') {
        const q = url.searchParams;
        const c = clients.get(q.get('client_id') ?? '');
        if (!c || c.redirect !== q.get('redirect_uri')) return send(res, 400, { error: 'invalid_client' });
        if (!/op=user1/.test(cookie)) return send(res, 302, '', { Location: `/op/login?return=${encodeURIComponent(url.pathname + url.search)}` });
        if (q.get('scope')?.includes('launch/patient') && !q.get('patient')) {
          return send(res, 200, `<html><body><h1>Select a patient</h1><a href="${url.pathname}${url.search}&patient=p-111">Alice p-111</a> <a href="${url.pathname}${url.search}&patient=p-222">Bob p-222</a></body></html>`);
        }
        return send(res, 200, `<html><body><form method="post" action="/oauth2/default/decide?${q}"><p>Allow access to ${q.get('scope')}?</p><button name="d" value="no" type="submit">Deny</button><button name="d" value="yes" type="submit">Authorize</button></form></body></html>`);
      }
      if (url.pathname === '/oauth2/default/decide') {
        const q = url.searchParams;
        if (form.get('d') !== 'yes') return send(res, 302, '', { Location: `${q.get('redirect_uri')}?error=access_denied&state=${q.get('state')}` });
        const code = randomBytes(8).toString('hex');
        codes.set(code, { client: q.get('client_id')!, challenge: q.get('code_challenge') ?? undefined, method: q.get('code_challenge_method') ?? undefined, patient: q.get('patient') ?? undefined, scope: q.get('scope') ?? '' });
        return send(res, 302, '', { Location: `${q.get('redirect_uri')}?code=${code}&state=${q.get('state')}` });
      }
      if (url.pathname === '/op/login' && req.method === 'GET') return send(res, 200, `<html><body><form method="post" action="/op/login?return=${encodeURIComponent(url.searchParams.get('return') ?? '/')}"><input name="authUser"><input name="clearPass" type="password"><button type="submit">Login</button></form></body></html>`);
      if (url.pathname === '/op/login') {
        if (form.get('authUser') !== 'admin' || form.get('clearPass') !== 'pass') return send(res, 200, '<html><body>Invalid login</body></html>');
        return send(res, 302, '', { Location: url.searchParams.get('return') ?? '/', 'Set-Cookie': 'op=user1; Path=/' });
      }
      if (url.pathname === '/oauth2/default/token') {
        const c = clients.get(form.get('client_id') ?? '');
        if (!c) return send(res, 401, { error: 'invalid_client' });
        if (form.get('client_assertion')) {
          const [h, b, sig] = form.get('client_assertion')!.split('.');
          const claims = JSON.parse(Buffer.from(b, 'base64url').toString());
          const key = createPublicKey({ key: c.jwks!.keys[0] as never, format: 'jwk' });
          if (!verify('sha256', Buffer.from(`${h}.${b}`), key, Buffer.from(sig, 'base64url')) || claims.iss !== form.get('client_id') || claims.aud !== `${baseUrl}/oauth2/default/token`) return send(res, 401, { error: 'invalid_client', error_description: 'bad assertion' });
          if (usedJti.has(claims.jti)) return send(res, 400, { error: 'invalid_grant', error_description: 'jti replay' });
          usedJti.add(claims.jti);
        } else if (c.method !== 'none' && form.get('client_secret') !== c.secret) return send(res, 401, { error: 'invalid_client' });
        if (form.get('grant_type') === 'client_credentials') return send(res, 200, { access_token: 'cc-token', token_type: 'Bearer', expires_in: 600, scope: form.get('scope') });
        const code = codes.get(form.get('code') ?? '');
        if (!code) return send(res, 400, { error: 'invalid_grant' });
        codes.delete(form.get('code')!);
        const v = form.get('code_verifier') ?? '';
        if (code.challenge && createHash('sha256').update(v).digest('base64url') !== code.challenge) return send(res, 400, { error: 'invalid_grant', error_description: 'code_verifier' });
        return send(res, 200, { access_token: `at-${code.patient ?? 'none'}`, refresh_token: 'rt', id_token: 'idt', token_type: 'Bearer', expires_in: 600, scope: code.scope, patient: code.patient });
      }
      if (url.pathname === '/api/userinfo') return /^Bearer at-/.test(req.headers.authorization ?? '') ? send(res, 200, { data: { user: 'admin' } }) : send(res, 401, { error: 'no' });
      send(res, 404, { error: 'not found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await browser?.close();
  await new Promise<void>((r) => server.close(() => r()));
});

const env = () => httpEnv(baseUrl, { browser: async () => browser });
const PKCE = { flow: 'authorization_code', authorize_path: '/oauth2/default/authorize', token_path: '/oauth2/default/token', register_path: '/oauth2/default/registration', scopes: ['openid', 'user/Patient.r'], login: { username: 'admin', password: 'pass' } };

describe('OAUTH_FLOW against an authorization server of our own on 127.0.0.1', () => {
  test('authorization code + PKCE: registration, login form, consent, the code exchanged; tokens exported, the token response is the last response', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(OAUTH_FLOW, PKCE, ctx);
    assert.equal(r.passed, true, r.message);
    assert.match(r.message, /client registration → 201; logged in through the form at \/op\/login; answered "Authorize"; redirect with a code; token → 200; Bearer issued for "openid user\/Patient\.r"/);
    assert.equal(ctx.state.exports.access_token, 'at-none');
    assert.equal(ctx.state.exports.refresh_token, 'rt');
    assert.equal((ctx.state.last?.body as { scope: string }).scope, 'openid user/Patient.r');
  });

  test('a wrong code_verifier is refused (expect answer passes, a following P15 judges); a wrong password never reaches the redirect', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(OAUTH_FLOW, { ...PKCE, wrong_code_verifier: true, expect: 'answer' }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.equal(ctx.state.last?.status, 400);
    assert.match(r.message, /no token \("invalid_grant"\)/);
    const strict = await runPrimitive(OAUTH_FLOW, { ...PKCE, wrong_code_verifier: true }, makeCtx(env()));
    assert.equal(strict.passed, false);
    const bad = await runPrimitive(OAUTH_FLOW, { ...PKCE, login: { username: 'admin', password: 'nope' }, timeout_ms: 5000 }, makeCtx(env()));
    assert.equal(bad.passed, false);
    assert.match(bad.message, /never redirected to http:\/\/127\.0\.0\.1:9\/callback/);
  });

  test('a patient picker: choose picks the launched patient', async () => {
    const ctx = makeCtx(env());
    const r = await runPrimitive(OAUTH_FLOW, { ...PKCE, scopes: ['openid', 'launch/patient', 'patient/Patient.r'], choose: 'p-222' }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.match(r.message, /chose p-222/);
    assert.equal(ctx.state.exports.access_token, 'at-p-222');
  });

  test('client credentials with a private_key_jwt assertion; reusing its jti is refused', async () => {
    const ctx = makeCtx(env());
    const cc = { flow: 'client_credentials', token_path: '/oauth2/default/token', register_path: '/oauth2/default/registration', client_auth: 'private_key_jwt', jwt_alg: 'RS256', scopes: ['system/Patient.r'] };
    const r = await runPrimitive(OAUTH_FLOW, cc, ctx);
    assert.equal(r.passed, true, r.message);
    assert.equal(ctx.state.exports.access_token, 'cc-token');
    const jti = ctx.state.exports.last_jti as string;
    assert.ok(jti);
    const replay = makeCtx(env());
    const again = await runPrimitive(OAUTH_FLOW, { ...cc, assertion_jti: jti, expect: 'answer' }, replay);
    assert.equal(again.passed, true, again.message);
    assert.equal(replay.state.last?.status, 400);
    const secret = await runPrimitive(OAUTH_FLOW, { flow: 'client_credentials', token_path: '/oauth2/default/token', register_path: '/oauth2/default/registration', client_auth: 'client_secret_post' }, makeCtx(env()));
    assert.equal(secret.passed, true, secret.message);
    const unknown = await runPrimitive(OAUTH_FLOW, { flow: 'client_credentials', token_path: '/oauth2/default/token', client_id: 'nobody', client_secret: 'x' }, makeCtx(env()));
    assert.equal(unknown.passed, false);
    assert.match(unknown.message, /token → 401; no token \("invalid_client"\)/);
  });

  test('authorize_request: the status and the redirect\'s parameters; verify: the token works at an endpoint', async () => {
    const reg = await fetch(`${baseUrl}/oauth2/default/registration`, { method: 'POST', body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'none' }) }).then((r) => r.json() as Promise<{ client_id: string }>);
    const ok = await runPrimitive(OAUTH_FLOW, { flow: 'authorize_request', authorize_path: '/oauth2/default/authorize', client_id: reg.client_id, expect_status: [302], expect_redirect_with: ['return'] }, makeCtx(env()));
    assert.equal(ok.passed, true, ok.message);
    const missing = await runPrimitive(OAUTH_FLOW, { flow: 'authorize_request', authorize_path: '/oauth2/default/authorize', client_id: reg.client_id, expect_redirect_with: ['id_token', 'state'] }, makeCtx(env()));
    assert.equal(missing.passed, false);
    assert.match(missing.message, /the redirect carries no id_token, state/);
    const bad = await runPrimitive(OAUTH_FLOW, { flow: 'authorize_request', authorize_path: '/oauth2/default/authorize', client_id: 'unknown' }, makeCtx(env()));
    assert.match(bad.message, /status 400 \(expected 200, 302, 303\)/);
    const verified = await runPrimitive(OAUTH_FLOW, { ...PKCE, verify: { path: '/api/userinfo', expect_fields: ['data'] } }, makeCtx(env()));
    assert.equal(verified.passed, true, verified.message);
    assert.match(verified.message, /GET \/api\/userinfo with the token → 200/);
    const lacking = await runPrimitive(OAUTH_FLOW, { ...PKCE, verify: { path: '/api/userinfo', expect_fields: ['email'] } }, makeCtx(env()));
    assert.equal(lacking.passed, false);
    assert.match(lacking.message, /missing email/);
  });

  test('schema: the code flow needs authorize_path; a client or a registration endpoint is required', () => {
    assert.equal(OAUTH_FLOW.schema.safeParse({ flow: 'authorization_code', token_path: '/t', client_id: 'c' }).success, false);
    assert.equal(OAUTH_FLOW.schema.safeParse({ flow: 'client_credentials', token_path: '/t' }).success, false);
    assert.equal(OAUTH_FLOW.schema.safeParse({ flow: 'client_credentials', token_path: '/t', client_id: 'c', extra: 1 }).success, false);
  });
});
