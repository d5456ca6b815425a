import type { TaskScore } from '../model/scores';
import type { ScoreCell } from '../model/scores';

export const SCORE_HEADER = ['', 'score', 'max', 'pct', 'nodes', 'passed', 'failed', 'skip-dep', 'skip-llm', 'error'];

export function cellRow(name: string, c: ScoreCell): (string | number | null)[] {
  return [name, c.score, c.maxScore, c.pct, c.nodes, c.passed, c.failed, c.skippedDependency, c.skippedLlm, c.error];
}

/** The rows people read first: overall, deterministic-only, then each group. */
export function scoreSections(s: TaskScore): { title: string; rows: (string | number | null)[][] }[] {
  const rows = (m: Record<string, ScoreCell>) => Object.entries(m).map(([k, c]) => cellRow(k, c));
  return [
    { title: 'By category', rows: rows(s.byCategory) },
    { title: 'By backbone', rows: rows(s.byBackbone) },
    { title: 'By trajectory', rows: rows(s.byTrajectory) },
    { title: 'Task', rows: [cellRow('TOTAL (S_t)', s.overall), cellRow('non-LLM subscore', s.nonLlm)] },
  ];
}
