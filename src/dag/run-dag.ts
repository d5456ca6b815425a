import type { Json } from '../model/json';
import type { EvalPlan, PlanNode } from '../model/rollout';
import type { NodeOutcome } from '../model/scores';
import { DagScheduler } from './scheduler';

export interface DagRun {
  /** nodes evaluated at once */
  parallelism: number;
  /** evaluate one node with the context (exports of its prereqs) the scheduler hands it */
  evaluate(node: PlanNode, context: Record<string, Json>): Promise<NodeOutcome>;
  /** every outcome as it is known: evaluated, or skipped because a prereq did not pass */
  onOutcome?(o: NodeOutcome, finished: number): void;
  /** after each round of starts: the nodes running now */
  onRunning?(running: string[]): void;
  /** the error for a scheduler that cannot make progress (a bug); the workflow makes it a non-retryable failure */
  stalled(message: string): Error;
}

/**
 * The one DAG evaluation loop, shared by the rollout workflow (evaluate = the evaluateNode
 * activity) and local evaluation (evaluate = the chain runner in-process). Pure and deterministic:
 * it runs inside workflow code, so the order in which it starts nodes and waits is the workflow's
 * command sequence and must not change without a replay check (test/unit/replay.test.ts).
 */
export async function runDag(plan: EvalPlan, run: DagRun): Promise<NodeOutcome[]> {
  const sched = new DagScheduler(plan);
  const running = new Map<string, Promise<void>>();
  const record = (o: NodeOutcome) => {
    sched.complete(o);
    run.onOutcome?.(o, sched.finished);
  };
  while (!sched.done()) {
    for (const o of sched.takeBlocked()) run.onOutcome?.(o, sched.finished);
    for (const n of sched.takeReady(run.parallelism - running.size)) {
      const p = run
        .evaluate(n, sched.contextFor(n.id))
        .then(record)
        .finally(() => running.delete(n.id));
      running.set(n.id, p);
    }
    run.onRunning?.([...running.keys()]);
    if (running.size === 0) {
      if (sched.done()) break;
      throw run.stalled('DAG scheduler stalled: no node can run (this is a bug)');
    }
    await Promise.race(running.values());
  }
  return sched.results();
}
