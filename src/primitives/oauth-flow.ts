import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import type { Json } from '../model/json';
import { sessionRequest } from './auth/request';
import { acquirePageSlot, appUrl, openAppContext, sharedBrowser } from './browser-common';
import { CHAIN_BROWSER, releaseOne } from './chain-resources';
import { show } from './compare';
import { HttpTransportError } from '../http/request';
import { definePrimitive, type PrimitiveContext } from './types';

const Path = z.string().startsWith('/', 'a path on the app (starting with /)');

export const OauthFlowSchema = z
  .object({
    /** authorize_request: only the authorization request (GET authorize_path, redirects not followed), checked by expect_status / expect_redirect_with */
    flow: z.enum(['authorization_code', 'client_credentials', 'authorize_request']),
    authorize_path: Path.optional(),
    token_path: Path.optional(),
    /** RFC 7591 dynamic client registration, used when no client_id is given (a fresh client per step) */
    register_path: Path.optional(),
    client_id: z.string().min(1).optional(),
    client_secret: z.string().min(1).optional(),
    /** how the client authenticates at the token endpoint (default: private_key_jwt with jwt_alg, client_secret_post with a secret, else none) */
    client_auth: z.enum(['client_secret_post', 'client_secret_basic', 'private_key_jwt', 'none']).optional(),
    /** private_key_jwt: the assertion is signed with a key of ours, registered as the client's JWKS */
    jwt_alg: z.literal('RS256').optional(),
    /** the assertion's jti (a replay test reuses an earlier one); default random */
    assertion_jti: z.string().min(1).optional(),
    /** never contacted: the browser's request to it is intercepted and the code read from it */
    redirect_uri: z.string().url().default('http://127.0.0.1:9/callback'),
    scopes: z.array(z.string().min(1)).default([]),
    pkce: z.enum(['S256', 'plain', 'none']).default('S256'),
    /** the resource owner's login, typed into the authorization server's login form */
    login: z.object({ username: z.string().min(1), password: z.string() }).strict().optional(),
    /** on a selection page (a SMART patient picker), pick the entry showing this text or value */
    choose: z.string().min(1).optional(),
    /** send a code_verifier that does not match the challenge (the token endpoint must refuse it) */
    wrong_code_verifier: z.boolean().default(false),
    /** token: the step passes when a token was issued; answer: when the token endpoint answered (a following P15/P07 judges it) */
    expect: z.enum(['token', 'answer']).default('token'),
    timeout_ms: z.number().int().min(1000).max(120_000).default(30_000),
    /** the code flow's browser: put the role's token into this cookie (an app whose web session is a token cookie) */
    token_cookie: z.string().min(1).optional(),
    /** authorize_request: the statuses that pass */
    expect_status: z.array(z.number().int().min(100).max(599)).min(1).default([200, 302, 303]),
    /** authorize_request: parameters the redirect (Location query or fragment) or an auto-posted form must carry */
    expect_redirect_with: z.array(z.string().min(1)).optional(),
    /** after a token was issued: call this endpoint with it (Bearer) and require 2xx and these top-level JSON fields */
    verify: z.object({ path: Path, method: z.enum(['GET', 'POST']).default('GET'), expect_fields: z.array(z.string().min(1)).default([]) }).strict().optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.flow !== 'client_credentials' && !v.authorize_path) ctx.addIssue({ code: 'custom', path: ['authorize_path'], message: `${v.flow} needs authorize_path` });
    if (v.flow !== 'authorize_request' && !v.token_path) ctx.addIssue({ code: 'custom', path: ['token_path'], message: `${v.flow} needs token_path` });
    if (v.flow !== 'authorize_request' && !v.client_id && !v.register_path) ctx.addIssue({ code: 'custom', path: ['client_id'], message: 'give client_id or register_path' });
    if (v.client_auth === 'private_key_jwt' && v.client_id) ctx.addIssue({ code: 'custom', path: ['client_auth'], message: 'private_key_jwt registers its key: use register_path, not client_id' });
    if (v.wrong_code_verifier && (v.flow !== 'authorization_code' || v.pkce === 'none')) ctx.addIssue({ code: 'custom', path: ['wrong_code_verifier'], message: 'needs the authorization code flow with PKCE' });
  });
type Input = z.infer<typeof OauthFlowSchema>;

const b64u = (b: Buffer | string) => Buffer.from(b).toString('base64url');

let keys: { privateKey: KeyObject; jwk: Record<string, unknown> } | undefined;
/** One RSA key per process for private_key_jwt clients (registered with each fresh client). */
function clientKey() {
  if (!keys) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
    keys = { privateKey, jwk: { ...jwk, kid: createHash('sha256').update(JSON.stringify(jwk)).digest('base64url').slice(0, 16), use: 'sig', alg: 'RS256' } };
  }
  return keys;
}

