import { createHash } from 'node:crypto';
import type { Json } from '../../json';
import { show } from '../compare';
import { HttpTransportError } from '../http';
import { queryJsonPath } from '../jsonpath';
import { resolveTemplates } from '../template';
import type { ExecResult, RoleCredentials, RolesPort, StoredCookie } from '../types';
import { absorbCookies, cookieHeader } from './cookies';
import { formEncode, sendRaw, type RawResponse } from './http-raw';
import type { RoleDecl, RolesDecl } from './roles-schema';
import { LoginTokenSource } from './roles-schema';
import type { z } from 'zod';

/** A role's credentials cannot be had: the message says which role, which step and why. */
export class RoleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RoleError';
  }
}

export interface RolesDeps {
  baseUrl: string;
  appService: string;
  exec(service: string, command: string, opts?: { timeoutMs?: number }): Promise<ExecResult>;
  /** identifies the running system (e.g. the stack's project); seed results are cached under it */
  cacheKey: string;
}

const API_KEY_METHODS = new Set(['api_key', 'api_token', 'db_api_key', 'apikey', 'key']);
const LOGIN_METHODS = new Set(['login', 'jwt', 'session', 'password', 'cookie', 'token', 'bearer']);
export const P13_METHODS = [...API_KEY_METHODS, ...LOGIN_METHODS] as const;

/** Seed results survive across chains (one command per role per running system). */
const seedCache = new Map<string, Promise<string>>();

export const ANONYMOUS: RoleCredentials = { role: 'anonymous', kind: 'anonymous', headers: {}, cookies: [], summary: 'anonymous: no credentials' };

function tpl<T>(value: T, vars: Record<string, Json>, what: string): T {
  try {
    return resolveTemplates(value, vars);
  } catch (e) {
    throw new RoleError(`${what}: ${(e as Error).message}`);
  }
}

/** Which declared credential kind a P13 `method` selects. */
export function pickKind(role: string, r: RoleDecl, method?: string): 'login' | 'api_key' | 'seed' {
  const m = method?.toLowerCase();
  const have = (['login', 'api_key', 'seed'] as const).filter((k) => r[k]);
  if (m && API_KEY_METHODS.has(m)) {
    const k = have.find((x) => x === 'api_key') ?? have.find((x) => x === 'seed');
    if (!k) throw new RoleError(`role "${role}" declares ${have.join(', ')} credentials, but the step asks for method "${method}" (an API key: declare api_key or seed)`);
    return k;
  }
  if (m && LOGIN_METHODS.has(m)) {
    if (!r.login) throw new RoleError(`role "${role}" declares ${have.join(', ')} credentials, but the step asks for method "${method}" (a login: declare login)`);
    return 'login';
  }
  return have[0];
}

function extractLoginToken(src: z.infer<typeof LoginTokenSource>, res: RawResponse, jar: StoredCookie[]): string | undefined {
  if (src.from === 'body') {
    const hit = queryJsonPath(res.body, src.path)[0];
    return typeof hit === 'string' || typeof hit === 'number' ? String(hit) : undefined;
  }
  if (src.from === 'header') return res.headers[src.name.toLowerCase()];
  return jar.find((c) => c.name === src.name)?.value;
}

function describeSource(src: z.infer<typeof LoginTokenSource>): string {
  return src.from === 'body' ? `body ${src.path}` : `${src.from} ${src.name}`;
}

