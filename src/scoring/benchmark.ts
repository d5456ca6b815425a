import type { BenchmarkReport, ConfigRow, TaskCell } from '../model/benchmark';
import { round } from './aggregate';
import { BACKBONES } from './backbone';
import type { TaskScore } from '../model/scores';
import { classifyRollout, DEFAULT_THRESHOLDS, type TaxonomyThresholds } from './taxonomy';
import { TAXONOMY_LABELS, type TaxonomyLabel } from '../model/scores';
import type { ScoreCell } from '../model/scores';
import type { RolloutResult } from '../model/rollout';
import type { Frac, RolloutScoreSummary, RolloutSummary } from '../model/sweep';

/**
 * The paper's benchmark aggregation over a sweep's rollouts. Pure: the sweep workflow computes
 * its leaderboard with it, the reports render it.
 *
 * For each (agent, model):
 *   1. per rollout, a percentage p = 100·Σs/ΣM under the task-score rule (SKIPPED_LLM out of
 *      both sums) — overall, non-LLM, within each backbone, category and trajectory;
 *   2. per task, the mean of p over that task's completed repeats;
 *   3. the benchmark score is the unweighted mean over tasks of step 2 — Pass@1, the expected
 *      score of a single attempt. A task that has no node in a backbone (category, trajectory)
 *      is left out of that backbone's mean rather than counted as 0.
 * Rollouts whose workflow failed (harness trouble, not the agent's score) have no score: they are
 * counted and listed, never averaged in; `tasks` tells how many tasks a row stands on.
 */

export function fracOf(c: ScoreCell): Frac {
  return [c.score, c.maxScore];
}

export function pctOf(f: Frac | undefined): number | null {
  if (!f || !(f[1] > 0)) return null;
  return (100 * f[0]) / f[1];
}

export function summarizeScore(s: TaskScore): RolloutScoreSummary {
  const map = (m: Record<string, ScoreCell>) => Object.fromEntries(Object.entries(m).map(([k, c]) => [k, fracOf(c)]));
  return {
    overall: fracOf(s.overall),
    nonLlm: fracOf(s.nonLlm),
    judgeDroppedMaxScore: s.judgeDroppedMaxScore,
    byBackbone: map(s.byBackbone),
    byCategory: map(s.byCategory),
    byTrajectory: map(s.byTrajectory),
    statusCounts: { ...s.statusCounts } as Record<string, number>,
  };
}

export function backbonePcts(s: RolloutScoreSummary): Record<string, number | null> {
  return Object.fromEntries(BACKBONES.map((b) => [b, pctOf(s.byBackbone[b])]));
}

export function summarizeRollout(r: RolloutResult, origin: RolloutSummary['origin'], th: TaxonomyThresholds = DEFAULT_THRESHOLDS): RolloutSummary {
  const score = summarizeScore(r.score);
  return {
    workflowId: r.workflowId,
    rolloutKey: r.rolloutKey,
    taskId: r.taskId,
    agent: r.agent,
    model: r.model,
    repeat: r.repeat,
    state: 'completed',
    origin,
    host: r.host,
    runDir: r.runDir,
    agentExit: r.agentRun?.exitReason,
    ...(r.voided ? { voided: true } : {}),
    score,
    taxonomy: classifyRollout(backbonePcts(score), th),
    durationMs: r.timings?.totalMs,
    ...(r.agentRun?.gateway ? { costUsd: r.agentRun.gateway.costUsd, costReason: r.agentRun.gateway.costReason } : {}),
  };
}




const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const r2 = (x: number | null): number | null => (x === null ? null : round(x, 2));
const nums = (xs: (number | null)[]): number[] => xs.filter((x): x is number => x !== null);