function clientAssertion(clientId: string, aud: string, jti: string): string {
  const { privateKey, jwk } = clientKey();
  const now = Math.floor(Date.now() / 1000);
  const head = b64u(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: jwk.kid }));
  const body = b64u(JSON.stringify({ iss: clientId, sub: clientId, aud, jti, iat: now, exp: now + 300 }));
  return `${head}.${body}.${b64u(sign('sha256', Buffer.from(`${head}.${body}`), privateKey))}`;
}

const form = (o: Record<string, string | undefined>) => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) if (v !== undefined) p.set(k, v);
  return { body: Buffer.from(p.toString()), contentType: 'application/x-www-form-urlencoded' };
};

/**
 * OAUTH_FLOW: an OAuth 2 / OIDC token request as a client would make it. authorization_code:
 * the authorize URL is opened in Chromium (with PKCE), the login form and a consent page are
 * answered, the code is read from the redirect and exchanged at the token endpoint.
 * client_credentials: one token request. The client is given or registered (RFC 7591). The token
 * response becomes the chain's last response; tokens are exported as access_token, refresh_token,
 * id_token, and the assertion's jti as last_jti.
 */
export const OAUTH_FLOW = definePrimitive({
  id: 'OAUTH_FLOW',
  name: 'oauth_flow',
  schema: OauthFlowSchema,
  produces: () => ({ exported: ['access_token', 'refresh_token', 'id_token', 'last_jti', 'oauth_client_id'], local: ['last_status', 'last_body'] }),
  async run(input, ctx) {
    const auth = input.client_auth ?? (input.jwt_alg ? 'private_key_jwt' : input.client_secret ? 'client_secret_post' : 'none');
    const done: string[] = [];
    if (input.flow === 'authorize_request') return authorizeRequest(ctx, input);
    try {
      const client = input.client_id ? { id: input.client_id, secret: input.client_secret } : await register(ctx, input, auth, done);
      if ('problem' in client) return { passed: false, message: client.problem, data: { done } };
      ctx.setVar('oauth_client_id', client.id);
      const params: Record<string, string | undefined> = {};
      if (input.flow === 'authorization_code') {
        const verifier = b64u(randomBytes(48));
        const got = await authorize(ctx, input, client.id, verifier, done);
        if ('problem' in got) return { passed: false, message: got.problem, data: { done } };
        Object.assign(params, { grant_type: 'authorization_code', code: got.code, redirect_uri: input.redirect_uri, code_verifier: input.pkce === 'none' ? undefined : input.wrong_code_verifier ? b64u(randomBytes(48)) : verifier });
      } else Object.assign(params, { grant_type: 'client_credentials', scope: input.scopes.join(' ') || undefined });
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (auth === 'client_secret_basic') headers.Authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret ?? '')}`).toString('base64')}`;
      else params.client_id = client.id;
      if (auth === 'client_secret_post') params.client_secret = client.secret;
      if (auth === 'private_key_jwt') {
        const jti = input.assertion_jti ?? b64u(randomBytes(16));
        params.client_assertion_type = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
        params.client_assertion = clientAssertion(client.id, new URL(input.token_path!, ctx.env.baseUrl).toString(), jti);
        ctx.setVar('last_jti', jti);
      }
      const r = await sessionRequest(ctx, { method: 'POST', path: input.token_path!, headers, raw: form(params), timeoutMs: input.timeout_ms });
      const body = (r.body && typeof r.body === 'object' ? r.body : {}) as Record<string, Json>;
      for (const k of ['access_token', 'refresh_token', 'id_token'] as const) if (typeof body[k] === 'string') ctx.setVar(k, body[k]);
      done.push(`token → ${r.status}`);
      const issued = r.status >= 200 && r.status < 300 && typeof body.access_token === 'string';
      let verified = true;
      if (issued && input.verify) {
        const v = await sessionRequest(ctx, { method: input.verify.method, path: input.verify.path, headers: { Authorization: `Bearer ${String(body.access_token)}` }, ...(input.verify.method === 'POST' ? { json: {} } : {}), timeoutMs: input.timeout_ms, record: false });
        const vb = (v.body && typeof v.body === 'object' ? v.body : {}) as Record<string, unknown>;
        const missing = input.verify.expect_fields.filter((f) => !(f in vb));
        verified = v.status >= 200 && v.status < 300 && missing.length === 0;
        done.push(`${input.verify.method} ${input.verify.path} with the token → ${v.status}${missing.length ? ` (missing ${missing.join(', ')})` : ''}`);
      }
      const passed = input.expect === 'answer' || (issued && verified);
      return {
        passed,
        message: `${input.flow}${input.wrong_code_verifier ? ' (wrong code_verifier)' : ''}: ${done.join('; ')}${issued ? `; ${String(body.token_type ?? 'token')} issued${body.scope ? ` for ${show(body.scope)}` : ''}` : `; no token${body.error ? ` (${show(body.error)})` : ''}`}`,
        data: { done, status: r.status, issued },
      };
    } catch (e) {
      if (e instanceof HttpTransportError) return { passed: false, message: `${input.flow}: ${done.join('; ')}${done.length ? '; ' : ''}${e.message}` };
      throw e;
    }
  },
});

