import type { TaskScore } from '../model/scores';

/**
 * Evaluator access voids a rollout (the published harness's VOIDED_BY_LEAK): its task score is 0,
 * whatever the checks said; the original is kept beside it for the record.
 */
export function voidScore(s: TaskScore): TaskScore {
  const zero = (c: TaskScore['overall']) => ({ ...c, score: 0, pct: c.pct === null ? null : 0 });
  return { ...s, overall: zero(s.overall), nonLlm: zero(s.nonLlm) };
}
