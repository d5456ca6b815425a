import { ServiceError } from '@temporalio/client';
import { describeFailure, failureType, formatIssue, InvalidInputError } from '../errors';

/** gRPC codes that mean "the server is not there right now", not "your request is wrong" */
const UNREACHABLE_CODES = new Set([4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);

/** true when a client call failed because the Temporal server could not be reached */
export function isServerUnreachable(err: unknown): boolean {
  if (!(err instanceof ServiceError) && (err as Error | null)?.name !== 'ServiceError') return false;
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  return code === undefined || (typeof code === 'number' && UNREACHABLE_CODES.has(code));
}

export interface FollowOptions {
  out?: NodeJS.WritableStream;
  /** first wait after the server went away; doubles up to maxDelayMs */
  initialDelayMs?: number;
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A workflow's result, riding through a Temporal server restart: the rollout or sweep goes on
 * while the server is away (its history is durable), so the CLI following it says so once and keeps
 * asking with backoff instead of exiting with "Failed to get Workflow execution history".
 */
export async function resultRidingRestarts<T>(handle: { result(): Promise<unknown> }, o: FollowOptions = {}): Promise<T> {
  const out = o.out ?? process.stderr;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const first = o.initialDelayMs ?? 1000;
  let delay = first;
  let away = false;
  for (;;) {
    try {
      const r = (await handle.result()) as T;
      if (away) out.write('saasbench: Temporal server is back\n');
      return r;
    } catch (err) {
      if (!isServerUnreachable(err)) throw err;
      if (!away) out.write(`saasbench: Temporal server unreachable (${describeFailure(err)}); the run goes on, retrying until the server is back (Ctrl-C to stop following)\n`);
      away = true;
      await sleep(delay);
      delay = Math.min(delay * 2, o.maxDelayMs ?? 30_000);
    }
  }
}

/**
 * What the CLI prints for a failed command: `saasbench: <type>: <root message>`, the class that
 * failed and why — never the wrapper ("WorkflowFailedError: Workflow execution failed").
 */
export function formatCliError(err: unknown): string {
  if (err instanceof InvalidInputError) return err.issues.map((i) => `${formatIssue(i)}\n`).join('');
  return `saasbench: ${describeFailure(err)}\n`;
}

/** exit status: 2 for input the user must fix, 1 for anything else */
export function exitCodeOf(err: unknown): number {
  return failureType(err) === 'InvalidInputError' ? 2 : 1;
}
