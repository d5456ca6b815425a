import { z } from 'zod';
import { P13_METHODS, RoleError } from './auth/provider';
import { ensureRoleSession, markRoleFailed, setCurrentRole } from './auth/session';
import { definePrimitive } from './types';

export const P13Schema = z
  .object({
    role: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'role names use letters, digits, _ . -'),
    /** which of the role's declared credentials: api_key-like methods or login-like methods */
    method: z.string().transform((m) => m.toLowerCase()).pipe(z.enum(P13_METHODS as unknown as [string, ...string[]])).optional(),
    /** obtain the credentials again even if this chain (or the seed cache) has them */
    force_refresh: z.boolean().optional(),
  })
  .strict();

/**
 * P13: make `role` the chain's current role. Its credentials come from the task's `roles:`
 * declaration (HTTP login, API-key headers or a seed command) — never from a backdoor. Later HTTP
 * steps of this chain (P04, P05, P14, P16, P23, P27) send them unless their own headers say
 * otherwise. `anonymous` needs no declaration: it selects an empty session. Fails, naming the
 * role, when the role is undeclared or its login/seed does not produce credentials.
 */
export const P13 = definePrimitive({
  id: 'P13',
  name: 'auth_login',
  schema: P13Schema,
  produces: () => ({ exported: [], local: ['auth_role', 'auth_username'] }),
  async run(input, ctx) {
    try {
      const { creds, reused } = await ensureRoleSession(ctx, input.role, { method: input.method, forceRefresh: input.force_refresh });
      setCurrentRole(ctx.state, input.role);
      ctx.state.vars.auth_role = input.role;
      const username = creds?.username ?? ctx.env.roles?.usernameOf(input.role, ctx.state.vars);
      if (username !== undefined) ctx.state.vars.auth_username = username;
      const how = reused ? 'session already open in this chain' : creds!.summary;
      return { passed: true, message: `role ${input.role}: ${how}`, data: { role: input.role, kind: creds?.kind, reused, username } };
    } catch (e) {
      if (e instanceof RoleError) {
        markRoleFailed(ctx.state, input.role);
        setCurrentRole(ctx.state, input.role);
        ctx.state.vars.auth_role = input.role;
        return { passed: false, message: e.message, data: { role: input.role } };
      }
      throw e;
    }
  },
});
