import { computeBenchmark } from '../scoring/benchmark';
import {
  costCapReason,
  emptyCounts,
  planSweep,
  type LookupAnswer,
  type ResolvedTask,
  type RolloutSummary,
  type StopMode,
  type StopRequest,
  type SweepCarry,
  type SweepInputSchema,
  type SweepItem,
  type SweepProgress,
  type SweepResult,
} from '../model/sweep';
import { progressOf, type Entry } from './sweep-entries';

type SweepInput = ReturnType<typeof SweepInputSchema.parse>;

/**
 * The sweep's bookkeeping, without Temporal: which rollouts are pending, running (ours or adopted),
 * finished; what a lookup answer or a finished child changes; when to continue as new; what to
 * carry over; the result. Pure (workflow time only), so it is unit-tested directly and the
 * workflow (sweep.ts) reads like its sequence.
 */
export class SweepBook {
  readonly entries = new Map<string, Entry>();
  items: SweepItem[] = [];
  tasks: ResolvedTask[] = [];
  finishedThisRun = 0;
  /** children whose start command is issued but not yet confirmed */
  starting = 0;
  /** something changed since the workflow last looked */
  dirty = false;
  stopping: StopMode | null;
  readonly run: number;
  readonly startedAt: number;

  constructor(
    readonly input: SweepInput,
    readonly workflowId: string,
    private readonly carry?: SweepCarry,
  ) {
    this.run = carry?.run ?? 1;
    this.startedAt = carry?.startedAt ?? Date.now();
    this.stopping = carry?.stopping ?? null;
  }

  /** every (task, agent, model, repeat), with what the previous run handed over */
  plan(tasks: ResolvedTask[]): void {
    this.tasks = tasks;
    this.items = planSweep(this.input, tasks);
    for (const it of this.items) this.entries.set(it.workflowId, { item: it, state: 'pending', origin: 'this-sweep' });
    for (const s of this.carry?.done ?? []) {
      const e = this.entries.get(s.workflowId);
      if (e) Object.assign(e, { state: s.state, summary: s });
    }
    for (const f of this.carry?.inflight ?? []) {
      const e = this.entries.get(f.workflowId);
      if (e) Object.assign(e, { state: 'running', adopted: true, startedAt: f.startedAt });
    }
  }

  all(): Entry[] {
    return this.items.map((it) => this.entries.get(it.workflowId)!);
  }
  running(): Entry[] {
    return this.all().filter((e) => e.state === 'running');
  }
  pending(): Entry[] {
    return this.all().filter((e) => e.state === 'pending');
  }
  wake(): void {
    this.dirty = true;
  }

  /** a stop request: the entries to cancel now (none for a drain, or when already cancelling) */
  stop(req?: StopRequest): Entry[] {
    const mode: StopMode = req?.cancelRunning ? 'cancel' : 'drain';
    if (this.stopping === 'cancel') return [];
    this.stopping = mode;
    this.wake();
    return mode === 'cancel' ? this.running() : [];
  }

  /** What an earlier submission left under an id: reuse it, adopt it, or run it (again). */
  existing(a: LookupAnswer): void {
    const e = this.entries.get(a.workflowId)!;
    if (a.state === 'absent') return;
    if (a.state === 'running') {
      Object.assign(e, { state: 'running', adopted: true, origin: 'earlier', startedAt: Date.now() });
      return;
    }
    if (a.state === 'cancelled' || a.state === 'terminated' || ((a.state === 'failed' || a.state === 'timed_out') && this.input.rerunFailed)) {
      e.rerun = true;
      return;
    }
    Object.assign(e, { state: a.state, summary: { ...a.summary, origin: 'earlier' }, origin: 'earlier' });
  }

  /** A poll of an adopted rollout. */
  polled(a: LookupAnswer): void {
    const e = this.entries.get(a.workflowId)!;
    if (a.state === 'running' || !e.adopted) return;
    if (a.state === 'absent') {
      // gone from Temporal (retention) while we waited: start it like any pending rollout
      Object.assign(e, { state: 'pending', adopted: false });
      this.wake();
      return;
    }
    this.settle(e, { ...a.summary, origin: e.origin });
  }

  /** metered cost of the finished rollouts (this submission's and reused ones; unknown costs count 0) */
  spentUsd(): number {
    let sum = 0;
    for (const e of this.all()) if (typeof e.summary?.costUsd === 'number') sum += e.summary.costUsd;
    return Math.round(sum * 1e6) / 1e6;
  }

