import type { Json } from '../model/json';
import type { NodeOutcome } from '../model/scores';
import { ancestorsInOrder } from './topo';
import type { EvalPlan, PlanNode } from '../model/rollout';

/**
 * Decides, from outcomes so far, which nodes may run, which must be skipped, and what context a
 * node inherits. Pure and deterministic: it lives in workflow code.
 */
export class DagScheduler {
  private readonly byId: Map<string, PlanNode>;
  private readonly outcomes = new Map<string, NodeOutcome>();
  private readonly started = new Set<string>();

  constructor(private readonly plan: EvalPlan) {
    this.byId = new Map(plan.nodes.map((n) => [n.id, n]));
  }

  /** Nodes with a resolved prereq that did not pass: they are SKIPPED_DEPENDENCY without running. */
  takeBlocked(): NodeOutcome[] {
    const out: NodeOutcome[] = [];
    let changed = true;
    while (changed) {
      changed = false;
      for (const id of this.plan.order) {
        if (this.started.has(id)) continue;
        const n = this.byId.get(id)!;
        // a prereq that is not a node (published DAGs have a few) never passes
        const failed = n.prereqs.filter((p) => {
          const o = this.outcomes.get(p);
          return (o !== undefined && o.status !== 'PASSED') || !this.byId.has(p);
        });
        if (failed.length === 0) continue;
        const o = skippedOutcome(n, failed);
        this.started.add(id);
        this.outcomes.set(id, o);
        out.push(o);
        changed = true;
      }
    }
    return out;
  }

  /**
   * Up to `limit` nodes whose prereqs all PASSED and whose `after` nodes have finished (any
   * status), in topological order; `runLast` nodes wait until every other node has finished.
   */
  takeReady(limit: number): PlanNode[] {
    const out: PlanNode[] = [];
    const othersDone = this.plan.nodes.every((n) => n.runLast || this.outcomes.has(n.id));
    for (const id of this.plan.order) {
      if (out.length >= limit) break;
      if (this.started.has(id)) continue;
      const n = this.byId.get(id)!;
      if (n.runLast && !othersDone) continue;
      if (!(n.after ?? []).every((a) => this.outcomes.has(a))) continue;
      if (n.prereqs.every((p) => this.outcomes.get(p)?.status === 'PASSED')) {
        this.started.add(id);
        out.push(n);
      }
    }
    return out;
  }

  complete(o: NodeOutcome): void {
    this.outcomes.set(o.nodeId, o);
  }

  /**
   * Captures of the `after` nodes (in order), then the exports of every transitive prereq merged
   * in topological order: later wins, and a prereq's value wins over an `after` node's.
   */
  contextFor(id: string): Record<string, Json> {
    const vars: Record<string, Json> = {};
    for (const a of this.byId.get(id)?.after ?? []) Object.assign(vars, this.outcomes.get(a)?.exports ?? {});
    for (const a of ancestorsInOrder(id, this.plan.nodes, this.plan.order)) Object.assign(vars, this.outcomes.get(a)?.exports ?? {});
    return vars;
  }

  done(): boolean {
    return this.outcomes.size === this.plan.nodes.length;
  }

  results(): NodeOutcome[] {
    return this.plan.order.map((id) => this.outcomes.get(id)).filter((o): o is NodeOutcome => !!o);
  }

  get size(): number {
    return this.plan.nodes.length;
  }

  get finished(): number {
    return this.outcomes.size;
  }
}

export function skippedOutcome(n: PlanNode, failedPrereqs: string[]): NodeOutcome {
  return {
    nodeId: n.id,
    status: 'SKIPPED_DEPENDENCY',
    score: 0,
    maxScore: n.maxScore,
    method: n.method,
    category: n.category,
    subcategory: n.subcategory,
    message: `skipped: prerequisite${failedPrereqs.length > 1 ? 's' : ''} not passed (${failedPrereqs.join(', ')})`,
    exports: {},
    durationMs: 0,
  };
}
