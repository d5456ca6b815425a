import type { TaxonomyLabel } from './scores';

/** The leaderboard a sweep computes (src/scoring/benchmark.ts) and the reports render. */
export interface TaskCell {
  /** mean over completed repeats, percent */
  mean: number | null;
  /** each completed repeat's score, percent, in repeat order */
  repeats: (number | null)[];
  best: number | null;
}

export interface ConfigRow {
  agent: string;
  model: string;
  rank: number;
  /** benchmark score = Pass@1: mean over tasks of the mean over repeats of S_t */
  score: number | null;
  /** the same over non-judge nodes only */
  nonLlm: number | null;
  /** mean over tasks of the best repeat (Best@k, k = repeats) */
  bestOfK: number | null;
  /** mean over tasks of the sample standard deviation across repeats (0 with one repeat) */
  repeatStdev: number | null;
  /** tasks with at least one completed rollout */
  tasks: number;
  /** the sweep's declared tasks (every task the sweep file names); `tasks` of them were scored */
  declaredTasks?: number;
  /** declared tasks without a scored rollout for this configuration (failed, not run, never started) */
  missingTasks?: string[];
  /** some declared task has no scored rollout: ranked after the complete rows (not in the as-paper view) */
  incomplete?: boolean;
  rollouts: number;
  completed: number;
  /** rollouts without a score: failed, cancelled, terminated or timed out */
  unscored: number;
  judgeDroppedMaxScore: number;
  byTask: Record<string, TaskCell>;
  byBackbone: Record<string, number | null>;
  byCategory: Record<string, number | null>;
  byTrajectory: Record<string, number | null>;
  taxonomy: Record<TaxonomyLabel | 'none', number>;
  /**
   * Failure taxonomy per capability unit (task × this configuration, over its repeats): one label
   * per declared task, from the mean per-backbone percentages of its scored repeats; `none` = no
   * backbone scored, `notRun` = no scored rollout (docs/scoring.md).
   */
  units?: Record<TaxonomyLabel | 'none' | 'notRun', number>;
}

export interface BenchmarkReport {
  configs: ConfigRow[];
  tasks: string[];
  backbones: string[];
  categories: string[];
  trajectories: string[];
  rollouts: { total: number; completed: number; unscored: number };
  rule: string;
  /** the paper's view: a missing task scores 0 in score / non-LLM / Best@k, rows ranked by score alone */
  asPaper?: boolean;
}
