import type { Method } from '../model/dag';
import type { NodeStatus } from '../model/scores';
import { pyRound } from './py-round';

/** Binary chains stop at the first failure (paper §Scoring); weighted and judge chains run whole. */
export function continuesAfterFailure(method: Method): boolean {
  return method !== 'binary';
}

/**
 * A weighted node's score: (passed/k)·maxScore rounded to one decimal exactly as the published
 * evaluator does (Python's round(x, 1): ties to even on the exact binary value; the paper says
 * "rounding to one decimal place"). Computed in the same order as there: passed/k first.
 */
export function weightedScore(passed: number, k: number, maxScore: number): number {
  return k > 0 ? pyRound((passed / k) * maxScore, 1) : 0;
}

export function clip(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

export interface ChainResult {
  method: Method;
  maxScore: number;
  /** primitives in the chain (k) */
  chainLength: number;
  /** pass/fail of each primitive that ran, in order */
  passes: boolean[];
  /** an unhandled exception escaped the chain */
  errored?: boolean;
  /** llm-judge only: the judge's verdict, or that no verdict could be had */
  judge?: { skipped: true } | { skipped: false; score: number };
}

export function scoreNode(r: ChainResult): { status: NodeStatus; score: number } {
  if (r.errored) return { status: 'ERROR', score: 0 };
  const k = r.chainLength;
  const passed = r.passes.filter(Boolean).length;
  switch (r.method) {
    case 'binary': {
      const all = k > 0 && r.passes.length === k && passed === k;
      return statusOf(all ? r.maxScore : 0);
    }
    case 'weighted':
      return statusOf(weightedScore(passed, k, r.maxScore));
    case 'llm-judge': {
      if (!r.judge || r.judge.skipped) return { status: 'SKIPPED_LLM', score: 0 };
      return statusOf(clip(r.judge.score, 0, r.maxScore));
    }
  }
}

function statusOf(score: number): { status: NodeStatus; score: number } {
  return { status: score > 0 ? 'PASSED' : 'FAILED', score };
}
