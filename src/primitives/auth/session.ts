import { hasHeader } from '../../http/request';
import type { ChainAuth, ChainState, CredentialsRequest, PrimitiveContext, RoleCredentials, StoredCookie } from '../types';
import { absorbCookies, cookieHeader, splitJoinedSetCookie } from './cookies';
import { noRoles } from './provider';

/**
 * Per-chain sessions. Every chain has one cookie jar per role (plus one for "no role yet", keyed
 * ''), so a CSRF cookie set by one request is sent with the next, and a role's login cookies never
 * leak into another role's requests. Nothing here outlives the chain: dependent nodes log in again.
 */
export const NO_ROLE = '';

export function chainAuth(state: ChainState): ChainAuth {
  if (!state.auth) state.auth = { sessions: {} };
  return state.auth;
}

function sessionOf(state: ChainState, role: string | undefined) {
  const auth = chainAuth(state);
  const key = role ?? NO_ROLE;
  return (auth.sessions[key] ??= { headers: {}, cookies: [], kind: 'anonymous' });
}

/**
 * Obtain a role's credentials (unless this chain already has them) and store its session. A step
 * that names a method, its own credentials or login fields always logs in afresh.
 */
export async function ensureRoleSession(ctx: PrimitiveContext, role: string, opts: Omit<CredentialsRequest, 'vars'> = {}): Promise<{ creds?: RoleCredentials; reused: boolean; token?: string }> {
  const auth = chainAuth(ctx.state);
  const existing = auth.sessions[role];
  if (existing && !existing.failed && !opts.forceRefresh && !opts.method && !opts.credentials && !opts.login) return { reused: true, token: existing.token };
  const port = ctx.env.roles ?? noRoles('this task declares no roles (task.yaml `roles:`)', ctx.env.baseUrl);
  const creds = await port.credentials(role, { ...opts, vars: ctx.state.vars });
  auth.sessions[role] = { headers: { ...creds.headers }, cookies: [...creds.cookies], kind: creds.kind, ...(creds.token !== undefined ? { token: creds.token } : {}), ...(creds.csrf ? { csrf: creds.csrf } : {}) };
  return { creds, reused: false, token: creds.token };
}

/** After a failed P13 the chain still acts as that role, with no credentials (never as another role). */
export function markRoleFailed(state: ChainState, role: string): void {
  chainAuth(state).sessions[role] = { headers: {}, cookies: [], kind: 'anonymous', failed: true };
}

export function setCurrentRole(state: ChainState, role: string | undefined): void {
  chainAuth(state).role = role;
}

export function currentRole(state: ChainState): string | undefined {
  return state.auth?.role;
}

/**
 * The headers a request of this chain carries for `role` (default: the current role): explicit
 * headers always win (compared case-insensitively) — an explicit `Cookie` replaces the jar.
 */
export function withSession(state: ChainState, path: string, explicit: Record<string, string>, role: string | undefined = currentRole(state)): Record<string, string> {
  const s = sessionOf(state, role);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.headers)) if (!hasHeader(explicit, k)) out[k] = v;
  Object.assign(out, explicit);
  if (!hasHeader(explicit, 'cookie')) {
    const c = cookieHeader(s.cookies, path);
    if (c) out.Cookie = c;
  }
  return out;
}

/** Keep the cookies a response set, in the jar of `role` (default: the current role). */
export function absorbSetCookie(state: ChainState, setCookie: string[] | string | undefined, role: string | undefined = currentRole(state)): void {
  if (!setCookie || setCookie.length === 0) return;
  const lines = Array.isArray(setCookie) ? setCookie : splitJoinedSetCookie(setCookie);
  const s = sessionOf(state, role);
  s.cookies = absorbCookies(s.cookies, lines);
}

export function sessionCookies(state: ChainState, role: string | undefined = currentRole(state)): StoredCookie[] {
  return sessionOf(state, role).cookies;
}

export function sessionHeaders(state: ChainState, role: string | undefined = currentRole(state)): Record<string, string> {
  return sessionOf(state, role).headers;
}
