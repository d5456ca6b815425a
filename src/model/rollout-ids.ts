/**
 * A rollout's ids, without zod: the rollout workflow imports this, and every module it imports is
 * instantiated afresh for each workflow run (src/workflows/index.ts).
 */

interface RolloutCoordinates {
  sweep: string;
  taskId: string;
  agent: string;
  model: string;
  repeat: number;
}

export function rolloutWorkflowId(i: RolloutCoordinates): string {
  return `rollout/${i.sweep}/${i.taskId}/${i.agent}/${i.model}/${i.repeat}`;
}

/** File- and Docker-safe form of the workflow id; names the run folder and labels resources. */
export function rolloutKeyOf(i: RolloutCoordinates): string {
  return [i.sweep, i.taskId, i.agent, i.model, String(i.repeat)].map((s) => s.replace(/[^A-Za-z0-9_.-]/g, '-')).join('.');
}
