import { z } from 'zod';
import { JsonSchema } from '../../json';

/**
 * How a task declares its roles (task.yaml `roles:`). Each role says how the evaluator obtains its
 * credentials — an HTTP login, a static API-key header set, or an explicit seed command run in a
 * container — and how to send them. Nothing is created behind the application's back: a seed
 * command is a visible, declared step (docs/primitives.md#roles, docs/compatibility.md#auth).
 *
 * Strings may use `{{name}}` placeholders: the task variables, plus `{{username}}` / `{{password}}`
 * (this role's, after templating) and, in `send`, `{{token}}` (what the login/seed produced).
 */

const Path = z.string().startsWith('/', 'a path must start with /');
const Status = z.number().int().min(100).max(599);
const HeaderMap = z.record(z.string().min(1), z.string());

/** Where a login response carries the credential. */
export const LoginTokenSource = z.discriminatedUnion('from', [
  z.object({ from: z.literal('body'), path: z.string().min(1).describe('JSONPath into the response body, e.g. $.token') }).strict(),
  z.object({ from: z.literal('header'), name: z.string().min(1) }).strict(),
  z.object({ from: z.literal('cookie'), name: z.string().min(1) }).strict(),
]);

/** Where a seed command's output carries the credential. */
export const SeedTokenSource = z.discriminatedUnion('from', [
  z.object({ from: z.literal('stdout') }).strict().describe('the last non-empty stdout line, trimmed'),
  z.object({ from: z.literal('stdout_json'), path: z.string().min(1) }).strict(),
]);

export const CsrfSchema = z
  .object({
    method: z.enum(['GET', 'POST']).default('GET'),
    path: Path,
    token: LoginTokenSource,
    /** request header the token is sent in (e.g. X-CSRF-Token); omit to send it only in the body */
    header: z.string().min(1).optional(),
    /** body field the token is added to (e.g. authenticity_token) */
    body_field: z.string().min(1).optional(),
  })
  .strict()
  .refine((c) => c.header || c.body_field, { message: 'csrf needs header or body_field' });

export const LoginSchema = z
  .object({
    method: z.enum(['POST', 'PUT', 'GET']).default('POST'),
    path: Path,
    /** the payload template, e.g. {login: "{{username}}", password: "{{password}}"} */
    body: z.record(z.string(), JsonSchema).default({}),
    format: z.enum(['json', 'form']).default('json'),
    headers: HeaderMap.default({}),
    csrf: CsrfSchema.optional(),
    /** statuses that mean "logged in" (default: any 2xx or 3xx) */
    expect_status: z.array(Status).min(1).optional(),
    /** where the token is (omit for a cookie-only session: the response cookies are kept either way) */
    token: LoginTokenSource.optional(),
    timeout_seconds: z.number().positive().max(120).default(15),
  })
  .strict();

export const ApiKeySchema = z.object({ headers: HeaderMap.refine((h) => Object.keys(h).length > 0, 'at least one header') }).strict();

export const SeedSchema = z
  .object({
    command: z.string().min(1),
    /** compose service to run it in (default: the app service) */
    service: z.string().min(1).optional(),
    timeout_seconds: z.number().positive().max(1800).default(120),
    token: SeedTokenSource.default({ from: 'stdout' }),
    /** run once per evaluation (default) or again for every chain that logs in as this role */
    once: z.boolean().default(true),
  })
  .strict();

export const RoleSchema = z
  .object({
    description: z.string().optional(),
    username: z.string().optional(),
    password: z.string().optional(),
    login: LoginSchema.optional(),
    api_key: ApiKeySchema.optional(),
    seed: SeedSchema.optional(),
    /** headers carrying a login/seed token; default {Authorization: "Bearer {{token}}"} */
    send: z.object({ headers: HeaderMap }).strict().optional(),
    /** a role without credentials (requests carry only the chain's own cookies) */
    anonymous: z.literal(true).optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    const kinds = [r.login, r.api_key, r.seed].filter(Boolean).length;
    if (r.anonymous && kinds > 0) ctx.addIssue({ code: 'custom', path: ['anonymous'], message: 'an anonymous role declares no credentials' });
    if (!r.anonymous && kinds === 0) ctx.addIssue({ code: 'custom', path: [], message: 'a role needs login, api_key, seed or anonymous: true' });
    if (r.send && !r.login && !r.seed) ctx.addIssue({ code: 'custom', path: ['send'], message: 'send applies to a login or seed token' });
    if (r.seed && !r.send) ctx.addIssue({ code: 'custom', path: ['send'], message: 'a seed role must say how its token is sent (send.headers)' });
  });

export const RolesSchema = z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'role names use letters, digits, _ . -'), RoleSchema);

export type RoleDecl = z.infer<typeof RoleSchema>;
export type RolesDecl = z.infer<typeof RolesSchema>;
