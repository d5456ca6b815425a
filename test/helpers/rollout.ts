import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { config } from '../../src/config';
import { loadAnyTask } from '../../src/tasks/load';
import { RolloutInputSchema, rolloutWorkflowId, type RolloutInput, type RolloutResult } from '../../src/model/rollout';
import { rolloutWorkflow } from '../../src/workflows/rollout';

export function rolloutInput(taskDir: string, agent: string, over: Partial<RolloutInput> = {}): RolloutInput {
  const { task, issues } = loadAnyTask(taskDir);
  if (!task || issues.length) throw new Error(`fixture task invalid: ${JSON.stringify(issues)}`);
  return RolloutInputSchema.parse({ sweep: `t${Date.now().toString(36)}`, taskDir: task.dir, taskId: task.id, agent, evaluation: { parallelism: 4, judge: { enabled: false, model: 'x' } }, ...over });
}

export async function runRolloutWorkflow(env: TestWorkflowEnvironment, input: RolloutInput): Promise<RolloutResult> {
  return env.client.workflow.execute(rolloutWorkflow, { taskQueue: config.sharedQueue(), workflowId: rolloutWorkflowId(input), args: [input] });
}

export function statusesOf(r: RolloutResult): Record<string, string> {
  return Object.fromEntries(r.outcomes.map((o) => [o.nodeId, o.status]));
}
