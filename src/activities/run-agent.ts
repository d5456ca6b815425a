import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import { createAgent } from '../agents/factory';
import { superviseAgent, type SupervisionState } from '../agents/supervisor';
import { rolloutLogger } from '../log';
import type { AgentRunSummary, RolloutInput, RolloutRef } from '../workflows/contracts';
import { taskFor } from './task-cache';

export interface RunAgentInput {
  ref: RolloutRef;
  agent: string;
  model: string;
  budgetSeconds: number;
  idleSeconds: number;
  retry: RolloutInput['agentRetry'];
}

/** Start (or re-attach to) the agent and supervise it with heartbeats until it is done. */
export async function runAgent(i: RunAgentInput): Promise<AgentRunSummary> {
  const actx = Context.current();
  const task = taskFor(i.ref.taskDir, i.ref.taskHash);
  const driver = createAgent(i.agent);
  const log = rolloutLogger(i.ref.rolloutKey, { activity: 'runAgent', agent: i.agent, attempt: actx.info.attempt });
  const resumeFrom = actx.info.heartbeatDetails as SupervisionState | undefined;
  return superviseAgent(
    driver,
    {
      rolloutKey: i.ref.rolloutKey,
      task,
      stack: i.ref.stack,
      container: i.ref.stack.services[task.environment.appService].container,
      workspace: task.environment.workspace,
      model: i.model,
      runDir: i.ref.runDir,
      prompt: readFileSync(join(i.ref.runDir, 'prompt.md'), 'utf8'),
      log,
    },
    {
      budgetSeconds: i.budgetSeconds,
      idleSeconds: i.idleSeconds,
      transientRetries: i.retry.transientRetries,
      transientBackoffSeconds: i.retry.backoffSeconds,
      onLostProcess: i.retry.onLostProcess,
      resumeFrom,
      heartbeat: (s) => actx.heartbeat(s),
      sleep: (ms) => actx.sleep(ms),
    },
  );
}
