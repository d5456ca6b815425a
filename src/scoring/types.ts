import type { Json } from '../json';
import type { Method } from '../tasks/dag-schema';

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
