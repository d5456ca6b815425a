import { z } from 'zod';
import { LoginRefused, P13_METHODS, RoleError } from './auth/provider';
import { performSetupRequest } from './auth/login';
import { LoginOverrideSchema, SetupRequestSchema } from '../model/roles';
import { ensureRoleSession, markRoleFailed, setCurrentRole } from './auth/session';
import { capturePublishedIds } from './published-id-capture';
import { definePrimitive } from './types';

const VarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name');

export const P13Schema = z
  .object({
    role: z.string().regex(/^[A-Za-z0-9_.:-]+$/, 'role names use letters, digits, _ . : -'),
    /** which of the role's declared credentials: api_key-like, login-like or basic methods */
    method: z.string().transform((m) => m.toLowerCase()).pipe(z.enum(P13_METHODS as unknown as [string, ...string[]])).optional(),
    /** obtain the credentials again even if this chain (or the seed cache) has them */
    force_refresh: z.boolean().optional(),
    /** log in with these instead of the role's declared username/password (templated) */
    credentials: z.object({ username: z.string().optional(), password: z.string().optional() }).strict().optional(),
    /**
     * login fields of this step over the role's declared login (path, body, format, token, …);
     * with a `path`, an inline login that needs no role declaration
     */
    login: LoginOverrideSchema.optional(),
    /** `refused`: the step passes only when the application refuses this login (a negative auth check) */
    expect: z.enum(['success', 'refused']).default('success'),
    /** chain variables (exported) that receive the token the login/seed produced */
    token_as: z.array(VarName).min(1).optional(),
    /** how this step sends the token: headers templated with {{token}} and the login's captures (over the role's `send`) */
    send_headers: z.record(z.string().min(1), z.string()).optional(),
    /**
     * a request sent before the login, without a session (e.g. a first-run admin setup); any answer
     * counts unless `expect_status` says which
     */
    pre_request: SetupRequestSchema.partial({ expect_status: true }).optional(),
  })
  .strict();

/**
 * P13: make `role` the chain's current role. Its credentials come from the task's `roles:`
 * declaration (HTTP login, API-key headers, HTTP Basic or a seed command), or from this step's
 * inline login — never from a backdoor. Later HTTP steps of this chain (P04, P05, P14, P16, P23,
 * P27) send them unless their own headers say otherwise. `anonymous` needs no declaration. A step
 * that performed an HTTP login leaves the login response as the chain's last response. Fails,
 * naming the role, when the role is undeclared or its login/seed does not produce credentials —
 * or, with `expect: refused`, when the login succeeds.
 */
export const P13 = definePrimitive({
  id: 'P13',
  name: 'auth_login',
  schema: P13Schema,
  produces: (inputs) => ({ exported: Array.isArray(inputs.token_as) ? inputs.token_as.filter((x): x is string => typeof x === 'string') : [], local: ['auth_role', 'auth_username'] }),
  // a step's inline login and send_headers are templated by the roles port with the role's
  // username/password, the token and the login's captures (docs/primitives.md#roles)
  ownPlaceholders: (inputs) => {
    const login = inputs.login && typeof inputs.login === 'object' ? (inputs.login as { capture?: unknown }) : {};
    const captures = login.capture && typeof login.capture === 'object' ? Object.keys(login.capture) : [];
    return inputs.login || inputs.send_headers ? ['username', 'password', 'token', ...captures] : [];
  },
  async run(input, ctx) {
    const refused = input.expect === 'refused';
    let pre = '';
    if (input.pre_request) {
      try {
        pre = `${await performSetupRequest(input.role, { ...input.pre_request, anyStatus: !input.pre_request.expect_status }, ctx.env.baseUrl)}; `;
      } catch (e) {
        if (e instanceof RoleError) return { passed: false, message: e.message, data: { role: input.role } };
        throw e;
      }
    }
    try {
      const { creds, reused, token } = await ensureRoleSession(ctx, input.role, {
        method: input.method,
        forceRefresh: input.force_refresh || refused,
        ...(input.credentials ? { credentials: input.credentials } : {}),
        ...(input.login ? { login: input.login } : {}),
        ...(input.send_headers ? { send: input.send_headers } : {}),
      });
      setCurrentRole(ctx.state, input.role);
      ctx.state.vars.auth_role = input.role;
      if (creds?.response) {
        ctx.state.last = creds.response;
        capturePublishedIds(ctx);
      }
      const username = creds?.username ?? ctx.env.roles?.usernameOf(input.role, ctx.state.vars);
      if (username !== undefined) ctx.state.vars.auth_username = username;
      const how = pre + (reused ? 'session already open in this chain' : creds!.summary);
      if (refused) {
        markRoleFailed(ctx.state, input.role);
        return { passed: false, message: `role ${input.role}: the login succeeded (${how}) but this step expects it to be refused`, data: { role: input.role, kind: creds?.kind } };
      }
      if (input.token_as) {
        if (token === undefined) return { passed: false, message: `role ${input.role}: ${how}, but its credentials carry no token for ${input.token_as.join(', ')}`, data: { role: input.role, kind: creds?.kind } };
        for (const name of input.token_as) ctx.setVar(name, token);
      }
      return { passed: true, message: `role ${input.role}: ${how}`, data: { role: input.role, kind: creds?.kind, reused, username } };
    } catch (e) {
      if (e instanceof RoleError) {
        markRoleFailed(ctx.state, input.role);
        setCurrentRole(ctx.state, input.role);
        ctx.state.vars.auth_role = input.role;
        if (e instanceof LoginRefused && e.response) ctx.state.last = e.response;
        if (refused && e instanceof LoginRefused) return { passed: true, message: `role ${input.role}: refused as expected — ${e.message}`, data: { role: input.role } };
        return { passed: false, message: e.message, data: { role: input.role } };
      }
      throw e;
    }
  },
});
