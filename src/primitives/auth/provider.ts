import { createHash } from 'node:crypto';
import type { Json } from '../../model/json';
import { show } from '../compare';
import { queryJsonPath } from '../jsonpath';
import { resolveTemplates } from '../template';
import type { CredentialsRequest, ExecResult, RoleCredentials, RolesPort } from '../types';
import { LoginRefused, performLogin, performSetupRequest, RoleError } from './login';
import { LoginSchema, type CredentialKind, type LoginOverride, type RoleDecl, type RolesDecl } from '../../model/roles';
import { zodIssueText } from '../../zod-issues';

export { LoginRefused, RoleError } from './login';

export interface RolesDeps {
  baseUrl: string;
  appService: string;
  exec(service: string, command: string, opts?: { timeoutMs?: number }): Promise<ExecResult>;
  /** identifies the running system (e.g. the stack's project); seed and setup results are cached under it */
  cacheKey: string;
  /** why an undeclared role has no credentials (the failure message says it) */
  undeclaredHint?: string;
}

const API_KEY_METHODS = new Set(['api_key', 'api_token', 'db_api_key', 'apikey', 'key']);
const LOGIN_METHODS = new Set(['login', 'jwt', 'session', 'password', 'cookie', 'token', 'bearer']);
const BASIC_METHODS = new Set(['basic', 'basic_auth']);
export const P13_METHODS = [...API_KEY_METHODS, ...LOGIN_METHODS, ...BASIC_METHODS] as const;

/** Seed and setup results survive across chains (one run per role per running system). */
const onceCache = new Map<string, Promise<string>>();

export const ANONYMOUS: RoleCredentials = { role: 'anonymous', kind: 'anonymous', headers: {}, cookies: [], summary: 'anonymous: no credentials' };

function tpl<T>(value: T, vars: Record<string, Json>, what: string): T {
  try {
    return resolveTemplates(value, vars);
  } catch (e) {
    throw new RoleError(`${what}: ${(e as Error).message}`);
  }
}

/** Which declared credential kind a P13 `method` selects (no method: the role's `default`, else the first declared). */
export function pickKind(role: string, r: RoleDecl, method?: string): CredentialKind {
  const m = method?.toLowerCase();
  const have = (['login', 'api_key', 'seed', 'basic'] as const).filter((k) => r[k]);
  if (m && API_KEY_METHODS.has(m)) {
    const k = have.find((x) => x === 'api_key') ?? have.find((x) => x === 'seed');
    if (!k) throw new RoleError(`role "${role}" declares ${have.join(', ')} credentials, but the step asks for method "${method}" (an API key: declare api_key or seed)`);
    return k;
  }
  if (m && LOGIN_METHODS.has(m)) {
    if (!r.login) throw new RoleError(`role "${role}" declares ${have.join(', ')} credentials, but the step asks for method "${method}" (a login: declare login)`);
    return 'login';
  }
  if (m && BASIC_METHODS.has(m)) {
    if (!r.basic) throw new RoleError(`role "${role}" declares ${have.join(', ')} credentials, but the step asks for method "${method}" (HTTP Basic: declare basic)`);
    return 'basic';
  }
  return r.default ?? have[0];
}

/** Run `key`'s promise once per running system (a failure is forgotten, so a later chain retries). */
function once(key: string, run: () => Promise<string>, fresh = false): Promise<string> {
  let p = fresh ? undefined : onceCache.get(key);
  if (!p) {
    p = run();
    onceCache.set(key, p);
    p.catch(() => onceCache.delete(key));
  }
  return p;
}

const digest = (s: string) => createHash('sha256').update(s).digest('hex');