/** GET the authorization endpoint (redirects not followed) and check the status and the redirect's parameters. */
async function authorizeRequest(ctx: PrimitiveContext, input: Input) {
  const q = new URLSearchParams();
  if (input.client_id) q.set('client_id', input.client_id);
  if (input.client_id || input.scopes.length) {
    q.set('response_type', 'code');
    q.set('redirect_uri', input.redirect_uri);
    q.set('state', b64u(randomBytes(12)));
  }
  if (input.scopes.length) q.set('scope', input.scopes.join(' '));
  const qs = q.toString();
  const path = qs ? `${input.authorize_path}${input.authorize_path!.includes('?') ? '&' : '?'}${qs}` : input.authorize_path!;
  try {
    const r = await sessionRequest(ctx, { method: 'GET', path, headers: { Accept: 'text/html,application/json' }, timeoutMs: input.timeout_ms });
    const problems: string[] = [];
    if (!input.expect_status.includes(r.status)) problems.push(`status ${r.status} (expected ${input.expect_status.join(', ')})`);
    if (input.expect_redirect_with) {
      const found = new Set<string>();
      const loc = r.headers.location;
      if (loc) {
        const u = new URL(loc, ctx.env.baseUrl);
        for (const k of [...u.searchParams.keys(), ...new URLSearchParams(u.hash.replace(/^#/, '')).keys()]) found.add(k);
      }
      const text = typeof r.body === 'string' ? r.body : '';
      for (const m of text.matchAll(/<input[^>]*name=["']([^"']+)["']/gi)) found.add(m[1]);
      const missing = input.expect_redirect_with.filter((k) => !found.has(k));
      if (missing.length) problems.push(`the redirect carries no ${missing.join(', ')}`);
    }
    return { passed: problems.length === 0, message: `GET ${input.authorize_path} → ${r.status}${r.headers.location ? ` (Location ${show(r.headers.location.slice(0, 120))})` : ''}${problems.length ? `; ${problems.join('; ')}` : ''}`, data: { status: r.status } };
  } catch (e) {
    if (e instanceof HttpTransportError) return { passed: false, message: `GET ${input.authorize_path}: ${e.message}` };
    throw e;
  }
}

async function register(ctx: PrimitiveContext, input: Input, auth: string, done: string[]): Promise<{ id: string; secret?: string } | { problem: string }> {
  const meta: Record<string, Json> = {
    client_name: 'saasbench evaluator',
    redirect_uris: [input.redirect_uri],
    grant_types: input.flow === 'client_credentials' ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
    response_types: input.flow === 'client_credentials' ? [] : ['code'],
    token_endpoint_auth_method: auth,
    scope: input.scopes.join(' '),
  };
  if (auth === 'private_key_jwt') meta.jwks = { keys: [clientKey().jwk as Json] };
  const r = await sessionRequest(ctx, { method: 'POST', path: input.register_path!, json: meta, timeoutMs: input.timeout_ms, record: false });
  const body = (r.body && typeof r.body === 'object' ? r.body : {}) as Record<string, unknown>;
  done.push(`client registration → ${r.status}`);
  if (r.status >= 300 || typeof body.client_id !== 'string') return { problem: `client registration at ${input.register_path} answered ${r.status} without a client_id: ${show(r.body)}` };
  return { id: body.client_id, secret: typeof body.client_secret === 'string' ? body.client_secret : undefined };
}

const CONSENT = /allow|authori[sz]e|approve|accept|grant|consent|confirm|continue|yes|submit|log ?in|sign ?in/i;

/** Open the authorize URL in Chromium, answer login/selection/consent pages, return the code. */
async function authorize(ctx: PrimitiveContext, input: Input, clientId: string, verifier: string, done: string[]): Promise<{ code: string } | { problem: string }> {
  const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: input.redirect_uri, state: b64u(randomBytes(12)) });
  if (input.scopes.length) q.set('scope', input.scopes.join(' '));
  if (input.pkce !== 'none') {
    q.set('code_challenge', input.pkce === 'S256' ? b64u(createHash('sha256').update(verifier).digest()) : verifier);
    q.set('code_challenge_method', input.pkce);
  }
  await releaseOne(ctx.state, CHAIN_BROWSER); // one page per chain (see browser-live.ts)
  const release = await acquirePageSlot();
  const browser = await (ctx.env.browser ?? sharedBrowser)();
  const context = await openAppContext(ctx, browser, { viewport: { width: 1280, height: 800 }, tokenCookie: input.token_cookie });
  let redirected: URL | undefined;
  try {
    const target = input.redirect_uri.replace(/[?#].*$/, '');
    // the server's redirect to redirect_uri is seen as a request (route handlers miss redirect hops);
    // a direct request is answered here, so nothing ever reaches that address
    context.on('request', (r) => {
      if (!redirected && r.url().startsWith(target)) redirected = new URL(r.url());
    });
    await context.route((u) => u.toString().startsWith(target), (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'saasbench: authorization received' }));
    const page = await context.newPage();
    page.setDefaultTimeout(Math.min(input.timeout_ms, 10_000));
    const sep = input.authorize_path!.includes('?') ? '&' : '?';
    await page.goto(appUrl(`${input.authorize_path}${sep}${q}`, ctx.env.baseUrl), { waitUntil: 'domcontentloaded', timeout: input.timeout_ms }).catch((e: Error) => {
      if (!redirected) throw e;
    });
    for (let i = 0; i < 8 && !redirected; i++) {
      await page.waitForLoadState('domcontentloaded').catch(() => undefined);
      const acted = await answerPage(page, input, done);
      if (!acted) break;
      await page.waitForLoadState('load', { timeout: input.timeout_ms }).catch(() => undefined);
    }
    if (!redirected) return { problem: `the authorization never redirected to ${input.redirect_uri}: ${done.join('; ') || 'nothing to answer'}; stopped at ${safePath(page.url())} (${show(await page.title().catch(() => ''))})` };
    const err = redirected.searchParams.get('error');
    const code = redirected.searchParams.get('code');
    done.push(`redirect with ${code ? 'a code' : `error ${err}`}`);
    if (!code) return { problem: `the authorization was refused: ${err}${redirected.searchParams.get('error_description') ? ` (${redirected.searchParams.get('error_description')})` : ''}` };
    if (redirected.searchParams.get('state') !== q.get('state')) return { problem: 'the redirect carries another state than the one sent' };
    return { code };
  } catch (e) {
    return { problem: `authorization in the browser failed: ${(e as Error).message.split('\n')[0]}` };
  } finally {
    await context.close().catch(() => undefined);
    release();
  }
}

const safePath = (u: string) => {
  try {
    return new URL(u).pathname;
  } catch {
    return u;
  }
};

/** One page of the authorization: a login form, a selection, or a consent button. */
async function answerPage(page: Page, input: Input, done: string[]): Promise<boolean> {
  const password = page.locator('input[type=password]:visible');
  if (input.login && (await password.count()) > 0) {
    const user = page.locator('form:has(input[type=password]) input:visible:not([type=password]):not([type=hidden]):not([type=submit]):not([type=checkbox]):not([type=radio]):not([type=button])').first();
    const at = safePath(page.url());
    if ((await user.count()) === 0) throw new Error(`a password field without a username field at ${at}`);
    await user.fill(input.login.username);
    await password.first().fill(input.login.password);
    await Promise.all([page.waitForNavigation({ timeout: input.timeout_ms }).catch(() => undefined), password.first().press('Enter')]);
    done.push(`logged in through the form at ${at}`);
    return true;
  }
  if (input.choose) {
    const pick = page.locator(`[value="${input.choose.replace(/"/g, '\\"')}"], a[href*="${input.choose.replace(/"/g, '\\"')}"]`).or(page.getByText(input.choose, { exact: false })).first();
    if ((await pick.count()) > 0) {
      await pick.click();
      done.push(`chose ${input.choose}`);
      return true;
    }
  }
  const buttons = page.locator('button:visible, input[type=submit]:visible');
  const n = await buttons.count();
  for (let i = 0; i < n; i++) {
    const b = buttons.nth(i);
    const label = ((await b.textContent().catch(() => '')) ?? '').trim() || ((await b.getAttribute('value').catch(() => '')) ?? '');
    if (CONSENT.test(label) && !/deny|cancel|reject|decline/i.test(label)) {
      await Promise.all([page.waitForNavigation({ timeout: input.timeout_ms }).catch(() => undefined), b.click()]);
      done.push(`answered ${show(label.slice(0, 40))}`);
      return true;
    }
  }
  return false;
}