export function rolesPort(decl: RolesDecl, deps: RolesDeps): RolesPort {
  const roleVars = (role: string, r: RoleDecl, vars: Record<string, Json>) => {
    const local: Record<string, Json> = { ...vars };
    if (r.username !== undefined) local.username = tpl(r.username, vars, `role ${role}: username`);
    if (r.password !== undefined) local.password = tpl(r.password, vars, `role ${role}: password`);
    return local;
  };

  async function login(role: string, r: RoleDecl, local: Record<string, Json>): Promise<RoleCredentials> {
    const l = r.login!;
    const timeoutMs = l.timeout_seconds * 1000;
    let jar: StoredCookie[] = [];
    const send = async (method: string, path: string, headers: Record<string, string>, body?: Buffer, contentType?: string) => {
      const h: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'saasbench-evaluator', ...headers };
      if (contentType) h['Content-Type'] = contentType;
      const c = cookieHeader(jar, path);
      if (c) h.Cookie = c;
      try {
        const res = await sendRaw({ baseUrl: deps.baseUrl, method, path, headers: h, body, timeoutMs });
        jar = absorbCookies(jar, res.setCookies);
        return res;
      } catch (e) {
        if (e instanceof HttpTransportError) throw new RoleError(`login as ${role}: ${method} ${path}: no response: ${e.message}`);
        throw e;
      }
    };
    const headers = tpl(l.headers, local, `role ${role}: login.headers`);
    const body: Record<string, Json> = tpl(l.body, local, `role ${role}: login.body`);
    const steps: string[] = [];
    let csrf: RoleCredentials['csrf'];
    if (l.csrf) {
      const res = await send(l.csrf.method, l.csrf.path, {});
      const token = extractLoginToken(l.csrf.token, res, jar);
      steps.push(`${l.csrf.method} ${l.csrf.path} → ${res.status}`);
      if (res.status >= 400 || token === undefined) {
        throw new RoleError(`login as ${role}: CSRF step ${l.csrf.method} ${l.csrf.path} → ${res.status}, no token at ${describeSource(l.csrf.token)} (body ${show(res.body, 200)})`);
      }
      if (l.csrf.header) headers[l.csrf.header] = token;
      if (l.csrf.body_field) body[l.csrf.body_field] = token;
      csrf = { ...(l.csrf.header ? { header: l.csrf.header } : {}), token };
    }
    const hasBody = l.method !== 'GET';
    const payload = !hasBody ? undefined : l.format === 'form' ? formEncode(body) : Buffer.from(JSON.stringify(body));
    const res = await send(l.method, l.path, headers, payload, hasBody ? (l.format === 'form' ? 'application/x-www-form-urlencoded' : 'application/json') : undefined);
    steps.push(`${l.method} ${l.path} → ${res.status}`);
    const ok = l.expect_status ? l.expect_status.includes(res.status) : res.status >= 200 && res.status < 400;
    if (!ok) {
      throw new RoleError(`login as ${role}: ${l.method} ${l.path} → ${res.status}, expected ${l.expect_status ? l.expect_status.join('/') : '2xx or 3xx'} (body ${show(res.body, 200)})`);
    }
    let out: Record<string, string> = {};
    if (l.token) {
      const token = extractLoginToken(l.token, res, jar);
      if (token === undefined || token === '') throw new RoleError(`login as ${role}: ${l.method} ${l.path} → ${res.status} but no token at ${describeSource(l.token)} (body ${show(res.body, 200)})`);
      out = tpl(r.send?.headers ?? { Authorization: 'Bearer {{token}}' }, { ...local, token }, `role ${role}: send.headers`);
    }
    const cookieNames = jar.map((c) => c.name);
    return {
      role,
      kind: 'login',
      headers: out,
      cookies: jar,
      username: typeof local.username === 'string' ? local.username : undefined,
      ...(csrf ? { csrf } : {}),
      summary: `${steps.join(', ')}${cookieNames.length ? `; cookies ${cookieNames.join(', ')}` : ''}${l.token ? `; token from ${describeSource(l.token)} sent as ${Object.keys(out).join(', ')}` : ''}`,
    };
  }

  async function seed(role: string, r: RoleDecl, local: Record<string, Json>, forceRefresh: boolean): Promise<RoleCredentials> {
    const s = r.seed!;
    const command = tpl(s.command, local, `role ${role}: seed.command`);
    const service = s.service ?? deps.appService;
    const key = `${deps.cacheKey}|${role}|${service}|${createHash('sha256').update(command).digest('hex')}`;
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
    let p = s.once && !forceRefresh ? seedCache.get(key) : undefined;
    if (!p) {
      p = run();
      if (s.once) {
        seedCache.set(key, p);
        p.catch(() => seedCache.delete(key));
      }
    }
    const token = await p;
    const headers = tpl(r.send!.headers, { ...local, token }, `role ${role}: send.headers`);
    return { role, kind: 'seed', headers, cookies: [], username: typeof local.username === 'string' ? local.username : undefined, summary: `seed command in ${service}; token sent as ${Object.keys(headers).join(', ')}` };
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
      const r = decl[role];
      if (!r) {
        if (role === 'anonymous') return ANONYMOUS;
        throw new RoleError(`role "${role}" has no credentials declared (declared roles: ${Object.keys(decl).join(', ') || 'none'}); declare it under roles: in task.yaml — see docs/compatibility.md#auth`);
      }
      if (r.anonymous) return { ...ANONYMOUS, role };
      const kind = pickKind(role, r, opts.method);
      const local = roleVars(role, r, opts.vars);
      // a step that names the account (P14 login_as) logs in with it through the role's declared flow
      if (opts.as) {
        if (kind !== 'login') throw new RoleError(`role "${role}" declares ${kind} credentials; logging in as user ${opts.as.username} needs a declared login`);
        local.username = opts.as.username;
        local.password = opts.as.password;
      }
      if (kind === 'login') return login(role, r, local);
      if (kind === 'seed') return seed(role, r, local, !!opts.forceRefresh);
      const headers = tpl(r.api_key!.headers, local, `role ${role}: api_key.headers`);
      return { role, kind: 'api_key', headers, cookies: [], username: typeof local.username === 'string' ? local.username : undefined, summary: `API key headers ${Object.keys(headers).join(', ')}` };
    },
  };
}

/** A RolesPort for a task that declares no roles: only `anonymous` works; every other role fails clearly. */
export function noRoles(why: string): RolesPort {
  return {
    declared: () => [],
    usernameOf: () => undefined,
    async credentials(role) {
      if (role === 'anonymous') return ANONYMOUS;
      throw new RoleError(`role "${role}" has no credentials declared: ${why}`);
    },
  };
}
