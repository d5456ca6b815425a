import { readFileSync } from 'node:fs';
import type { DagNode } from '../../model/dag';

type Config = Record<string, unknown>;

/**
 * scoring_config.json is optional metadata (its schema differs per task and is stale in some):
 * read it when present, else the DAG's embedded `scoring_config`.
 */
export function readScoringConfig(scoringFile: string | null, rawDag: Record<string, unknown> | undefined, notes: string[]): Config | undefined {
  if (scoringFile) {
    try {
      return JSON.parse(readFileSync(scoringFile, 'utf8')) as Config;
    } catch (e) {
      notes.push(`scoring_config.json is not valid JSON (${(e as Error).message}); ignored`);
      return undefined;
    }
  }
  const embedded = rawDag?.scoring_config;
  if (embedded && typeof embedded === 'object') {
    notes.push("scoring_config.json absent: trajectories read from the DAG's embedded scoring_config");
    return embedded as Config;
  }
  return undefined;
}

/**
 * Trajectories of a scoring config: `node_ids` or `nodes` lists; `"remaining"` = the nodes of no
 * other trajectory; non-object entries (rjhcjrst's `coverage_percent`) are skipped; ids not in the
 * DAG are dropped with a note (mnmtxiwb's config describes another DAG).
 */
export function trajectoriesOf(config: Config | undefined, allIds: ReadonlySet<string>, dagName: string, notes: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const raw = config?.trajectories;
  if (!raw || typeof raw !== 'object') return out;
  const remaining: string[] = [];
  for (const [name, t] of Object.entries(raw as Record<string, unknown>)) {
    if (!t || typeof t !== 'object') {
      notes.push(`scoring_config trajectories.${name} is not a trajectory (${JSON.stringify(t)}); ignored`);
      continue;
    }
    const ids = (t as { node_ids?: unknown }).node_ids ?? (t as { nodes?: unknown }).nodes;
    if (ids === 'remaining') {
      remaining.push(name);
      continue;
    }
    if (!Array.isArray(ids)) {
      notes.push(`scoring_config trajectories.${name} has no node list; ignored`);
      continue;
    }
    const list = ids.filter((x): x is string => typeof x === 'string');
    const unknown = list.filter((x) => !allIds.has(x));
    if (unknown.length) notes.push(`scoring_config trajectories.${name}: ${unknown.length} of ${list.length} node ids are not in ${dagName} (stale config); dropped`);
    out[name] = list.filter((x) => allIds.has(x));
  }
  for (const name of remaining) {
    const taken = new Set(Object.values(out).flat());
    out[name] = [...allIds].filter((x) => !taken.has(x));
    notes.push(`scoring_config trajectories.${name} = "remaining": the ${out[name].length} nodes in no other trajectory`);
  }
  return out;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Notes for declared totals (config or DAG summary) that differ from the sums over the DAG's nodes. */
export function declaredTotalNotes(config: Config | undefined, rawDag: Record<string, unknown> | undefined, nodes: readonly DagNode[], trajectories: Record<string, string[]>): string[] {
  const notes: string[] = [];
  const total = round3(nodes.reduce((a, n) => a + n.scoring.maxScore, 0));
  const summary = (rawDag?.scoring_config_summary ?? {}) as Config;
  const declared: [string, unknown][] = [
    ['scoring_config.json total_maxScore', config?.total_maxScore ?? config?.total_raw_score ?? config?.total_max_score],
    ['the DAG\'s total_max_score', rawDag?.total_max_score],
    ['the DAG\'s scoring_config_summary', summary.total_maxScore ?? summary.total_max_score],
  ];
  for (const [where, v] of declared) if (typeof v === 'number' && Math.abs(v - total) > 1e-6) notes.push(`${where} declares ${v}; recomputed from the DAG: ${total} (the DAG wins)`);
  const meta = (rawDag?.meta ?? rawDag?._meta ?? {}) as Config;
  for (const declaredNodes of [meta.total_nodes, rawDag?.total_nodes]) {
    if (typeof declaredNodes === 'number' && declaredNodes !== nodes.length) notes.push(`the DAG declares ${declaredNodes} nodes; it holds ${nodes.length}`);
  }
  for (const [name, t] of Object.entries((config?.trajectories ?? {}) as Record<string, { maxScore?: unknown; total_score?: unknown }>)) {
    const want = t && typeof t === 'object' ? t.maxScore ?? t.total_score : undefined;
    const ids = trajectories[name];
    if (typeof want !== 'number' || !ids) continue;
    const got = round3(nodes.filter((n) => ids.includes(n.id)).reduce((a, n) => a + n.scoring.maxScore, 0));
    if (Math.abs(got - want) > 1e-6) notes.push(`scoring_config trajectories.${name}.maxScore is ${want}; its nodes sum to ${got} (recomputed value used)`);
  }
  return notes;
}

/**
 * The totals a published task declares about itself (its scoring config or the DAG's own summary),
 * which the paper's figures may have been summed from; the DAG's node list is what runs.
 */
export function declaredTotals(config: Config | undefined, rawDag: Record<string, unknown> | undefined): { nodes?: number; maxScore?: number } {
  const meta = (rawDag?.meta ?? rawDag?._meta ?? {}) as Config;
  const summary = (rawDag?.scoring_config_summary ?? {}) as Config;
  const num = (...xs: unknown[]) => xs.find((x): x is number => typeof x === 'number');
  const cats = config?.categories && typeof config.categories === 'object' ? Object.values(config.categories as Record<string, unknown>) : [];
  const catNodes = cats.every((c) => c && typeof c === 'object' && typeof (c as Config).node_count === 'number') && cats.length ? cats.reduce((a: number, c) => a + ((c as Config).node_count as number), 0) : undefined;
  return {
    nodes: num(meta.total_nodes, rawDag?.total_nodes, config?.total_nodes, catNodes),
    maxScore: num(config?.total_maxScore, config?.total_raw_score, config?.total_max_score, meta.total_max_score, meta.total_maxScore, meta.total_score, rawDag?.total_max_score, summary.total_maxScore, summary.total_max_score),
  };
}
