import type { EvalPlan } from '../model/rollout';
import type { Task } from '../model/task';
import { topoOrder } from '../dag/topo';

/** The DAG as the workflow needs it: structure and scoring, no primitive inputs. */
export function planOf(task: Task): EvalPlan {
  const nodes = task.dag.nodes.map((n) => ({
    id: n.id,
    prereqs: n.prereqs,
    method: n.scoring.method,
    maxScore: n.scoring.maxScore,
    category: n.scoring.category,
    subcategory: n.scoring.subcategory,
    ...(n.after?.length ? { after: n.after } : {}),
    ...(n.runLast ? { runLast: true } : {}),
  }));
  return {
    taskId: task.id,
    taskHash: task.hash,
    nodes,
    order: topoOrder(nodes),
    defaultParallelism: task.parallelSafe ? 4 : 1,
    trajectories: Object.fromEntries(Object.entries(task.dag.trajectories).map(([k, t]) => [k, t.nodeIds])),
  };
}