export function rolesPort(decl: RolesDecl, deps: RolesDeps): RolesPort {
  const roleVars = (role: string, r: RoleDecl, opts: CredentialsRequest) => {
    const vars = opts.vars;
    const local: Record<string, Json> = { ...vars };
    const username = opts.credentials?.username ?? r.username;
    const password = opts.credentials?.password ?? r.password;
    if (username !== undefined) local.username = tpl(username, vars, `role ${role}: username`);
    if (password !== undefined) local.password = tpl(password, vars, `role ${role}: password`);
    return local;
  };

  /** The role's declared steps, once per running system, before its first credentials. */
  async function setup(role: string, r: RoleDecl, local: Record<string, Json>): Promise<void> {
    for (const [i, step] of (r.setup ?? []).entries()) {
      if ('command' in step) {
        const command = tpl(step.command, local, `role ${role}: setup[${i}].command`);
        const service = step.service ?? deps.appService;
        await once(`${deps.cacheKey}|setup|${role}|${service}|${digest(command)}`, async () => {
          const res = await deps.exec(service, command, { timeoutMs: step.timeout_seconds * 1000 });
          if (res.timedOut) throw new RoleError(`setup for role ${role}: command timed out after ${step.timeout_seconds}s in ${service}`);
          if (res.exitCode !== 0) throw new RoleError(`setup for role ${role}: command exited ${res.exitCode} in ${service}: ${show(res.stderr.trim().slice(-300))}`);
          return 'ok';
        });
      } else {
        const request = tpl(step.request, local, `role ${role}: setup[${i}].request`);
        await once(`${deps.cacheKey}|setup|${role}|${digest(JSON.stringify(request))}`, () => performSetupRequest(role, request, deps.baseUrl));
      }
    }
  }

  async function login(role: string, r: RoleDecl, override: LoginOverride | undefined, send: Record<string, string> | undefined, local: Record<string, Json>): Promise<RoleCredentials> {
    const merged = LoginSchema.safeParse({ ...(r.login ?? {}), ...(override ?? {}) });
    if (!merged.success) throw new RoleError(`role "${role}": the login is incomplete: ${zodIssueText(merged.error, { root: '(login)' })}`);
    const l = tpl(merged.data, local, `role ${role}: login`);
    if (l.basic) {
      if (typeof local.username !== 'string' || typeof local.password !== 'string') throw new RoleError(`role "${role}": a login with basic: true needs a username and a password`);
      l.headers = { ...l.headers, Authorization: `Basic ${Buffer.from(`${local.username}:${local.password}`, 'utf8').toString('base64')}` };
    }
    const res = await performLogin(role, l, deps.baseUrl);
    const headers = l.token ? tpl(send ?? r.send?.headers ?? { Authorization: 'Bearer {{token}}' }, { ...local, ...res.captured, token: res.token! }, `role ${role}: send.headers`) : {};
    const cookieNames = res.cookies.map((c) => c.name);
    return {
      role,
      kind: 'login',
      headers,
      cookies: res.cookies,
      token: res.token,
      ...(res.csrf ? { csrf: res.csrf } : {}),
      response: res.response,
      username: typeof local.username === 'string' ? local.username : undefined,
      summary: `${res.steps.join(', ')}${cookieNames.length ? `; cookies ${cookieNames.join(', ')}` : ''}${l.token ? `; token from ${l.token.from} sent as ${Object.keys(headers).join(', ')}` : ''}`,
    };
  }

  async function seed(role: string, r: RoleDecl, local: Record<string, Json>, forceRefresh: boolean, send?: Record<string, string>): Promise<RoleCredentials> {
    const s = r.seed!;
    const command = tpl(s.command, local, `role ${role}: seed.command`);
    const service = s.service ?? deps.appService;
    const run = async (): Promise<string> => {
      const res = await deps.exec(service, command, { timeoutMs: s.timeout_seconds * 1000 });
      if (res.timedOut) throw new RoleError(`seed for role ${role}: command timed out after ${s.timeout_seconds}s in ${service}`);
      if (res.exitCode !== 0) throw new RoleError(`seed for role ${role}: command exited ${res.exitCode} in ${service}: ${show(res.stderr.trim().slice(-300))}`);
      let token: string | undefined;
      if (s.token.from === 'stdout') token = res.stdout.split(/\r?\n/).map((x) => x.trim()).filter(Boolean).pop();
      else {
        try {
          const hit = queryJsonPath(JSON.parse(res.stdout), s.token.path)[0];
          if (typeof hit === 'string' || typeof hit === 'number') token = String(hit);
        } catch {
          throw new RoleError(`seed for role ${role}: stdout is not JSON: ${show(res.stdout.slice(0, 200))}`);
        }
      }
      if (!token) throw new RoleError(`seed for role ${role}: no token in the command's stdout`);
      return token;
    };
    const token = s.once ? await once(`${deps.cacheKey}|seed|${role}|${service}|${digest(command)}`, run, forceRefresh) : await run();
    const headers = tpl(send ?? r.send!.headers, { ...local, token }, `role ${role}: send.headers`);
    return { role, kind: 'seed', headers, cookies: [], token, username: typeof local.username === 'string' ? local.username : undefined, summary: `seed command in ${service}; token sent as ${Object.keys(headers).join(', ')}` };
  }

  function basic(role: string, r: RoleDecl, local: Record<string, Json>): RoleCredentials {
    if (typeof local.username !== 'string' || typeof local.password !== 'string') throw new RoleError(`role "${role}": HTTP Basic needs a username and a password (declare them, or give the step credentials)`);
    const token = Buffer.from(`${local.username}:${local.password}`, 'utf8').toString('base64');
    const extra = tpl(r.basic!.headers, local, `role ${role}: basic.headers`);
    return { role, kind: 'basic', headers: { ...extra, Authorization: `Basic ${token}` }, cookies: [], token, username: local.username, summary: `HTTP Basic as ${local.username}` };
  }

  return {
    declared: () => Object.keys(decl),
    usernameOf(role, vars) {
      const r = decl[role];
      if (!r?.username) return undefined;
      try {
        return String(resolveTemplates(r.username, vars));
      } catch {
        return undefined;
      }
    },
    async credentials(role, opts) {
      let r = decl[role];
      if (!r) {
        if (role === 'anonymous' && !opts.login) return ANONYMOUS;
        // an inline login (P13 `login` with a path) needs no declaration
        if (opts.login?.path) r = { login: LoginSchema.parse(opts.login) } as RoleDecl;
        else {
          const names = Object.keys(decl);
          const list = names.length ? ` (declared roles: ${names.join(', ')})` : '';
          throw new RoleError(`role "${role}" has no credentials declared${list}: ${deps.undeclaredHint ?? 'declare it under roles: in task.yaml — see docs/compatibility.md#auth'}`);
        }
      }
      if (r.anonymous) return { ...ANONYMOUS, role };
      const kind = opts.login ? 'login' : pickKind(role, r, opts.method);
      const local = roleVars(role, r, opts);
      await setup(role, r, local);
      if (kind === 'login') return login(role, r, opts.login, opts.send, local);
      if (kind === 'seed') return seed(role, r, local, !!opts.forceRefresh, opts.send);
      if (kind === 'basic') return basic(role, r, local);
      const headers = tpl(r.api_key!.headers, local, `role ${role}: api_key.headers`);
      return { role, kind: 'api_key', headers, cookies: [], username: typeof local.username === 'string' ? local.username : undefined, summary: `API key headers ${Object.keys(headers).join(', ')}` };
    },
  };
}

/** A RolesPort for a task that declares no roles: `anonymous` and inline logins work; every other role fails clearly. */
export function noRoles(why: string, baseUrl?: string): RolesPort {
  if (baseUrl) {
    return rolesPort({}, { baseUrl, appService: '', cacheKey: baseUrl, undeclaredHint: why, exec: async () => ({ exitCode: 1, stdout: '', stderr: 'no container in this environment', timedOut: false }) });
  }
  return {
    declared: () => [],
    usernameOf: () => undefined,
    async credentials(role) {
      if (role === 'anonymous') return ANONYMOUS;
      throw new RoleError(`role "${role}" has no credentials declared: ${why}`);
    },
  };
}

