import { join } from 'node:path';
import { readJsonIfExists } from '../runs/files';
import type { Json } from '../model/json';
import type { PlanNode } from '../model/rollout';
import type { NodeOutcome } from '../model/scores';
import type { RolloutLock } from './rollout-lock';

/** What a node's scoring was pinned to: its definition hash and the primitive library's version. */
export interface ScoringVersions {
  primitives: string | null;
  nodes: Record<string, string> | null;
}

/** The last scoring of a rollout: the rollout's own evaluation, or the latest `saasbench rescore`. */
export interface Baseline {
  source: 'rollout' | 'rescore';
  versions: ScoringVersions;
  outcomes: Map<string, NodeOutcome>;
}

/** runs/<key>/rescore.json: the latest re-scoring (the next one starts from it). */
export interface RescoreRecord {
  at: string;
  /** what the re-scoring compared against */
  baseline: Baseline['source'];
  full: boolean;
  lock: { before: ScoringVersions; after: ScoringVersions };
  evaluated: { nodeId: string; why: string }[];
  reused: string[];
  outcomes: NodeOutcome[];
}

export const RESCORE_FILE = 'rescore.json';

type StoredOutcome = Partial<NodeOutcome> & { nodeId: string; status: NodeOutcome['status'] };

function outcomeOf(r: StoredOutcome): NodeOutcome {
  return {
    nodeId: r.nodeId, status: r.status, score: r.score ?? 0, maxScore: r.maxScore ?? 0, method: r.method ?? 'binary', category: r.category ?? '', subcategory: r.subcategory ?? '',
    message: (r.message ?? '').slice(0, 500), exports: r.exports ?? {}, durationMs: r.durationMs ?? 0,
  };
}

/** The baseline of a run folder: rescore.json when there is one, else lock.json + node_results.json. */
export function readBaseline(runDir: string, lock: RolloutLock, nodeResults: StoredOutcome[]): Baseline {
  const last = readJsonIfExists<RescoreRecord>(join(runDir, RESCORE_FILE));
  if (last) return { source: 'rescore', versions: last.lock.after, outcomes: new Map(last.outcomes.map((o) => [o.nodeId, outcomeOf(o)])) };
  return {
    source: 'rollout',
    versions: { primitives: lock.harness.primitives ?? null, nodes: lock.task.nodes ?? null },
    outcomes: new Map(nodeResults.map((o) => [o.nodeId, outcomeOf(o)])),
  };
}

const sameExports = (a: Record<string, Json>, b: Record<string, Json>) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Decides, node by node while the DAG runs, whether a node is re-evaluated or its last outcome
 * reused. Rules (docs/operations.md, "Incremental re-scoring"):
 *  - every node when `full`, when the baseline has no per-node hashes (an older lock) or when the
 *    primitive library's version differs;
 *  - a node whose definition hash differs (or that is new);
 *  - a node one of whose predecessors (prereqs and ordering-only `after`) was re-evaluated and came
 *    out with another status or other exports — its inputs changed (`runLast` nodes follow the same
 *    rule: only their declared predecessors count);
 *  - otherwise the last outcome is reused, exports included: they flow to re-run dependents as
 *    context, exactly as recorded. A reused node's side effects on the app are NOT replayed.
 * Nodes the scheduler skips (a predecessor did not pass) never reach `decide`.
 */
export class IncrementalPlan {
  readonly evaluated: { nodeId: string; why: string }[] = [];
  readonly reused: string[] = [];
  private readonly changed = new Set<string>();
  private readonly everything: string | null;

  constructor(private readonly baseline: Baseline, private readonly now: ScoringVersions, full: boolean) {
    this.everything = full
      ? 'full re-scoring asked for'
      : !baseline.versions.nodes || !baseline.versions.primitives
        ? 'the last scoring recorded no per-node hashes'
        : baseline.versions.primitives !== now.primitives
          ? 'primitive library version changed'
          : null;
  }

  /** the nodes whose definition changed (before any propagation): nothing to run when empty */
  definitionChanges(ids: string[]): string[] {
    if (this.everything) return ids;
    return ids.filter((id) => this.baseline.versions.nodes?.[id] !== this.now.nodes?.[id] || !this.baseline.outcomes.has(id));
  }

  /** the reason to re-evaluate this node now, or null to reuse its last outcome */
  decide(n: PlanNode): string | null {
    if (this.everything) return this.everything;
    if (this.baseline.versions.nodes?.[n.id] !== this.now.nodes?.[n.id]) return this.baseline.versions.nodes?.[n.id] ? 'definition changed' : 'new node';
    if (!this.baseline.outcomes.has(n.id)) return 'no earlier outcome';
    const up = [...n.prereqs, ...(n.after ?? [])].filter((p) => this.changed.has(p));
    if (up.length) return `predecessor changed: ${up.join(', ')}`;
    return null;
  }

  reuse(nodeId: string): NodeOutcome {
    this.reused.push(nodeId);
    return this.baseline.outcomes.get(nodeId)!;
  }

  evaluatedAs(o: NodeOutcome, why: string): void {
    this.evaluated.push({ nodeId: o.nodeId, why });
  }

  /**
   * Every outcome as the scheduler knows it (evaluated, reused or skipped because a prereq did not
   * pass): one with another status or other exports than last time propagates to its dependents.
   */
  observe(o: NodeOutcome): void {
    const before = this.baseline.outcomes.get(o.nodeId);
    if (!before || before.status !== o.status || !sameExports(before.exports, o.exports)) this.changed.add(o.nodeId);
  }
}
