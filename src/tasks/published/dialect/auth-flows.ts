import type { DialectContext, StepDialect } from './types';
import type { Inputs } from './util';

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
    if (P25_STUB[ctx.task]) return { type: 'PUBLISHED_STUB', inputs: { published_type: 'P25', reason: `task_${ctx.task}'s evaluator: ${P25_STUB[ctx.task]}`, published_inputs: i } };
    return { type: 'OAUTH_FLOW', inputs: oauth(i, ctx) };
  },
};

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
