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
import { jsonPath } from '../model/json';
import { computeBenchmark, summarizeRollout } from '../scoring/benchmark';
import type { RolloutResult } from '../model/rollout';
import { progressOf, rolloutInputFor, type Entry } from './sweep-entries';
import { rolloutWorkflow } from './rollout';
import { SA } from './search-attributes';
import {
  emptyCounts,
  planSweep,
  sweepWorkflowId,
  SweepInputSchema,
  type FinalState,
  type LookupAnswer,
  type ResolvedTask,
  type RolloutSummary,
  type StopMode,
  type StopRequest,
  type SweepCarry,
  type SweepInputRaw,
  type SweepItem,
  type SweepProgress,
  type SweepResult,
  describeSweep,
} from '../model/sweep';

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
  const parsed = SweepInputSchema.safeParse(raw);
  if (!parsed.success) {
    invalid(parsed.error.issues.map((i) => `sweep input: ${jsonPath(i.path) || '(root)'}: ${i.message}`).join('\n'));
  }
  const input = parsed.data;
  const info = workflowInfo();
  if (info.workflowId !== sweepWorkflowId(input.name)) {
    invalid(`sweep input: name: the workflow id is "${info.workflowId}" but a sweep named "${input.name}" must run as "${sweepWorkflowId(input.name)}"`);
  }
  const run = carry?.run ?? 1;
  const startedAt = carry?.startedAt ?? Date.now();
  let stopping: StopMode | null = carry?.stopping ?? null;
  upsertSearchAttributes([
    { key: SA.sweep, value: input.name },
    { key: SA.phase, value: 'running' },
  ]);
  upsertMemo({ config: input });

  const entries = new Map<string, Entry>();
  let items: SweepItem[] = [];
  let finishedThisRun = 0;
  let starting = 0;
  let dirty = false;
  const wake = () => {
    dirty = true;
  };
  const all = () => items.map((it) => entries.get(it.workflowId)!);
  const runningEntries = () => all().filter((e) => e.state === 'running');

  const settle = (e: Entry, s: RolloutSummary) => {
    if (e.state !== 'running' && e.state !== 'pending') return;
    e.state = s.state;
    e.summary = s;
    e.finishedAt = Date.now();
    e.scope = undefined;
    e.adopted = false;
    finishedThisRun++;
    wake();
  };

  const progress = (): SweepProgress => progressOf({ input, workflowId: info.workflowId, run, startedAt, stopping }, all());
  const showProgress = () => setCurrentDetails(describeSweep(progress()));

  setHandler(sweepProgressQuery, progress);
  setHandler(stopSweepSignal, (req?: StopRequest) => {
    const mode: StopMode = req?.cancelRunning ? 'cancel' : 'drain';
    if (stopping === 'cancel') return;
    stopping = mode;
    log.info('sweep stop requested', { mode });
    if (mode === 'cancel') for (const e of runningEntries()) cancelEntry(e);
    wake();
  });

  // ---- the plan ---------------------------------------------------------------------------------
  const tasks: ResolvedTask[] = carry?.tasks ?? (await resolveTasks(input));
  items = planSweep(input, tasks);
  for (const it of items) entries.set(it.workflowId, { item: it, state: 'pending', origin: 'this-sweep' });
  for (const s of carry?.done ?? []) {
    const e = entries.get(s.workflowId);
    if (e) Object.assign(e, { state: s.state, summary: s });
  }
  for (const f of carry?.inflight ?? []) {
    const e = entries.get(f.workflowId);
    if (e) Object.assign(e, { state: 'running', adopted: true, startedAt: f.startedAt });
  }
  showProgress();

  // ---- what already exists under these ids (an earlier submission, a terminated earlier run) ---
  const unknown = all().filter((e) => e.state === 'pending');
  for (let i = 0; i < unknown.length; i += LOOKUP_CHUNK) {
    const chunk = unknown.slice(i, i + LOOKUP_CHUNK);
    const answers = await acts.sweepLookupRollouts({ items: chunk.map((e) => e.item), thresholds: input.taxonomy });
    for (const a of answers) {
      const e = entries.get(a.workflowId)!;
      if (a.state === 'absent') continue;
      if (a.state === 'running') {
        Object.assign(e, { state: 'running', adopted: true, origin: 'earlier', startedAt: Date.now() });
        continue;
      }
      if (a.state === 'cancelled' || a.state === 'terminated' || ((a.state === 'failed' || a.state === 'timed_out') && input.rerunFailed)) {
        e.rerun = true;
        continue;
      }
      Object.assign(e, { state: a.state, summary: { ...a.summary, origin: 'earlier' }, origin: 'earlier' });
    }
  }

  // ---- run --------------------------------------------------------------------------------------
  function cancelEntry(e: Entry): void {
    if (e.scope) e.scope.cancel();
    else if (e.adopted) void getExternalWorkflowHandle(e.item.workflowId).cancel().catch(() => undefined);
  }

  function startEntry(e: Entry): void {
    e.state = 'running';
    e.startedAt = Date.now();
    e.origin = 'this-sweep';
    starting++;
    const scope = new CancellationScope();
    e.scope = scope;
    const rolloutInput = rolloutInputFor(input, e.item);
    void scope
      .run(async () => {
        let started = false;
        try {
          const child = await startChild(rolloutWorkflow, {
            workflowId: e.item.workflowId,
            taskQueue: input.taskQueue ?? info.taskQueue,
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
          starting--;
          wake();
          const r: RolloutResult = await child.result();
          settle(e, summarizeRollout(r, 'this-sweep', input.taxonomy));
        } catch (err) {
          if (!started) starting--;
          if (err instanceof WorkflowExecutionAlreadyStartedError) {
            // Someone else holds the id (a lookup race): watch that run instead of starting one.
            Object.assign(e, { adopted: true, scope: undefined, origin: 'earlier' });
            wake();
            return;
          }
          const s = unscored(e.item, stateOfFailure(err), describeFailure(err).slice(0, 500));
          const notRun = notRunReason(err);
          settle(e, notRun ? { ...s, notRun } : s);
        }
      })
      .catch(() => undefined);
  }

  const pending = () => all().filter((e) => e.state === 'pending');
  const continueAsNewDue = () => finishedThisRun >= input.continueAsNewEvery || workflowInfo().continueAsNewSuggested;
  let pollMs = POLL_MIN_MS;
  let nextPollAt = 0;

  try {
    for (;;) {
      if (!stopping && !continueAsNewDue()) {
        const free = input.concurrency - runningEntries().length;
        for (const e of pending().slice(0, Math.max(0, free))) startEntry(e);
      }
      showProgress();
      const running = runningEntries();
      if (running.length === 0 && (stopping || pending().length === 0)) break;
      if (continueAsNewDue() && starting === 0 && !stopping) {
        const next: SweepCarry = {
          run: run + 1,
          startedAt,
          tasks,
          done: all().filter((e) => e.summary).map((e) => e.summary!),
          inflight: running.map((e) => ({ workflowId: e.item.workflowId, startedAt: e.startedAt ?? Date.now() })),
          stopping,
        };
        log.info('sweep continues as new', { run, finishedThisRun, inflight: next.inflight.length });
        await continueAsNew<typeof sweepWorkflow>(input, next);
      }
      dirty = false;
      const adopted = running.filter((e) => e.adopted);
      if (adopted.length === 0) {
        nextPollAt = 0;
        await condition(() => dirty);
        continue;
      }
      // Adopted rollouts are not our children: poll them on a schedule of their own, which the
      // completions of our own children (frequent wake-ups) must not keep pushing back.
      if (nextPollAt === 0) nextPollAt = Date.now() + pollMs;
      const wait = nextPollAt - Date.now();
      if (wait > 0 && (await condition(() => dirty, wait))) continue;
      pollMs = Math.min(Math.round(pollMs * 1.5), POLL_MAX_MS);
      nextPollAt = Date.now() + pollMs;
      await pollAdopted(adopted);
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // The sweep itself was cancelled: our children's scopes are cancelled with it (each rollout
    // tears down); adopted rollouts get a cancel request. Then the partial report, then Canceled.
    await CancellationScope.nonCancellable(async () => {
      stopping = 'cancel';
      for (const e of runningEntries()) {
        if (!e.adopted) continue;
        await getExternalWorkflowHandle(e.item.workflowId).cancel().catch(() => undefined);
        settle(e, unscored(e.item, 'cancelled', 'cancel requested with the sweep'));
      }
      await condition(() => runningEntries().length === 0);
      await finish('cancelled');
    });
    throw err;
  }
  return finish(stopping ? 'stopped' : 'done');

  async function pollAdopted(adopted: Entry[]): Promise<void> {
    for (let i = 0; i < adopted.length; i += LOOKUP_CHUNK) {
      const chunk = adopted.slice(i, i + LOOKUP_CHUNK);
      const answers: LookupAnswer[] = await acts.sweepLookupRollouts({ items: chunk.map((e) => e.item), thresholds: input.taxonomy });
      for (const a of answers) {
        const e = entries.get(a.workflowId)!;
        if (a.state === 'running' || !e.adopted) continue;
        if (a.state === 'absent') {
          // gone from Temporal (retention) while we waited: start it like any pending rollout
          Object.assign(e, { state: 'pending', adopted: false });
          wake();
          continue;
        }
        settle(e, { ...a.summary, origin: e.origin });
      }
    }
  }

  async function finish(phase: 'done' | 'stopped' | 'cancelled'): Promise<SweepResult> {
    const es = all();
    const counts = emptyCounts();
    for (const e of es) counts[e.state]++;
    const rollouts = es.filter((e) => e.summary).map((e) => e.summary!);
    const result: SweepResult = {
      name: input.name,
      workflowId: info.workflowId,
      startedAt,
      finishedAt: Date.now(),
      runs: run,
      stopped: phase === 'done' ? null : stopping ?? 'cancel',
      counts,
      tasks,
      rollouts,
      benchmark: computeBenchmark(rollouts),
      reportDir: null,
      reportHost: null,
      input,
    };
    try {
      const written = await acts.sweepWriteReport({ result });
      result.reportDir = written.dir;
      result.reportHost = written.host;
    } catch (err) {
      log.warn('sweep report could not be written', { error: messageOf(err) });
    }
    upsertSearchAttributes([{ key: SA.phase, value: phase }]);
    setCurrentDetails(describeSweep(progress(), result));
    return result;
  }
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

function messageOf(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  // the innermost cause says what went wrong; the wrappers say where
  while (e && e.cause && typeof e.cause === 'object') e = e.cause as typeof e;
  return String(e?.message ?? err).slice(0, 500);
}

function unscored(item: SweepItem, state: FinalState, error: string): RolloutSummary {
  const { workflowId, rolloutKey, taskId, agent, model, repeat } = item;
  return { workflowId, rolloutKey, taskId, agent, model, repeat, state, origin: 'this-sweep', error };
}
