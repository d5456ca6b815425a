import type { DialectContext, StepDialect } from './types';
import { isObject, type Inputs } from './util';

/** Tasks whose evaluator's P25 was a stub that always failed. */
const P25_STUB: Record<string, string> = {
  aoiwqoiq: 'not implemented',
  gmdnohlg: '"P25 not fully implemented" (always fails)',
  jzssnoqp: 'not implemented',
};

/** P30 (sgdoserd) → TOTP_CODE; P25 → OAUTH_FLOW, or PUBLISHED_STUB where the task's evaluator was a stub. */
export const authFlowsDialect: StepDialect = {
  types: ['P25', 'P30'],
  normalize(type, raw, ctx) {
    const i: Inputs = { ...raw };
    if (type === 'P30') {
      const out: Inputs = {};
      if ('secret' in i) out.secret = i.secret;
      else {
        const key = i.secret_context_key ?? 'mfa_secret';
        if (typeof key !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) ctx.issue('inputs.secret_context_key', 'must name a variable');
        out.secret = `{{${String(key)}}}`;
        ctx.spelling('secret_context_key', 'secret: "{{<key>}}"', 'the TOTP secret is the value of this chain variable');
      }
      delete i.secret;
      delete i.secret_context_key;
      out.store_as = i.store_as ?? 'mfa_code';
      delete i.store_as;
      for (const [from, to] of [['digits', 'digits'], ['step', 'step_seconds'], ['offset', 'offset']]) {
        if (from in i) {
          out[to] = i[from];
          delete i[from];
        }
      }
      return { type: 'TOTP_CODE', inputs: { ...out, ...i } };
    }
    if (ctx.task === 'iyjruvfz') return { type: 'PUBLISHED_STUB', inputs: { published_type: 'P25', reason: IYJ_REASON(i.flow), published_inputs: i } };
    if (ctx.task === 'gavmyneb' || ctx.task === 'ididetxj') return { type: 'OAUTH_FLOW', inputs: oauthOther(i, ctx) };
    if (P25_STUB[ctx.task]) return { type: 'PUBLISHED_STUB', inputs: { published_type: 'P25', reason: `task_${ctx.task}'s evaluator: ${P25_STUB[ctx.task]}`, published_inputs: i } };
    return { type: 'OAUTH_FLOW', inputs: oauth(i, ctx) };
  },
};

const IYJ_REASON = (flow: unknown) =>
  flow === 'platform_oauth_token_exchange' || flow === undefined || flow === 'generic_oauth_refresh_token'
    ? `task_iyjruvfz's evaluator ran this flow through backdoors (a grant row inserted into the app's database, or a refresh token forged with the app's secret read from its container); saasbench does not use backdoors and the step's inputs give no black-box flow`
    : `task_iyjruvfz's evaluator had no flow ${JSON.stringify(flow)} (it always failed: "unsupported flow")`;

/**
 * gavmyneb: `flow: authorization_code` was only the authorization request (GET authorize_url, 200
 * or 302 passed; the code was never exchanged) and `flow: oidc` a stub that passed; ididetxj ran
 * the whole code flow with PKCE and checked the token at `verify_userinfo`.
 */