function stdev(xs: number[]): number | null {
  if (xs.length === 0) return null;
  if (xs.length === 1) return 0;
  const m = mean(xs)!;
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/** Mean over tasks of the per-task mean over repeats of `value` (null values are absent, not 0). */
function taskMean(byTask: Map<string, RolloutScoreSummary[]>, value: (s: RolloutScoreSummary) => number | null): number | null {
  const perTask: number[] = [];
  for (const rows of byTask.values()) {
    const m = mean(nums(rows.map(value)));
    if (m !== null) perTask.push(m);
  }
  return mean(perTask);
}

export const BENCHMARK_RULE =
  'benchmark score (Pass@1) = unweighted mean over tasks of the mean over repeats of S_t = 100·Σs/ΣM (SKIPPED_LLM excluded); ' +
  'per backbone/category/trajectory the same within that group, over the tasks that have it; failed rollouts are not averaged in; ' +
  'a row missing a declared task is incomplete (n/N tasks) and ranked after the complete rows';
export const AS_PAPER_RULE =
  "as the paper: benchmark score = mean over all N declared tasks, a task without a scored rollout counts 0 (also non-LLM and Best@k); " +
  'per backbone/category/trajectory over the scored tasks only; rows ranked by score alone';

export interface BenchmarkOptions {
  /** the sweep's declared task ids (SweepResult.tasks): a task missing from a row counts as missing */
  tasks?: readonly string[];
  /** the paper's view: missing tasks score 0 */
  asPaper?: boolean;
  /** the taxonomy thresholds of the capability-unit labels (the sweep's `taxonomy`) */
  thresholds?: TaxonomyThresholds;
}

/**
 * The label of one capability unit (task × agent × model over its repeats): the mean over the
 * scored repeats of each backbone's percentage (a voided repeat is 0 there, its score was zeroed;
 * a backbone a repeat has no scored node in is left out of that backbone's mean), classified by
 * the per-rollout rule. null label (no backbone scored) → 'none'; no scored repeat → 'notRun'.
 */
export function classifyUnit(repeats: readonly RolloutScoreSummary[], th: TaxonomyThresholds = DEFAULT_THRESHOLDS): TaxonomyLabel | 'none' | 'notRun' {
  if (!repeats.length) return 'notRun';
  const pcts = repeats.map(backbonePcts);
  const keys = [...new Set(pcts.flatMap((p) => Object.keys(p)))];
  const meanPct = Object.fromEntries(keys.map((b) => [b, mean(nums(pcts.map((p) => p[b] ?? null)))]));
  return classifyRollout(meanPct, th).label ?? 'none';
}

export function computeBenchmark(rollouts: readonly RolloutSummary[], opts: BenchmarkOptions = {}): BenchmarkReport {
  const keyOf = (r: { agent: string; model: string }) => `${r.agent}\u0000${r.model}`;
  const groups = new Map<string, RolloutSummary[]>();
  for (const r of rollouts) {
    const k = keyOf(r);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(r);
  }
  // the declared list when the caller knows it (a task that never produced a rollout still counts)
  const declared = [...new Set([...(opts.tasks ?? []), ...rollouts.map((r) => r.taskId)])].sort();
  const allTasks = declared;
  const th = opts.thresholds ?? DEFAULT_THRESHOLDS;
  const asPaper = !!opts.asPaper;
  const scored = rollouts.filter((r) => r.state === 'completed' && r.score);
  const categories = [...new Set(scored.flatMap((r) => Object.keys(r.score!.byCategory)))].sort();
  const trajectories = [...new Set(scored.flatMap((r) => Object.keys(r.score!.byTrajectory)))].sort();
  const extraBackbones = [...new Set(scored.flatMap((r) => Object.keys(r.score!.byBackbone)))].filter((b) => !(BACKBONES as readonly string[]).includes(b)).sort();
  const backbones = [...BACKBONES, ...extraBackbones];

  const configs: ConfigRow[] = [];
  for (const rows of groups.values()) {
    const done = rows.filter((r) => r.state === 'completed' && r.score).sort((a, b) => a.repeat - b.repeat);
    const byTask = new Map<string, RolloutScoreSummary[]>();
    for (const r of done) {
      if (!byTask.has(r.taskId)) byTask.set(r.taskId, []);
      byTask.get(r.taskId)!.push(r.score!);
    }
    const missing = declared.filter((t) => !byTask.has(t));
    // the paper's S̄ divides by every declared task: a missing one adds 0 to the sum
    const overTasks = (x: number | null, perTask: number[]) => (asPaper && x !== null ? (x * perTask.length) / declared.length : x);
    const taskCells: Record<string, TaskCell> = {};
    for (const t of [...byTask.keys()].sort()) {
      const reps = done.filter((r) => r.taskId === t).map((r) => pctOf(r.score!.overall));
      const ns = nums(reps);
      taskCells[t] = { mean: r2(mean(ns)), repeats: reps.map(r2), best: r2(ns.length ? Math.max(...ns) : null) };
    }
    const perTaskBest = nums(Object.values(taskCells).map((c) => c.best));
    const perTaskStdev = nums([...byTask.values()].map((ss) => stdev(nums(ss.map((s) => pctOf(s.overall))))));
    const tax = Object.fromEntries([...TAXONOMY_LABELS, 'none'].map((l) => [l, 0])) as ConfigRow['taxonomy'];
    for (const r of done) tax[r.taxonomy?.label ?? 'none']++;
    const units = Object.fromEntries([...TAXONOMY_LABELS, 'none', 'notRun'].map((l) => [l, 0])) as NonNullable<ConfigRow['units']>;
    for (const t of declared) units[classifyUnit(byTask.get(t) ?? [], th)]++;
    const scoreOf = (value: (s: RolloutScoreSummary) => number | null) => {
      const perTask = [...byTask.values()].map((ss) => mean(nums(ss.map(value)))).filter((m): m is number => m !== null);
      return r2(overTasks(mean(perTask), perTask));
    };
    configs.push({
      agent: rows[0].agent,
      model: rows[0].model,
      rank: 0,
      score: scoreOf((s) => pctOf(s.overall)),
      nonLlm: scoreOf((s) => pctOf(s.nonLlm)),
      bestOfK: r2(overTasks(mean(perTaskBest), perTaskBest)),
      repeatStdev: r2(mean(perTaskStdev)),
      tasks: byTask.size,
      declaredTasks: declared.length,
      missingTasks: missing,
      incomplete: missing.length > 0,
      rollouts: rows.length,
      completed: done.length,
      unscored: rows.length - done.length,
      judgeDroppedMaxScore: round(done.reduce((a, r) => a + r.score!.judgeDroppedMaxScore, 0), 3),
      byTask: taskCells,
      byBackbone: Object.fromEntries(backbones.map((b) => [b, r2(taskMean(byTask, (s) => pctOf(s.byBackbone[b])))])),
      byCategory: Object.fromEntries(categories.map((c) => [c, r2(taskMean(byTask, (s) => pctOf(s.byCategory[c])))])),
      byTrajectory: Object.fromEntries(trajectories.map((t) => [t, r2(taskMean(byTask, (s) => pctOf(s.byTrajectory[t])))])),
      taxonomy: tax,
      units,
    });
  }
  // complete rows first (an incomplete row's mean stands on fewer tasks: not comparable), then score;
  // the paper's view already charges missing tasks 0, so it ranks by score alone
  const tier = (c: ConfigRow) => (!asPaper && c.incomplete ? 1 : 0);
  configs.sort((a, b) => tier(a) - tier(b) || (b.score ?? -1) - (a.score ?? -1) || a.agent.localeCompare(b.agent) || a.model.localeCompare(b.model));
  let rank = 0;
  configs.forEach((c, i) => {
    if (i === 0 || c.score !== configs[i - 1].score || tier(c) !== tier(configs[i - 1])) rank = i + 1;
    c.rank = rank;
  });
  const completed = rollouts.filter((r) => r.state === 'completed').length;
  return {
    configs,
    tasks: allTasks,
    backbones,
    categories,
    trajectories,
    rollouts: { total: rollouts.length, completed, unscored: rollouts.length - completed },
    rule: asPaper ? AS_PAPER_RULE : BENCHMARK_RULE,
    ...(asPaper ? { asPaper: true } : {}),
  };
}

/** "n/N tasks" — how many of the declared tasks a row's score stands on. */
export function tasksLabel(c: Pick<ConfigRow, 'tasks' | 'declaredTasks'>, declared: number): string {
  return `${c.tasks}/${c.declaredTasks ?? declared} tasks`;
}