  /**
   * The cost cap (input.costCapUsd): once the finished rollouts cost that much, every pending
   * rollout is recorded "not run: cost cap $X reached after $Y" (running ones finish). Decided
   * from child results only, so replay sees the same decision. Returns how many it recorded.
   */
  applyCostCap(): number {
    const cap = this.input.costCapUsd;
    if (cap === undefined) return 0;
    const spent = this.spentUsd();
    if (spent < cap) return 0;
    const pending = this.pending();
    for (const e of pending) {
      const { workflowId, rolloutKey, taskId, agent, model, repeat } = e.item;
      Object.assign(e, { state: 'cancelled', finishedAt: Date.now(), summary: { workflowId, rolloutKey, taskId, agent, model, repeat, state: 'cancelled', origin: 'this-sweep', notRun: costCapReason(cap, spent) } });
    }
    if (pending.length) this.wake();
    return pending.length;
  }

  /** the entries to start now: free lanes, unless stopping, over the cost cap, or about to continue as new */
  toStart(continueAsNewSuggested: boolean): Entry[] {
    if (this.stopping || this.continueAsNewDue(continueAsNewSuggested)) return [];
    if (this.applyCostCap()) return [];
    const free = this.input.concurrency - this.running().length;
    return this.pending().slice(0, Math.max(0, free));
  }

  starts(e: Entry): void {
    e.state = 'running';
    e.startedAt = Date.now();
    e.origin = 'this-sweep';
    this.starting++;
  }

  started(): void {
    this.starting--;
    this.wake();
  }

  /** someone else holds the id (a lookup race): watch that run instead */
  raced(e: Entry): void {
    Object.assign(e, { adopted: true, scope: undefined, origin: 'earlier' });
    this.wake();
  }

  settle(e: Entry, s: RolloutSummary): void {
    if (e.state !== 'running' && e.state !== 'pending') return;
    e.state = s.state;
    e.summary = s;
    e.finishedAt = Date.now();
    e.scope = undefined;
    e.adopted = false;
    this.finishedThisRun++;
    this.wake();
  }

  /** nothing runs and nothing more will start */
  finished(): boolean {
    return this.running().length === 0 && (!!this.stopping || this.pending().length === 0);
  }

  continueAsNewDue(suggested: boolean): boolean {
    return this.finishedThisRun >= this.input.continueAsNewEvery || suggested;
  }

  /** time to hand over: due, no start in flight, not stopping */
  handOver(suggested: boolean): boolean {
    return this.continueAsNewDue(suggested) && this.starting === 0 && !this.stopping;
  }

  carryOver(): SweepCarry {
    return {
      run: this.run + 1,
      startedAt: this.startedAt,
      tasks: this.tasks,
      done: this.all().filter((e) => e.summary).map((e) => e.summary!),
      inflight: this.running().map((e) => ({ workflowId: e.item.workflowId, startedAt: e.startedAt ?? Date.now() })),
      stopping: this.stopping,
    };
  }

  progress(): SweepProgress {
    return progressOf({ input: this.input, workflowId: this.workflowId, run: this.run, startedAt: this.startedAt, stopping: this.stopping }, this.all());
  }

  result(phase: 'done' | 'stopped' | 'cancelled'): SweepResult {
    const es = this.all();
    const counts = emptyCounts();
    for (const e of es) counts[e.state]++;
    const rollouts = es.filter((e) => e.summary).map((e) => e.summary!);
    return {
      name: this.input.name,
      workflowId: this.workflowId,
      startedAt: this.startedAt,
      finishedAt: Date.now(),
      runs: this.run,
      stopped: phase === 'done' ? null : this.stopping ?? 'cancel',
      counts,
      tasks: this.tasks,
      rollouts,
      // the declared list is the resolved tasks: a task that never produced a scored rollout counts as missing
      benchmark: computeBenchmark(rollouts, { tasks: this.tasks.map((t) => t.id), thresholds: this.input.taxonomy }),
      reportDir: null,
      reportHost: null,
      input: this.input,
      ...(this.input.costCapUsd !== undefined ? { costCap: this.costCapRecord(this.input.costCapUsd) } : {}),
    };
  }

  private costCapRecord(capUsd: number): NonNullable<SweepResult['costCap']> {
    const notStarted = this.all().filter((e) => e.summary?.notRun?.startsWith('cost cap ')).length;
    const spentUsd = this.spentUsd();
    return { capUsd, spentUsd, reached: notStarted > 0 || spentUsd >= capUsd, notStarted };
  }
}
