import type { CancellationScope } from '@temporalio/workflow';
import { computeBenchmark, pctOf } from '../scoring/benchmark';
import { RolloutInputSchema, type RolloutInput } from '../model/rollout';
import { emptyCounts, type RolloutState, type RolloutSummary, type StopMode, type SweepInputSchema, type SweepItem, type SweepProgress } from '../model/sweep';

/** Pure bookkeeping of a sweep's rollouts (workflow code: deterministic, no I/O). */

type SweepInput = ReturnType<typeof SweepInputSchema.parse>;

/** One rollout of the sweep as the sweep workflow tracks it. */
export interface Entry {
  item: SweepItem;
  state: RolloutState;
  summary?: RolloutSummary;
  startedAt?: number;
  finishedAt?: number;
  /** not our child in this run: polled through the lookup activity */
  adopted?: boolean;
  /** found cancelled/terminated/failed: start again with ALLOW_DUPLICATE_FAILED_ONLY */
  rerun?: boolean;
  origin: RolloutSummary['origin'];
  scope?: CancellationScope;
}

/** The child's input: the sweep's settings applied to one (task, agent, model, repeat). */
export function rolloutInputFor(input: SweepInput, item: SweepItem): RolloutInput {
  return RolloutInputSchema.parse({
    sweep: input.name,
    taskDir: item.taskDir,
    taskId: item.taskId,
    agent: item.agent,
    model: item.model,
    repeat: item.repeat,
    budgetSeconds: input.budgets.agentSeconds,
    idleSeconds: input.budgets.idleSeconds,
    heartbeatSeconds: input.budgets.heartbeatSeconds,
    agentRetry: input.agentRetry,
    snapshotSeconds: input.snapshotSeconds,
    hostLossSeconds: input.hostLossSeconds,
    evaluation: input.evaluation,
    ...(input.imageMap ? { imageMap: input.imageMap } : {}),
  });
}

/** What the `progress` query answers: per-rollout state, counts, an ETA and the leaders so far. */
export function progressOf(s: { input: SweepInput; workflowId: string; run: number; startedAt: number; stopping: StopMode | null }, es: Entry[]): SweepProgress {
  const { input, stopping } = s;
  const now = Date.now();
  const counts = emptyCounts();
  for (const e of es) counts[e.state]++;
  const durations = es.filter((e) => e.origin === 'this-sweep' && e.summary && e.startedAt !== undefined && e.finishedAt !== undefined).map((e) => e.finishedAt! - e.startedAt!);
  const avg = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : null;
  let eta: number | null = null;
  if (counts.pending + counts.running === 0) eta = 0;
  else if (avg !== null && !(stopping && counts.running === 0)) {
    const pendingWork = stopping ? 0 : counts.pending * avg;
    const runningWork = es.filter((e) => e.state === 'running').reduce((a, e) => a + Math.max(avg - (now - (e.startedAt ?? now)), avg * 0.05), 0);
    const lanes = Math.max(1, Math.min(input.concurrency, counts.pending + counts.running));
    eta = Math.round((pendingWork + runningWork) / lanes / 1000);
  }
  const bench = computeBenchmark(
    es.filter((e) => e.summary).map((e) => e.summary!),
    { tasks: [...new Set(es.map((e) => e.item.taskId))], thresholds: input.taxonomy },
  );
  const metered = es.map((e) => e.summary?.costUsd).filter((c): c is number => typeof c === 'number');
  return {
    name: input.name,
    workflowId: s.workflowId,
    run: s.run,
    startedAt: s.startedAt,
    now,
    total: es.length,
    counts,
    reused: es.filter((e) => e.summary?.origin === 'earlier').length,
    concurrency: input.concurrency,
    stopping,
    avgRolloutSeconds: avg === null ? null : Math.round(avg / 100) / 10,
    etaSeconds: eta,
    costUsd: metered.length ? Math.round(metered.reduce((a, b) => a + b, 0) * 1e6) / 1e6 : null,
    ...(input.costCapUsd !== undefined ? { costCapUsd: input.costCapUsd } : {}),
    rollouts: es.map((e) => ({
      workflowId: e.item.workflowId,
      taskId: e.item.taskId,
      agent: e.item.agent,
      model: e.item.model,
      repeat: e.item.repeat,
      state: e.state,
      origin: e.summary?.origin ?? (e.state === 'running' ? e.origin : undefined),
      adopted: e.adopted || undefined,
      startedAt: e.startedAt,
      finishedAt: e.finishedAt,
      scorePct: e.summary?.score ? round1(pctOf(e.summary.score.overall)) : undefined,
      taxonomy: e.summary?.taxonomy?.label,
      error: e.summary?.error,
      notRun: e.summary?.notRun,
      voided: e.summary?.voided,
    })),
    leaders: bench.configs.map((c) => ({ agent: c.agent, model: c.model, score: c.score, tasks: c.tasks, declaredTasks: c.declaredTasks })),
  };
}

export function round1(x: number | null): number | null {
  return x === null ? null : Math.round(x * 10) / 10;
}
