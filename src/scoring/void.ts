import type { ScoreCell, TaskScore } from '../model/scores';

/**
 * Evaluator access voids a rollout (the published harness's VOIDED_BY_LEAK): every aggregate of it
 * is 0 — overall, non-LLM, and the per-category/backbone/trajectory cells that the leaderboard
 * averages — whatever the checks said; the original overall is kept beside it for the record.
 */
export function voidScore(s: TaskScore): TaskScore {
  const zero = (c: ScoreCell): ScoreCell => ({ ...c, score: 0, pct: c.pct === null ? null : 0 });
  const zeroAll = <K extends string>(m: Record<K, ScoreCell>): Record<K, ScoreCell> => Object.fromEntries(Object.entries<ScoreCell>(m).map(([k, c]) => [k, zero(c)])) as Record<K, ScoreCell>;
  return { ...s, overall: zero(s.overall), nonLlm: zero(s.nonLlm), byCategory: zeroAll(s.byCategory), byBackbone: zeroAll(s.byBackbone), byTrajectory: zeroAll(s.byTrajectory) };
}
