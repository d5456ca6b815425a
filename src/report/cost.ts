/**
 * Cost columns of the sweep reports: per (agent, model), the gateway-metered cost of its rollouts
 * (src/agents/metering.ts, RolloutSummary.costUsd), per rollout and per score point. Shown only
 * when some rollout was metered (oracle and noop sweeps have no model calls).
 */
import type { BenchmarkReport } from '../model/benchmark';
import type { RolloutSummary, SweepResult } from '../model/sweep';
import { fmtUsd } from '../model/cost';

export interface ConfigCost {
  /** sum over the priced rollouts */
  totalUsd: number | null;
  /** rollouts with a known cost */
  priced: number;
  /** rollouts that ran through the gateway but whose cost is unknown (no price, say) */
  unpriced: number;
  /** totalUsd / priced */
  perRolloutUsd: number | null;
  /** perRolloutUsd / the configuration's benchmark score (percentage points): USD per score point */
  perPointUsd: number | null;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
export const configKey = (c: { agent: string; model: string }) => `${c.agent}\u0000${c.model}`;

/** true when some rollout carries a metered cost record */
export function hasCost(rs: RolloutSummary[]): boolean {
  return rs.some((r) => r.costUsd !== undefined);
}

export function configCosts(rs: RolloutSummary[], b: BenchmarkReport): Map<string, ConfigCost> {
  const out = new Map<string, ConfigCost>();
  for (const c of b.configs) {
    const mine = rs.filter((r) => r.agent === c.agent && r.model === c.model && r.costUsd !== undefined);
    const priced = mine.filter((r) => typeof r.costUsd === 'number');
    const total = priced.length ? round6(priced.reduce((a, r) => a + (r.costUsd as number), 0)) : null;
    const per = total === null ? null : round6(total / priced.length);
    out.set(configKey(c), { totalUsd: total, priced: priced.length, unpriced: mine.length - priced.length, perRolloutUsd: per, perPointUsd: per !== null && c.score ? round6(per / c.score) : null });
  }
  return out;
}

/** Total metered cost of a sweep's rollouts (null when none was priced). */
export function sweepCostUsd(rs: RolloutSummary[]): number | null {
  const priced = rs.filter((r) => typeof r.costUsd === 'number');
  return priced.length ? round6(priced.reduce((a, r) => a + (r.costUsd as number), 0)) : null;
}

/** One line on spending and the cap, or null when nothing was metered and no cap was set. */
export function costLine(r: Pick<SweepResult, 'rollouts' | 'input' | 'costCap'>): string | null {
  const total = sweepCostUsd(r.rollouts);
  const cap = r.costCap ?? (r.input.costCapUsd !== undefined ? { capUsd: r.input.costCapUsd, spentUsd: total ?? 0, reached: false, notStarted: 0 } : undefined);
  if (!hasCost(r.rollouts) && !cap) return null;
  const unpriced = r.rollouts.filter((x) => x.costUsd === null).length;
  const parts = [`metered cost ${fmtUsd(total)}${unpriced ? ` (+ ${unpriced} rollout(s) of unknown cost)` : ''}`];
  if (cap) parts.push(cap.reached ? `cost cap ${fmtUsd(cap.capUsd)} reached after ${fmtUsd(cap.spentUsd)}: ${cap.notStarted} rollout(s) not started` : `cost cap ${fmtUsd(cap.capUsd)} not reached`);
  return parts.join(' · ');
}

export const COST_HEADER = ['cost/rollout', '$/point'];
export function costCells(costs: Map<string, ConfigCost>, c: { agent: string; model: string }): (string | null)[] {
  const x = costs.get(configKey(c));
  if (!x) return [null, null];
  return [x.perRolloutUsd === null ? null : `${fmtUsd(x.perRolloutUsd)}${x.unpriced ? '*' : ''}`, x.perPointUsd === null ? null : fmtUsd(x.perPointUsd)];
}
