import type { z } from 'zod';
import type { Logger } from 'pino';
import type { Json } from '../model/json';
import type { Browser } from 'playwright-core';
import type { LoginOverride } from '../model/roles';
import type { ExecResult } from '../model/sandbox';

/** What a primitive reports. `passed` drives the node score; `data` is evidence for the report. */
export interface PrimitiveOutcome {
  passed: boolean;
  message: string;
  data?: Record<string, unknown>;
  /** Only P17: the judge's verdict, or why no verdict could be had (→ SKIPPED_LLM). */
  judge?: { skipped: true; reason: string } | { skipped: false; score: number; reasoning: string };
}

export interface LastResponse {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
  elapsedMs: number;
}

/** one shape with the sandbox's (src/model/sandbox.ts) */
export type { ExecResult };

export interface SqlResult {
  rows: Record<string, unknown>[];
  columns: string[];
  /** rows an INSERT/UPDATE/DELETE changed (statements without a result set) */
  affectedRows?: number;
}

/** Database engines a task can declare (environment.database / databases). */
export type DbKind = 'postgres' | 'mysql' | 'clickhouse' | 'mongodb';

/** Which declared database a step talks to, and optional other credentials for it. */
export interface DbOptions {
  /** a name of environment.databases; undefined = the primary environment.database */
  database?: string;
  /** connect as another user / to another database name on the same server (port: the server's own port, checked) */
  connection?: { user?: string; password?: string; name?: string; port?: number };
}

/** A MongoDB read (src/primitives/mongo-op.ts); documents come back as plain JSON. */
export interface MongoResult {
  /** documents (find, aggregate), one or none (findOne), [{count}] (countDocuments), [{value}] (distinct) */
  rows: Record<string, unknown>[];
  /** the operation's own result: a document or null, a count, a list */
  value: unknown;
}

/**
 * Everything a primitive may touch, as narrow ports so each primitive can be tested against a
 * real server, database or container without a Temporal worker around it.
 */
export interface PrimitiveEnv {
  /** the app's base URL as the sandbox backend publishes it (endpoint(); http://127.0.0.1:<port> on a local Docker engine) */
  baseUrl: string;
  /** absolute workspace path inside the app container, e.g. /app */
  workspace: string;
  appService: string;
  /** names of the stack's compose services (P12 maps a published `container` name onto one); optional */
  services?: readonly string[];
  exec(service: string, command: string, opts?: { timeoutMs?: number; workdir?: string }): Promise<ExecResult>;
  /** the last `tail` lines a service's container wrote to stdout/stderr (docker logs); optional */
  containerOutput?(service: string, tail: number): Promise<string>;
  /** contents of a file in the app container; null when it does not exist */
  readFile(path: string, maxBytes?: number): Promise<Buffer | null>;
  /** kind of a path in the app container */
  statPath(path: string): Promise<'file' | 'dir' | null>;
  /** every file and directory under `dir` (recursive), paths relative to `dir`, dirs suffixed with / */
  listTree(dir: string): Promise<string[] | null>;
  sql?(text: string, opts?: DbOptions): Promise<SqlResult>;
  /** the engine of a declared database (undefined argument = the primary); undefined = not declared */
  dbKind?(database?: string): DbKind | undefined;
  /** run a MongoDB request on a declared mongodb database */
  mongo?(req: import('./mongo-op').MongoRequest, opts?: DbOptions): Promise<MongoResult>;
  judge?: JudgePort;
  /** directory for artifacts of this node (screenshots, raw bodies) */
  artifactsDir: string;
  log: Logger;
  /** the task folder (P17 `rubric_file` is relative to it) */
  taskDir?: string;
  /** how each declared role obtains credentials (P13); unset = the task declares no roles */
  roles?: RolesPort;
  /** a running Chromium for SCREENSHOT / RENDER_DOM; unset = launch the process-wide shared one */
  browser?: () => Promise<Browser>;
  /**
   * Where P27 listens for webhook deliveries: `bindHost` on this machine, `urlHost` as the app
   * container reaches it (e.g. the Docker bridge gateway). Default 127.0.0.1 for both.
   */
  webhookReceiver?: () => Promise<{ bindHost: string; urlHost: string; open?: (port: number) => Promise<() => Promise<void>> }>;
  /** compatibility behaviours switched on for published SaaSBench tasks (docs/compatibility.md) */
  compat?: {
    /** after a 2xx JSON response, copy id-like fields into chain variables (exported) */
    publishedIdCapture?: boolean;
  };
  /**
   * The base URL (from the sandbox backend's endpoint()) of the stack service that the task's compose
   * file publishes on host port `port` — how published DAGs' absolute URLs (`http://localhost:9201/…`)
   * reach another service of the stack. Unset, or undefined for a port no service publishes.
   */
  hostPortUrl?(port: number): string | undefined;
  /** the task's date/time variables (src/primitives/run-clock.ts family, published tasks' pack `clock`) */
  runClock?: string;
  /** the task's declared setups (the benchmark pack's `setup`): values computed once per running system */
  taskSetup?: TaskSetupPort;
}

