import { Context } from '@temporalio/activity';

/**
 * Heartbeat on a timer while `fn` runs, so a worker that dies mid-activity is noticed within the
 * heartbeat timeout instead of the (long) start-to-close timeout.
 */
export async function withHeartbeat<T>(fn: () => Promise<T>, everyMs = 5000): Promise<T> {
  let ctx: Context | undefined;
  try {
    ctx = Context.current();
  } catch {
    return fn(); // not inside an activity (tests, local evaluation)
  }
  const timer = setInterval(() => ctx!.heartbeat(), everyMs);
  try {
    ctx.heartbeat();
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/** True inside an activity whose cancellation has been delivered (via a heartbeat response). */
export function activityCancelled(): boolean {
  try {
    return Context.current().cancellationSignal.aborted;
  } catch {
    return false;
  }
}
