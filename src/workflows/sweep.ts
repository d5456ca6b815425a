import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  ActivityFailure,
  ApplicationFailure as AppFailure,
  ChildWorkflowFailure,
  TerminatedFailure,
  TimeoutFailure,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
} from '@temporalio/common';
import type { RetryPolicy } from '@temporalio/common';
import type * as activities from '../activities';
import { NON_RETRYABLE, describeFailure, notRunReason } from '../errors';
import { zodIssuePaths } from '../zod-issues';
import { summarizeRollout } from '../scoring/benchmark';
import type { RolloutResult } from '../model/rollout';
import { rolloutInputFor, type Entry } from './sweep-entries';
import { SweepBook } from './sweep-book';
import { rolloutWorkflow } from './rollout';
import { SA } from './search-attributes';
import {
  describeSweep,
  sweepWorkflowId,
  SweepInputSchema,
  type FinalState,
  type LookupAnswer,
  type ResolvedTask,
  type StopRequest,
  type SweepCarry,
  type SweepInputRaw,
  type SweepItem,
  type SweepProgress,
  type SweepResult,
  type RolloutSummary,
} from '../model/sweep';

type SweepInput = ReturnType<typeof SweepInputSchema.parse>;

/**
 * sweepWorkflow: every (task, agent, model, repeat) of the input as a child `rolloutWorkflow`
 * with a deterministic id, at most `concurrency` at once.
 *
 * - Re-submission never runs a rollout twice: before starting anything the sweep asks Temporal
 *   (activity `sweepLookupRollouts`) what exists under each rollout id. Completed → its result is
 *   fetched and reused; running → adopted and polled until it closes; cancelled or terminated →
 *   run again; failed or timed out → kept as failed unless `rerunFailed`. Children start with
 *   REJECT_DUPLICATE (ALLOW_DUPLICATE_FAILED_ONLY for a re-run), so the server refuses a second
 *   run of a completed rollout even if the lookup raced.
 * - Children are ABANDONed when this run closes: a continue-as-new (every `continueAsNewEvery`
 *   finished rollouts, or when Temporal suggests it) hands the running ones to the next run,
 *   which polls them; terminating a sweep leaves its rollouts running (a re-submit adopts them).
 * - Stop: signal `stop` → start nothing new, let running rollouts finish, write the report,
 *   complete with `stopped: 'drain'`; `stop {cancelRunning: true}` cancels the running ones first
 *   (each tears down its containers). Cancelling the sweep workflow does the latter and ends
 *   Canceled after writing the partial report.
 */

type Acts = typeof activities;

export const sweepProgressQuery = defineQuery<SweepProgress>('progress');
export const stopSweepSignal = defineSignal<[StopRequest?]>('stop');

const retry: RetryPolicy = { maximumAttempts: 5, initialInterval: '2s', backoffCoefficient: 2, nonRetryableErrorTypes: NON_RETRYABLE };
const acts = proxyActivities<Acts>({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '2 minutes', retry });
/** loading and hashing every task is synchronous work: no heartbeats, a plain timeout */
const planActs = proxyActivities<Acts>({ startToCloseTimeout: '10 minutes', retry });


const LOOKUP_CHUNK = 100;
const POLL_MIN_MS = 1000;
const POLL_MAX_MS = 30_000;

function invalid(message: string): never {
  throw ApplicationFailure.nonRetryable(message, 'InvalidInputError');
}

