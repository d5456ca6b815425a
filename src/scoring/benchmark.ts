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
  'per backbone/category/trajectory the same within that group, over the tasks that have it; failed rollouts are not averaged in';

export function computeBenchmark(rollouts: readonly RolloutSummary[]): BenchmarkReport {
  const keyOf = (r: { agent: string; model: string }) => `${r.agent}\u0000${r.model}`;
  const groups = new Map<string, RolloutSummary[]>();
  for (const r of rollouts) {
    const k = keyOf(r);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(r);
  }
  const allTasks = [...new Set(rollouts.map((r) => r.taskId))].sort();
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
    configs.push({
      agent: rows[0].agent,
      model: rows[0].model,
      rank: 0,
      score: r2(taskMean(byTask, (s) => pctOf(s.overall))),
      nonLlm: r2(taskMean(byTask, (s) => pctOf(s.nonLlm))),
      bestOfK: r2(mean(perTaskBest)),
      repeatStdev: r2(mean(perTaskStdev)),
      tasks: byTask.size,
      rollouts: rows.length,
      completed: done.length,
      unscored: rows.length - done.length,
      judgeDroppedMaxScore: round(done.reduce((a, r) => a + r.score!.judgeDroppedMaxScore, 0), 3),
      byTask: taskCells,
      byBackbone: Object.fromEntries(backbones.map((b) => [b, r2(taskMean(byTask, (s) => pctOf(s.byBackbone[b])))])),
      byCategory: Object.fromEntries(categories.map((c) => [c, r2(taskMean(byTask, (s) => pctOf(s.byCategory[c])))])),
      byTrajectory: Object.fromEntries(trajectories.map((t) => [t, r2(taskMean(byTask, (s) => pctOf(s.byTrajectory[t])))])),
      taxonomy: tax,
    });
  }
  configs.sort((a, b) => (b.score ?? -1) - (a.score ?? -1) || a.agent.localeCompare(b.agent) || a.model.localeCompare(b.model));
  let rank = 0;
  configs.forEach((c, i) => {
    if (i === 0 || c.score !== configs[i - 1].score) rank = i + 1;
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
    rule: BENCHMARK_RULE,
  };
}
