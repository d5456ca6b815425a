import { config } from '../config';
import { InvalidInputError } from '../errors';
import { createAgent } from '../agents/factory';
import { checkAgentModel, resolveModel } from '../agents/models';
import { loadRunnableTask } from '../tasks/load';
import { connectClient } from '../temporal/connection';
import { startWorker } from '../worker/worker';
import { RolloutInputSchema, rolloutWorkflowId, type RolloutInput, type RolloutResult } from '../model/rollout';
import { printRolloutResult } from './print-result';
import { temporalTarget } from './temporal-target';
import { watchRollout } from './watch-rollout';
import { resultRidingRestarts } from './follow';
import { dockerAnswers, envImageMap, imageMapFlags, preflightTask } from './preflight';
import { rolloutWorkflow } from '../workflows/rollout';

export interface RunOptions {
  task: string;
  agent: string;
  model: string;
  repeat: number;
  sweep?: string;
  /** unset: the task's default (EvalPlan.defaultParallelism) */
  parallelism?: number;
  budget: number;
  idle: number;
  judge: boolean;
  worker: boolean;
  json?: boolean;
  /** `--image-map from=to` flags */
  imageMap?: string[];
  skipPreflight?: boolean;
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/** Start one rollout, show its progress, print its score table. Returns the process exit code. */
export async function runRollout(o: RunOptions): Promise<number> {
  // every problem of the task and the flags before anything starts (no Temporal call, no run folder)
  const loaded = { task: loadRunnableTask(o.task) };
  checkModelFlag(o.agent, o.model);
  const imageMap = imageMapFlags(o.imageMap);
  // the stack's images before anything starts: seconds, not minutes into provisioning
  if (!o.skipPreflight) {
    if (o.worker || (await dockerAnswers())) await preflightTask(loaded.task, { ...envImageMap(), ...imageMap });
    else process.stderr.write('no Docker on this host: the image preflight runs on the worker that provisions\n');
  }
  const input: RolloutInput = RolloutInputSchema.parse({
    sweep: o.sweep ?? `run-${stamp()}`,
    taskDir: loaded.task.dir,
    taskId: loaded.task.id,
    agent: o.agent,
    model: o.model,
    repeat: o.repeat,
    budgetSeconds: o.budget,
    idleSeconds: o.idle,
    ...(Object.keys(imageMap).length ? { imageMap } : {}),
    evaluation: { parallelism: o.parallelism, judge: { enabled: o.judge, model: process.env.SAASBENCH_JUDGE_MODEL ?? 'claude-sonnet-4-5-20250929' } },
  });
  const target = await temporalTarget();
  // always: a dev server started before an upgrade lacks the attributes added since (SaasbenchCostUsd)
  const { client, connection } = await connectClient(target, { ensureSearchAttributes: true });
  const worker = o.worker ? await startWorker({ address: target.address, namespace: target.namespace }) : undefined;
  try {
    const workflowId = rolloutWorkflowId(input);
    const handle = await client.workflow.start(rolloutWorkflow, {
      taskQueue: config.sharedQueue(),
      workflowId,
      args: [input],
      memo: { input },
      staticSummary: `${input.taskId} · ${input.agent} · ${input.model} · #${input.repeat}`,
    });
    process.stderr.write(`started ${workflowId}${target.uiUrl ? `\n  watch: ${target.uiUrl}/namespaces/${target.namespace}/workflows/${encodeURIComponent(workflowId)}` : ''}\n`);
    const result = resultRidingRestarts<RolloutResult>(handle);
    await watchRollout(handle, result);
    const r = await result;
    if (o.json) process.stdout.write(JSON.stringify(r.score, null, 2) + '\n');
    else printRolloutResult(r);
    return 0;
  } finally {
    await worker?.shutdown();
    await connection.close();
  }
}

/** An agent that talks to a model needs a model of the registry, over an API it speaks. */
function checkModelFlag(agent: string, model: string): void {
  const driver = createAgent(agent);
  if (!driver.modelApis) return;
  try {
    checkAgentModel(driver, resolveModel(model));
  } catch (err) {
    throw InvalidInputError.one('command line', '--model', model === 'none' ? `${agent} needs a model: ${(err as Error).message}` : (err as Error).message);
  }
}