export async function sweepWorkflow(raw: SweepInputRaw, carry?: SweepCarry): Promise<SweepResult> {
  const input = validate(raw);
  const book = new SweepBook(input, workflowInfo().workflowId, carry);
  upsertSearchAttributes([
    { key: SA.sweep, value: input.name },
    { key: SA.phase, value: 'running' },
  ]);
  upsertMemo({ config: input });
  const showProgress = () => setCurrentDetails(describeSweep(book.progress()));
  setHandler(sweepProgressQuery, () => book.progress());
  setHandler(stopSweepSignal, (req?: StopRequest) => {
    for (const e of book.stop(req)) cancelEntry(e);
    log.info('sweep stop requested', { mode: book.stopping });
  });

  // resolve the tasks, then ask what already exists under these ids (an earlier submission)
  book.plan(carry?.tasks ?? (await resolveTasks(input)));
  showProgress();
  await lookUp(book.pending(), (a) => book.existing(a));

  const poll = new PollClock();
  try {
    for (;;) {
      for (const e of book.toStart(workflowInfo().continueAsNewSuggested)) startEntry(book, e);
      showProgress();
      if (book.finished()) break;
      if (book.handOver(workflowInfo().continueAsNewSuggested)) {
        const next = book.carryOver();
        log.info('sweep continues as new', { run: book.run, finishedThisRun: book.finishedThisRun, inflight: next.inflight.length });
        await continueAsNew<typeof sweepWorkflow>(input, next);
      }
      book.dirty = false;
      const adopted = book.running().filter((e) => e.adopted);
      if (adopted.length === 0) {
        poll.reset();
        await condition(() => book.dirty);
        continue;
      }
      // Adopted rollouts are not our children: poll them on a schedule of their own, which the
      // completions of our own children (frequent wake-ups) must not keep pushing back.
      const wait = poll.waitMs();
      if (wait > 0 && (await condition(() => book.dirty, wait))) continue;
      poll.next();
      await lookUp(adopted, (a) => book.polled(a));
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // The sweep itself was cancelled: our children's scopes are cancelled with it (each rollout
    // tears down); adopted rollouts get a cancel request. Then the partial report, then Canceled.
    await CancellationScope.nonCancellable(async () => {
      book.stopping = 'cancel';
      for (const e of book.running()) {
        if (!e.adopted) continue;
        await getExternalWorkflowHandle(e.item.workflowId).cancel().catch(() => undefined);
        book.settle(e, unscored(e.item, 'cancelled', 'cancel requested with the sweep'));
      }
      await condition(() => book.running().length === 0);
      await finish(book, 'cancelled');
    });
    throw err;
  }
  return finish(book, book.stopping ? 'stopped' : 'done');

  async function lookUp(es: Entry[], apply: (a: LookupAnswer) => void): Promise<void> {
    for (let i = 0; i < es.length; i += LOOKUP_CHUNK) {
      const chunk = es.slice(i, i + LOOKUP_CHUNK);
      for (const a of await acts.sweepLookupRollouts({ items: chunk.map((e) => e.item), thresholds: input.taxonomy })) apply(a);
    }
  }
}

function validate(raw: SweepInputRaw): SweepInput {
  const parsed = SweepInputSchema.safeParse(raw);
  if (!parsed.success) {
    invalid(zodIssuePaths(parsed.error).map((i) => `sweep input: ${i.path || '(root)'}: ${i.message}`).join('\n'));
  }
  const input = parsed.data;
  const { workflowId } = workflowInfo();
  if (workflowId !== sweepWorkflowId(input.name)) {
    invalid(`sweep input: name: the workflow id is "${workflowId}" but a sweep named "${input.name}" must run as "${sweepWorkflowId(input.name)}"`);
  }
  return input;
}

/** Backoff of the adopted-rollout poll: 1 s growing ×1.5 to 30 s, in workflow time. */
class PollClock {
  private ms = POLL_MIN_MS;
  private at = 0;
  reset(): void {
    this.at = 0;
  }
  waitMs(): number {
    if (this.at === 0) this.at = Date.now() + this.ms;
    return this.at - Date.now();
  }
  next(): void {
    this.ms = Math.min(Math.round(this.ms * 1.5), POLL_MAX_MS);
    this.at = Date.now() + this.ms;
  }
}

function cancelEntry(e: Entry): void {
  if (e.scope) e.scope.cancel();
  else if (e.adopted) void getExternalWorkflowHandle(e.item.workflowId).cancel().catch(() => undefined);
}

/** Start one rollout as an abandoned child in its own cancellation scope; settle it when it closes. */
function startEntry(book: SweepBook, e: Entry): void {
  const { input } = book;
  book.starts(e);
  const scope = new CancellationScope();
  e.scope = scope;
  const rolloutInput = rolloutInputFor(input, e.item);
  void scope
    .run(async () => {
      let started = false;
      try {
        const child = await startChild(rolloutWorkflow, {
          workflowId: e.item.workflowId,
          taskQueue: input.taskQueue ?? workflowInfo().taskQueue,
          args: [rolloutInput],
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowIdReusePolicy: e.rerun ? WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY : WorkflowIdReusePolicy.REJECT_DUPLICATE,
          memo: { input: rolloutInput },
          staticSummary: `${e.item.taskId} · ${e.item.agent} · ${e.item.model} · #${e.item.repeat}`,
          typedSearchAttributes: [
            { key: SA.sweep, value: input.name },
            { key: SA.task, value: e.item.taskId },
            { key: SA.agent, value: e.item.agent },
            { key: SA.model, value: e.item.model },
            { key: SA.phase, value: 'queued' },
          ],
        });
        started = true;
        book.started();
        const r: RolloutResult = await child.result();
        book.settle(e, summarizeRollout(r, 'this-sweep', input.taxonomy));
      } catch (err) {
        if (!started) book.starting--;
        if (err instanceof WorkflowExecutionAlreadyStartedError) return book.raced(e);
        const s = unscored(e.item, stateOfFailure(err), describeFailure(err).slice(0, 500));
        const notRun = notRunReason(err);
        book.settle(e, notRun ? { ...s, notRun } : s);
      }
    })
    .catch(() => undefined);
}

async function finish(book: SweepBook, phase: 'done' | 'stopped' | 'cancelled'): Promise<SweepResult> {
  const result = book.result(phase);
  try {
    const written = await acts.sweepWriteReport({ result });
    result.reportDir = written.dir;
    result.reportHost = written.host;
  } catch (err) {
    log.warn('sweep report could not be written', { error: describeFailure(err) });
  }
  upsertSearchAttributes([{ key: SA.phase, value: phase }]);
  setCurrentDetails(describeSweep(book.progress(), result));
  return result;
}

async function resolveTasks(input: ReturnType<typeof SweepInputSchema.parse>): Promise<ResolvedTask[]> {
  try {
    return await planActs.sweepResolveTasks({ input });
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (cause instanceof AppFailure && cause.type === 'InvalidInputError') invalid(cause.message);
    throw err;
  }
}

function stateOfFailure(err: unknown): FinalState {
  if (err instanceof ChildWorkflowFailure) {
    if (err.cause instanceof TerminatedFailure) return 'terminated';
    if (err.cause instanceof TimeoutFailure) return 'timed_out';
  }
  return isCancellation(err) ? 'cancelled' : 'failed';
}


function unscored(item: SweepItem, state: FinalState, error: string): RolloutSummary {
  const { workflowId, rolloutKey, taskId, agent, model, repeat } = item;
  return { workflowId, rolloutKey, taskId, agent, model, repeat, state, origin: 'this-sweep', error };
}