function oauthOther(i: Inputs, ctx: DialectContext): Inputs {
  const out: Inputs = {};
  const take = (k: string) => {
    const v = i[k];
    delete i[k];
    return v;
  };
  const flow = take('flow');
  const authorize = 'authorize_url' in i ? take('authorize_url') : take('authorize_path');
  const token = take('token_url');
  if ('client_id' in i) out.client_id = take('client_id');
  if ('client_secret' in i) out.client_secret = take('client_secret');
  if ('redirect_uri' in i) out.redirect_uri = take('redirect_uri');
  if ('scope' in i) {
    const sc = take('scope');
    out.scopes = typeof sc === 'string' ? sc.split(/\s+/).filter(Boolean) : sc;
  }
  out.authorize_path = authorize;
  if (ctx.task === 'gavmyneb') {
    out.flow = 'authorize_request';
    if (flow === 'authorization_code') {
      out.expect_status = [200, 302];
      if (token !== undefined) out._token_url_unused = token;
      ctx.spelling('flow: authorization_code (gavmyneb)', 'flow: authorize_request, expect_status [200, 302]', 'the authorization request is accepted (its evaluator never exchanged a code)');
    } else if (flow === 'oidc') {
      if ('expect_redirect_with' in i) out.expect_redirect_with = take('expect_redirect_with');
      ctx.spelling('flow: oidc + expect_redirect_with', 'flow: authorize_request + expect_redirect_with', 'the OIDC authorization redirect carries these parameters (its evaluator passed without trying)');
    } else ctx.issue('inputs.flow', `unknown flow ${JSON.stringify(flow)}`);
    return { ...out, ...i };
  }
  // ididetxj
  if (flow !== 'authorization_code') ctx.issue('inputs.flow', `unknown flow ${JSON.stringify(flow)}`);
  out.flow = 'authorization_code';
  out.token_path = token;
  const pkce = take('pkce');
  out.pkce = isObject(pkce) && typeof pkce.method === 'string' ? pkce.method : 'S256';
  const creds = take('login_credentials');
  if (isObject(creds) && 'session_token' in creds) {
    out.token_cookie = 'accessToken';
    ctx.spelling('login_credentials.session_token', 'token_cookie: accessToken (the chain\'s admin session)', 'the user is logged in through the admin session cookie (its evaluator minted one)');
  }
  const v = take('verify_userinfo');
  if (isObject(v)) out.verify = { path: v.url, method: 'POST', expect_fields: v.expected_fields ?? ['data'] };
  ctx.spelling('flow: authorization_code + authorize_url/token_url, pkce.method, verify_userinfo', 'OAUTH_FLOW authorization_code, pkce, verify', 'the code flow with PKCE, then the token works at the userinfo endpoint');
  return { ...out, ...i };
}

/**
 * lgzivily (OpenEMR, SMART on FHIR): `flow` authorization_code_pkce | client_credentials_jwt. Its
 * evaluator made its own client (a backdoor insert); ours registers one at the registration
 * endpoint the task documents beside the token endpoint (/oauth2/{site}/registration).
 */
function oauth(i: Inputs, ctx: DialectContext): Inputs {
  const out: Inputs = {};
  const take = (k: string) => {
    const v = i[k];
    delete i[k];
    return v;
  };
  const flow = take('flow');
  const tokenPath = take('token_path');
  out.token_path = tokenPath;
  if (typeof tokenPath === 'string' && /\/token$/.test(tokenPath)) out.register_path = tokenPath.replace(/\/token$/, '/registration');
  else ctx.issue('inputs.token_path', 'expected a path ending in /token (the registration endpoint is beside it)');
  if (flow === 'authorization_code_pkce') {
    out.flow = 'authorization_code';
    out.authorize_path = take('authorize_path');
    out.pkce = take('code_challenge_method') ?? 'S256';
    if ('scopes' in i) out.scopes = take('scopes');
    if ('username' in i || 'password' in i) out.login = { username: take('username'), password: take('password') };
    if ('launched_patient_uuid' in i) {
      out.choose = take('launched_patient_uuid');
      ctx.spelling('launched_patient_uuid', 'choose', 'at the patient selection page, pick this patient (the token\'s launch context)');
    }
    if (take('inject_invalid_code_verifier') === true) {
      out.wrong_code_verifier = true;
      out.expect = 'answer';
      ctx.spelling('inject_invalid_code_verifier', 'wrong_code_verifier + expect: answer', 'exchange the code with a verifier that does not match (the token endpoint must refuse; P15 checks)');
    }
    ctx.spelling('flow: authorization_code_pkce (+ authorize_path, token_path, scopes, username/password, code_challenge_method)', 'flow: authorization_code, pkce, login, register_path', 'the authorization code flow with PKCE in a browser, logging in as the user, with a freshly registered client');
  } else if (flow === 'client_credentials_jwt') {
    out.flow = 'client_credentials';
    out.client_auth = 'private_key_jwt';
    out.jwt_alg = take('jwt_alg') ?? 'RS256';
    if ('scope' in i) out.scopes = [take('scope')];
    if ('reuse_jti' in i) {
      out.assertion_jti = take('reuse_jti');
      ctx.spelling('reuse_jti', 'assertion_jti', 'sign the client assertion with an earlier jti (a replay the server must refuse)');
    }
    out.expect = 'answer';
    ctx.spelling('flow: client_credentials_jwt (+ jwt_alg, scope)', 'flow: client_credentials, client_auth: private_key_jwt', 'a client-credentials token request authenticated by a signed JWT (SMART backend services); the following P15 judges the answer');
  } else ctx.issue('inputs.flow', `unknown flow ${JSON.stringify(flow)} (known: authorization_code_pkce, client_credentials_jwt)`);
  return { ...out, ...i };
}
