import type { Method } from '../tasks/dag-schema';
import type { NodeStatus } from './types';

/** Binary chains stop at the first failure (paper §Scoring); weighted and judge chains run whole. */
export function continuesAfterFailure(method: Method): boolean {
  return method !== 'binary';
}

/** ⌊x⌋ to one decimal, tolerant of binary floating noise (2/3·3 = 1.9999999 must stay 2.0). */
export function floorTenth(x: number): number {
  return Math.floor(x * 10 + 1e-9) / 10;
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
      return statusOf(k > 0 ? floorTenth((passed / k) * r.maxScore) : 0);
    case 'llm-judge': {
      if (!r.judge || r.judge.skipped) return { status: 'SKIPPED_LLM', score: 0 };
      return statusOf(clip(r.judge.score, 0, r.maxScore));
    }
  }
}

function statusOf(score: number): { status: NodeStatus; score: number } {
  return { status: score > 0 ? 'PASSED' : 'FAILED', score };
}
