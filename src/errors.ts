/**
 * Typed errors. The class name is the Temporal failure type (an activity's error reaches the
 * workflow as an ApplicationFailure whose `.type` is that name), so retry policy is declared by
 * class, never by matching text: `ERROR_TYPES` below lists every error class of src/ with whether a
 * retry can help, and `NON_RETRYABLE` (the workflows' `nonRetryableErrorTypes`) is derived from it.
 *
 * Why a table and not a run-time registry filled by the classes: workflow code imports this file,
 * and it may not import the modules that define the classes (Docker, HTTP, ...). The table is kept
 * honest by test/unit/errors.test.ts: every exported error class of src/ extends SaasbenchError,
 * appears here, and its static `nonRetryable` equals its entry.
 */
export abstract class SaasbenchError extends Error {
  /** true when the same call fails the same way again: bad input, misconfiguration */
  static readonly nonRetryable: boolean = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
  get nonRetryable(): boolean {
    return (this.constructor as typeof SaasbenchError).nonRetryable;
  }
}

/** class name → nonRetryable, for every error class of src/ (checked against the classes by a unit test) */
export const ERROR_TYPES = {
  // src/errors.ts
  InvalidInputError: true,
  TaskChangedError: true,
  InfraError: false,
  AgentConfigError: true,
  // src/sandbox
  ComposeError: true,
  SandboxInfraError: false,
  ImageMissingError: true,
  SandboxInputError: true,
  ImagePreflightError: true,
  ImageMapError: true,
  FirewallError: false,
  InterpolationSyntaxError: true,
  ValueError: true,
  // src/agents
  AgentLostError: true,
  // src/http, src/primitives: caught by the chain runner and turned into a node's result
  HttpTransportError: false,
  UnresolvedPlaceholderError: true,
  RequestSetupError: true,
  RoleError: false,
  LoginRefused: false,
  SetupFailed: false,
  // src/benchmark, src/temporal: command-line paths
  PullError: true,
  TransientError: false,
  DevServerConfigError: true,
  DevServerStartError: false,
  ToolNotFoundError: true,
  // src/gateway: a request or response the translation cannot read
  GatewayInputError: true,
  // src/snapshots: a snapshot that is not in the store; a rollout whose containers vanished
  SnapshotMissingError: true,
  HostLostError: true,
  // src/governor: rate limits apply but the worker configured no Temporal target for the governor
  GovernorConfigError: true,
} as const satisfies Record<string, boolean>;

export type ErrorType = keyof typeof ERROR_TYPES;

/** The workflows' `nonRetryableErrorTypes`: every class whose retry cannot help. */
export const NON_RETRYABLE: string[] = Object.entries(ERROR_TYPES)
  .filter(([, no]) => no)
  .map(([name]) => name);

export interface InputIssue {
  file: string;
  /** JSON path of the offending value, e.g. `nodes[3].primitive_chain[0].inputs.path` */
  path: string;
  message: string;
  nodeId?: string;
}

export function formatIssue(i: InputIssue): string {
  const where = i.path ? `${i.file}: ${i.path}` : i.file;
  return `${where}${i.nodeId ? ` (node ${i.nodeId})` : ''}: ${i.message}`;
}

/** Bad user input (task, DAG, sweep, flag). Never retried: the same input fails the same way. */
export class InvalidInputError extends SaasbenchError {
  static override readonly nonRetryable = true;
  constructor(readonly issues: InputIssue[]) {
    super(issues.map(formatIssue).join('\n'));
  }
  static one(file: string, path: string, message: string, nodeId?: string): InvalidInputError {
    return new InvalidInputError([{ file, path, message, nodeId }]);
  }
}

/** The task folder changed between provisioning and evaluation: results would mix two versions. */
export class TaskChangedError extends SaasbenchError {
  static override readonly nonRetryable = true;
}

/** Docker, filesystem or network trouble on the worker host: worth retrying. */
export class InfraError extends SaasbenchError {
  static override readonly nonRetryable = false;
}

/** An agent misconfiguration (unknown agent, missing binary, missing key): retrying cannot help. */
export class AgentConfigError extends SaasbenchError {
  static override readonly nonRetryable = true;
}

/**
 * Temporal wraps a failure once per boundary it crosses (activity → workflow → child → client).
 * These wrappers say WHERE it failed; the error inside says WHAT failed.
 */
const WRAPPERS = new Set(['ActivityFailure', 'ChildWorkflowFailure', 'WorkflowFailedError', 'NexusOperationFailure', 'WorkflowUpdateFailedError']);

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  type?: unknown;
  cause?: unknown;
}

/** The innermost error under Temporal's wrappers: the one our code (or the SDK) threw. */
export function rootCause(err: unknown): unknown {
  let e = err;
  for (let i = 0; i < 20; i++) {
    const x = e as ErrorLike | null;
    if (!x || typeof x !== 'object' || !WRAPPERS.has(String(x.name)) || !x.cause) return e;
    e = x.cause;
  }
  return e;
}

/**
 * The class name of what failed, across Temporal's boundaries: an ApplicationFailure carries the
 * thrown class in `.type`; anything else (CancelledFailure, TerminatedFailure, TimeoutFailure,
 * ServiceError, an error thrown in this process) in `.name`.
 */
export function failureType(err: unknown): string {
  const r = rootCause(err) as ErrorLike | null;
  if (!r || typeof r !== 'object') return 'Error';
  if (r.name === 'ApplicationFailure') return typeof r.type === 'string' && r.type ? r.type : 'Error';
  return typeof r.name === 'string' && r.name ? r.name : 'Error';
}

/** The message of the root cause: what went wrong, without "Activity task failed" wrappers. */
export function rootMessage(err: unknown): string {
  const r = rootCause(err) as ErrorLike | null;
  const m = r && typeof r === 'object' ? r.message : r;
  return String(m ?? err);
}

/** `<type>: <root message>` — how the CLI and the sweep report a failure (one line unless the message lists issues) */
export function describeFailure(err: unknown): string {
  return `${failureType(err)}: ${rootMessage(err).trim()}`;
}

/**
 * Trouble of the worker's host (Docker daemon, filesystem), not of the system under test: an
 * evaluation that hits it is retried by the activity policy instead of being the node's result.
 */
export const INFRA_TYPES: readonly ErrorType[] = ['InfraError', 'SandboxInfraError'];

export function isInfraFailure(err: unknown): boolean {
  return isFailureOf(err, ...INFRA_TYPES);
}

/**
 * Failures that mean the rollout never ran: the agent or the input was misconfigured before any
 * work happened. The sweep records these as "not run: <reason>" and leaves them out of averages.
 */
export const NOT_RUN_TYPES: readonly ErrorType[] = ['AgentConfigError', 'InvalidInputError', 'ComposeError', 'ImageMissingError', 'ImagePreflightError', 'ImageMapError', 'SandboxInputError', 'GovernorConfigError'];

export function notRunReason(err: unknown): string | undefined {
  return isFailureOf(err, ...NOT_RUN_TYPES) ? describeFailure(err).slice(0, 500) : undefined;
}

/** true for an error (local, or an ApplicationFailure across Temporal) of one of the given classes */
export function isFailureOf(err: unknown, ...types: ErrorType[]): boolean {
  return (types as string[]).includes(failureType(err));
}