/** Declared setups of a task (src/primitives/task-setup.ts). */
export interface TaskSetupPort {
  /** does a setup export this variable? */
  provides(name: string): boolean;
  /** run (once per running system) the setups that export any of `names`; their values, and why any failed */
  values(names: string[], env: PrimitiveEnv, vars: Record<string, Json>): Promise<{ values: Record<string, Json>; failures: string[] }>;
}

/** Credentials of one role, as P13 obtained them. Values are secrets: never logged or recorded. */
export interface RoleCredentials {
  role: string;
  /** 'login' (HTTP login), 'api_key' (static header pair), 'seed' (command in a container), 'basic' (HTTP Basic), 'anonymous' */
  kind: 'login' | 'api_key' | 'seed' | 'basic' | 'anonymous';
  headers: Record<string, string>;
  cookies: StoredCookie[];
  /** what a login/seed produced (a P13 `token_as` copies it into chain variables) */
  token?: string;
  /** the login's own response (a P13 records it as the chain's last response) */
  response?: LastResponse;
  username?: string;
  /** a line for the step message, without secrets (e.g. "POST /login → 200, cookie sid") */
  summary: string;
  /** the CSRF token the login obtained (login.csrf), for requests that attach it (P04 attach_csrf) */
  csrf?: { header?: string; token: string };
}

export interface StoredCookie {
  name: string;
  value: string;
  path: string;
  /** epoch ms; undefined = session cookie */
  expires?: number;
}

export interface RolesPort {
  /** role names the task declares */
  declared(): string[];
  /** declared username of a role, if any (SCREENSHOT `login_as` maps a username onto a role) */
  usernameOf(role: string, vars: Record<string, Json>): string | undefined;
  /** obtain credentials; throws RoleError with a clear message when that is impossible */
  credentials(role: string, opts: CredentialsRequest): Promise<RoleCredentials>;
}

/** What a P13 step asks of a role's credentials. */
export interface CredentialsRequest {
  vars: Record<string, Json>;
  method?: string;
  forceRefresh?: boolean;
  /** this step's username/password instead of the role's (templated) */
  credentials?: { username?: string; password?: string };
  /** this step's login fields over the role's declared login (an inline login when the role has none) */
  login?: LoginOverride;
  /** this step's token headers over the role's `send` (templated with {{token}} and the login's captures) */
  send?: Record<string, string>;
}

/** The chain's session state: the current role and one cookie jar + header set per role. */
export interface ChainAuth {
  /** the role P13 selected last; undefined = no role (the chain's anonymous jar) */
  role?: string;
  sessions: Record<string, { headers: Record<string, string>; cookies: StoredCookie[]; kind: RoleCredentials['kind']; token?: string; failed?: boolean; csrf?: RoleCredentials['csrf'] }>;
}

export interface JudgeRequest {
  rubric: string;
  maxScore: number;
  evidence: { text: string; images?: { mediaType: string; base64: string }[] };
  /** lower end of the score range (default 0); the judge scores within [minScore, maxScore] */
  minScore?: number;
  /** how many times an unparseable reply is asked again (default 2) */
  parseRetries?: number;
  /** accept only a JSON object reply (no prose fallbacks) */
  strictJson?: boolean;
}
export type JudgeVerdict =
  | { skipped: true; reason: string }
  | { skipped: false; score: number; reasoning: string; cached?: boolean; parseFailed?: boolean; raw?: string };
export interface JudgePort {
  judge(req: JudgeRequest): Promise<JudgeVerdict>;
}

/** The chain's mutable state: variables it can read, what it exports to dependents, last response. */
export interface ChainState {
  vars: Record<string, Json>;
  exports: Record<string, Json>;
  last?: LastResponse;
  /**
   * Every response recorded in this chain, oldest first: each step's last response (HTTP, SQL), as
   * run-chain.ts sees `last` change. P17 `chain_responses` / `sql_result` evidence reads it.
   */
  responses?: LastResponse[];
  /** role sessions of this chain (P13 sets the role; HTTP primitives send its credentials) */
  auth?: ChainAuth;
}

export interface PrimitiveContext {
  env: PrimitiveEnv;
  state: ChainState;
  nodeId: string;
  /** false: the node opted out of the published id capture (published `no_entity_capture`) */
  idCapture?: boolean;
  /** ids of the node's prerequisites (P17 `prereq_responses` reads what their chains recorded) */
  prereqs?: readonly string[];
  /** set a variable for the rest of the chain and export it to dependent nodes */
  setVar(name: string, value: Json): void;
}

export interface Primitive<S extends z.ZodType = z.ZodType> {
  id: string;
  name: string;
  schema: S;
  run(input: z.infer<S>, ctx: PrimitiveContext): Promise<PrimitiveOutcome>;
  /**
   * Variables a step with these (raw, untemplated) inputs may set: `exported` ones reach dependent
   * nodes, `local` ones only later steps of the same chain. Used by the load-time placeholder check.
   */
  produces?(inputs: Record<string, unknown>): { exported: string[]; local: string[] };
  /**
   * Placeholder names this primitive fills itself (e.g. P13's `{{username}}`/`{{password}}` in a
   * login body are the role's): the chain leaves them as written and the load-time check skips them.
   */
  ownPlaceholders?(inputs: Record<string, unknown>): string[];
}

export function definePrimitive<S extends z.ZodType>(p: Primitive<S>): Primitive<S> {
  return p;
}
