import type { Json } from './json';
import type { Method } from './dag';

export const NODE_STATUSES = ['PASSED', 'FAILED', 'ERROR', 'SKIPPED_DEPENDENCY', 'SKIPPED_LLM', 'DRY_RUN'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

/** The workflow-side summary of one evaluated node (full evidence lives in the run folder). */
export interface NodeOutcome {
  nodeId: string;
  status: NodeStatus;
  score: number;
  maxScore: number;
  method: Method;
  category: string;
  subcategory: string;
  message: string;
  /** variables this node hands to its dependents */
  exports: Record<string, Json>;
  durationMs: number;
}

export interface ScoreCell {
  score: number;
  maxScore: number;
  /** 100·score/maxScore to one decimal; null when nothing counts (maxScore 0) */
  pct: number | null;
  nodes: number;
  passed: number;
  failed: number;
  skippedDependency: number;
  skippedLlm: number;
  error: number;
}

export interface TaskScore {
  /** S_t = 100·Σs/ΣM over nodes that are not SKIPPED_LLM */
  overall: ScoreCell;
  /** the same over non-judge nodes only */
  nonLlm: ScoreCell;
  /** Σ maxScore of SKIPPED_LLM nodes, removed from both sums */
  judgeDroppedMaxScore: number;
  byCategory: Record<string, ScoreCell>;
  byBackbone: Record<string, ScoreCell>;
  byTrajectory: Record<string, ScoreCell>;
  statusCounts: Partial<Record<NodeStatus, number>>;
}

/** The paper's failure taxonomy (docs/scoring.md): T1 best … T5 not runnable. */
export const TAXONOMY_LABELS = ['T1', 'T2', 'T3', 'T4', 'T5'] as const;
export type TaxonomyLabel = (typeof TAXONOMY_LABELS)[number];
