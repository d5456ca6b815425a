import type { NodeOutcome, ScoreCell } from '../model/scores';

function emptyCell(): ScoreCell {
  return { score: 0, maxScore: 0, pct: null, nodes: 0, passed: 0, failed: 0, skippedDependency: 0, skippedLlm: 0, error: 0 };
}

export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f + (x >= 0 ? 1e-9 : -1e-9)) / f;
}

/**
 * One aggregate under the paper's rule: SKIPPED_LLM leaves numerator AND denominator; every other
 * status keeps its maxScore in the denominator (SKIPPED_DEPENDENCY and ERROR score 0).
 */
export function cellOf(outcomes: readonly NodeOutcome[]): ScoreCell {
  const c = emptyCell();
  for (const o of outcomes) {
    c.nodes++;
    if (o.status === 'SKIPPED_LLM') {
      c.skippedLlm++;
      continue;
    }
    c.score += o.score;
    c.maxScore += o.maxScore;
    if (o.status === 'PASSED') c.passed++;
    else if (o.status === 'FAILED' || o.status === 'DRY_RUN') c.failed++;
    else if (o.status === 'SKIPPED_DEPENDENCY') c.skippedDependency++;
    else if (o.status === 'ERROR') c.error++;
  }
  c.score = round(c.score, 3);
  c.maxScore = round(c.maxScore, 3);
  c.pct = c.maxScore > 0 ? round((100 * c.score) / c.maxScore, 1) : null;
  return c;
}

export function groupBy<T>(items: readonly T[], key: (t: T) => string | string[]): Record<string, T[]> {
  const out: Record<string, T[]> = {};
  for (const it of items) {
    const ks = key(it);
    for (const k of Array.isArray(ks) ? ks : [ks]) (out[k] ??= []).push(it);
  }
  return out;
}

export function cellsBy<T extends NodeOutcome>(items: readonly T[], key: (t: T) => string | string[]): Record<string, ScoreCell> {
  const groups = groupBy(items, key);
  return Object.fromEntries(Object.keys(groups).sort().map((k) => [k, cellOf(groups[k])]));
}
