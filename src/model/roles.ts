import { z } from 'zod';
import { JsonSchema } from './json';

/**
 * How a task declares its roles (task.yaml `roles:`). Each role says how the evaluator obtains its
 * credentials — an HTTP login, a static API-key header set, or an explicit seed command run in a
 * container — and how to send them. Nothing is created behind the application's back: a seed
 * command is a visible, declared step (docs/primitives.md#roles, docs/compatibility.md#auth).
 *
 * Strings may use `{{name}}` placeholders: the task variables, plus `{{username}}` / `{{password}}`
 * (this role's, after templating) and, in `send`, `{{token}}` (what the login/seed produced) and the
 * login's `capture` names. A role may declare several kinds (e.g. a session login and an API key):
 * a P13 `method` selects one, `default` says which a step without `method` uses.
 */

const Path = z.string().startsWith('/', 'a path must start with /');
const Status = z.number().int().min(100).max(599);
const HeaderMap = z.record(z.string().min(1), z.string());

const compiles = (re: string) => {
  try {
    new RegExp(re);
    return true;
  } catch {
    return false;
  }
};

/** Where a login (or CSRF) response carries a value. */
export const LoginTokenSource = z.discriminatedUnion('from', [
  z.object({ from: z.literal('body'), path: z.string().min(1).describe('JSONPath into the response body, e.g. $.token') }).strict(),
  z.object({ from: z.literal('header'), name: z.string().min(1) }).strict(),
  z.object({ from: z.literal('cookie'), name: z.string().min(1) }).strict(),
  // server-rendered forms carry their CSRF token in the HTML (Rails authenticity_token, Phoenix _csrf_token, …)
  z
    .object({ from: z.literal('regex'), pattern: z.string().min(1).refine(compiles, 'not a valid regular expression').describe('over the body text; the first group (or the whole match)') })
    .strict(),
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

const CaptureMap = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'capture names are identifiers'), LoginTokenSource);

/** A login's fields without defaults: a P13 step may override some of them (LoginOverrideSchema). */
const loginFields = {
  method: z.enum(['POST', 'PUT', 'GET']),
  path: Path,
  /** the payload template, e.g. {login: "{{username}}", password: "{{password}}"} */
  body: z.record(z.string(), JsonSchema),
  format: z.enum(['json', 'form']),
  headers: HeaderMap,
  csrf: CsrfSchema,
  /** statuses that mean "logged in" (default: any 2xx or 3xx) */
  expect_status: z.array(Status).min(1),
  /** where the token is (omit for a cookie-only session: the response cookies are kept either way) */
  token: LoginTokenSource,
  /** further values of the login response, usable in `send` by name (e.g. devise's `client`, `uid`) */
  capture: CaptureMap,
  /** send {{username}}:{{password}} as HTTP Basic on the login request (token endpoints such as GET /api/user/token/) */
  basic: z.boolean(),
  timeout_seconds: z.number().positive().max(120),
};

export const LoginSchema = z
  .object({
    ...loginFields,
    method: loginFields.method.default('POST'),
    body: loginFields.body.default({}),
    format: loginFields.format.default('json'),
    headers: loginFields.headers.default({}),
    csrf: loginFields.csrf.optional(),
    expect_status: loginFields.expect_status.optional(),
    token: loginFields.token.optional(),
    capture: loginFields.capture.default({}),
    basic: loginFields.basic.default(false),
    timeout_seconds: loginFields.timeout_seconds.default(15),
  })
  .strict();

/**
 * Fields of a login that one P13 step overrides (its inline login): merged over the role's declared
 * login; without one, `path` is required and the defaults of LoginSchema apply.
 */
export const LoginOverrideSchema = z.object(loginFields).partial().strict();
export type LoginOverride = z.infer<typeof LoginOverrideSchema>;
export type LoginDecl = z.infer<typeof LoginSchema>;

/** One request of a role's setup (no session: e.g. a public first-run endpoint). */
export const SetupRequestSchema = z
  .object({
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
    path: Path,
    body: z.record(z.string(), JsonSchema).optional(),
    format: z.enum(['json', 'form']).default('json'),
    headers: HeaderMap.default({}),
    /** statuses that count as done (default: any 2xx or 3xx) */
    expect_status: z.array(Status).min(1).optional(),
    timeout_seconds: z.number().positive().max(120).default(15),
  })
  .strict();

/**
 * A visible, declared step run once per evaluation (per running system) before the role's first
 * credentials: a provisioning CLI the prompt asks the app to offer, a first-run request, or — only
 * where the published evaluator did exactly that — a statement against the app's database, marked
 * as such in `description`. Its output is not used; a failure fails the role's P13.
 */
export const SetupStepSchema = z.union([
  z
    .object({
      description: z.string().optional(),
      command: z.string().min(1),
      /** compose service to run it in (default: the app service) */
      service: z.string().min(1).optional(),
      timeout_seconds: z.number().positive().max(1800).default(120),
    })
    .strict(),
  z.object({ description: z.string().optional(), request: SetupRequestSchema }).strict(),
]);

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

/** HTTP Basic with the role's username and password (after a step's `credentials` override). */
export const BasicSchema = z.object({ headers: HeaderMap.default({}).describe('sent along, e.g. OCS-APIRequest: "true"') }).strict();

export const CREDENTIAL_KINDS = ['login', 'api_key', 'seed', 'basic'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export const RoleSchema = z
  .object({
    description: z.string().optional(),
    username: z.string().optional(),
    password: z.string().optional(),
    login: LoginSchema.optional(),
    api_key: ApiKeySchema.optional(),
    seed: SeedSchema.optional(),
    basic: BasicSchema.optional(),
    /** which kind a P13 without `method` uses (default: the first declared of login, api_key, seed, basic) */
    default: z.enum(CREDENTIAL_KINDS).optional(),
    /** declared steps run once before this role's first credentials (see SetupStepSchema) */
    setup: z.array(SetupStepSchema).min(1).optional(),
    /** headers carrying a login/seed token; default {Authorization: "Bearer {{token}}"} */
    send: z.object({ headers: HeaderMap }).strict().optional(),
    /** a role without credentials (requests carry only the chain's own cookies) */
    anonymous: z.literal(true).optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    const kinds = CREDENTIAL_KINDS.filter((k) => r[k]).length;
    if (r.anonymous && (kinds > 0 || r.setup)) ctx.addIssue({ code: 'custom', path: ['anonymous'], message: 'an anonymous role declares no credentials' });
    if (!r.anonymous && kinds === 0) ctx.addIssue({ code: 'custom', path: [], message: 'a role needs login, api_key, seed, basic or anonymous: true' });
    if (r.send && !r.login && !r.seed) ctx.addIssue({ code: 'custom', path: ['send'], message: 'send applies to a login or seed token' });
    if (r.seed && !r.send) ctx.addIssue({ code: 'custom', path: ['send'], message: 'a seed role must say how its token is sent (send.headers)' });
    if (r.default && !r[r.default]) ctx.addIssue({ code: 'custom', path: ['default'], message: `default "${r.default}" is not declared by this role` });
  });

export const RolesSchema = z.record(z.string().regex(/^[A-Za-z0-9_.:-]+$/, 'role names use letters, digits, _ . : -'), RoleSchema);

export type RoleDecl = z.infer<typeof RoleSchema>;
export type RolesDecl = z.infer<typeof RolesSchema>;
