import type { TaxonomyLabel } from '../model/scores';
import { BACKBONES, type Backbone } from './backbone';

/**
 * The paper's failure taxonomy, one label per rollout, decided from its per-backbone scores
 * (percent within each backbone, the task-score rule). Pure: workflow code uses it.
 *
 * Rules, applied in order (first match wins); `weak` and `strong` are thresholds in percent
 * (defaults 50 and 80). Backbones the task has no scored node in are left out.
 *
 *   T5  Deploy < weak — the app was never reliably runnable. (A task without Deploy nodes: every
 *       present backbone < weak.)
 *   T4  Deploy ok, but a foundation is weak: Data < weak or AuthZ < weak (schema, migrations,
 *       auth bootstrap, RBAC prerequisites), so API and Logic have nothing to stand on.
 *   T1  every present backbone >= strong — disciplined all the way up.
 *   T2  exactly one backbone < strong, the rest strong — one dominant bottleneck.
 *   T3  otherwise: foundations in place, two or more backbones (usually Logic, API, Quality)
 *       incomplete — business semantics missing.
 *
 * docs/scoring.md explains the choice of thresholds.
 */

export interface TaxonomyThresholds {
  /** below this a backbone is broken (T5 / T4 gates) */
  weak: number;
  /** at or above this a backbone is solid (T1 / T2) */
  strong: number;
}
export const DEFAULT_THRESHOLDS: TaxonomyThresholds = { weak: 50, strong: 80 };

export const TAXONOMY_MEANING: Record<TaxonomyLabel, string> = {
  T1: 'disciplined: every backbone strong',
  T2: 'one dominant bottleneck',
  T3: 'foundations work, business semantics incomplete',
  T4: 'reachable, but data/auth foundations weak',
  T5: 'never reliably runnable',
};

export interface TaxonomyVerdict {
  /** null when no backbone has a score (e.g. only judge nodes, judge disabled) */
  label: TaxonomyLabel | null;
  reason: string;
}

const fmt = (x: number) => String(Math.round(x * 10) / 10);

export function classifyRollout(backbonePct: Partial<Record<string, number | null>>, th: TaxonomyThresholds = DEFAULT_THRESHOLDS): TaxonomyVerdict {
  const present = BACKBONES.filter((b) => typeof backbonePct[b] === 'number') as Backbone[];
  const pct = (b: Backbone) => backbonePct[b] as number;
  if (present.length === 0) return { label: null, reason: 'no backbone has a score' };

  if (present.includes('Deploy')) {
    if (pct('Deploy') < th.weak) return { label: 'T5', reason: `Deploy ${fmt(pct('Deploy'))} < ${th.weak}` };
  } else if (present.every((b) => pct(b) < th.weak)) {
    return { label: 'T5', reason: `no Deploy nodes; every backbone < ${th.weak}` };
  }
  const weakFoundations = (['Data', 'AuthZ'] as const).filter((b) => present.includes(b) && pct(b) < th.weak);
  if (weakFoundations.length) return { label: 'T4', reason: weakFoundations.map((b) => `${b} ${fmt(pct(b))} < ${th.weak}`).join(', ') };

  const notStrong = present.filter((b) => pct(b) < th.strong);
  if (notStrong.length === 0) return { label: 'T1', reason: `every backbone >= ${th.strong}` };
  const list = notStrong.map((b) => `${b} ${fmt(pct(b))}`).join(', ');
  if (notStrong.length === 1) return { label: 'T2', reason: `only ${list} < ${th.strong}` };
  return { label: 'T3', reason: `foundations ok; ${list} < ${th.strong}` };
}
