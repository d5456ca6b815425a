import {
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Duration, RetryPolicy } from '@temporalio/common';
import type * as activities from '../activities';
import { NON_RETRYABLE } from '../errors';
import { scoreTask } from '../scoring/task-score';
import { voidScore } from '../scoring/void';
import type { NodeOutcome } from '../model/scores';
import {
  RolloutInputSchema,
  rolloutKeyOf,
  type AgentRunSummary,
  type Provisioned,
  type RolloutInput,
  type RolloutPhase,
  type RolloutProgress,
  type RolloutRef,
  type RolloutResult,
} from '../model/rollout';
import { DagScheduler } from '../dag/scheduler';
import { SA } from './search-attributes';
import { describeProgress } from './progress-text';

type Acts = typeof activities;
export const progressQuery = defineQuery<RolloutProgress>('progress');

const retry: RetryPolicy = { maximumAttempts: 3, initialInterval: '2s', backoffCoefficient: 2, nonRetryableErrorTypes: NON_RETRYABLE };

/** provision runs on the shared queue: whichever host picks it up owns the rollout from then on. */
function onShared(input: RolloutInput) {
  return proxyActivities<Acts>({ startToCloseTimeout: '45 minutes', heartbeatTimeout: `${input.heartbeatSeconds} seconds`, retry });
}

function onHost(hostQueue: string, input: RolloutInput) {
  const heartbeatTimeout: Duration = `${input.heartbeatSeconds} seconds`;
  return {
    acts: proxyActivities<Acts>({ taskQueue: hostQueue, startToCloseTimeout: '20 minutes', heartbeatTimeout, retry }),
    agent: proxyActivities<Acts>({
      taskQueue: hostQueue,
      // the budget is enforced inside the activity; the margin covers re-attach after a worker crash
      startToCloseTimeout: `${Math.ceil(input.budgetSeconds + 900)} seconds`,
      heartbeatTimeout,
      retry: { ...retry, maximumAttempts: 5 },
    }),
    teardown: proxyActivities<Acts>({ taskQueue: hostQueue, startToCloseTimeout: '5 minutes', retry: { ...retry, maximumAttempts: 10 } }),
  };
}

export async function rolloutWorkflow(raw: RolloutInput): Promise<RolloutResult> {
  const parsed = RolloutInputSchema.safeParse(raw);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `rollout input: ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n');
    throw ApplicationFailure.nonRetryable(msg, 'InvalidInputError');
  }
  const input = parsed.data;
  const { workflowId } = workflowInfo();
  const rolloutKey = rolloutKeyOf(input);
  const started = Date.now();
  const progress: RolloutProgress = {
    phase: 'queued', nodesTotal: 0, nodesDone: 0, nodesRunning: [], statusCounts: {}, scorePct: null, startedAt: started, phaseStartedAt: started,
  };
  setHandler(progressQuery, () => progress);
  upsertSearchAttributes([
    { key: SA.task, value: input.taskId },
    { key: SA.agent, value: input.agent },
    { key: SA.model, value: input.model },
    { key: SA.sweep, value: input.sweep },
  ]);
  const enter = (phase: RolloutPhase) => {
    progress.phase = phase;
    progress.phaseStartedAt = Date.now();
    upsertSearchAttributes([{ key: SA.phase, value: phase }]);
    setCurrentDetails(describeProgress(input, progress));
  };

  enter('provisioning');
  const prov: Provisioned = await onShared(input).provision({ rolloutKey, workflowId, taskDir: input.taskDir, taskId: input.taskId, ...(input.imageMap ? { imageMap: input.imageMap } : {}) });
  Object.assign(progress, { nodesTotal: prov.plan.nodes.length, runDir: prov.runDir, host: prov.host });
  const host = onHost(prov.hostQueue, input);
  const ref: RolloutRef = { rolloutKey, workflowId, taskDir: input.taskDir, taskHash: prov.plan.taskHash, runDir: prov.runDir, stack: prov.stack };
  try {
    enter('preparing');
    await host.acts.prepareWorkspace({ ref, agent: input.agent, model: input.model });

    enter('agent');
    const agentStarted = Date.now();
    const agentRun = await runAgentOrRecord(host.agent, ref, input);
    const agentMs = Date.now() - agentStarted;

    enter('evaluating');
    const evalStarted = Date.now();
    const outcomes = await evaluateDag(prov, ref, input, host.acts, progress, () => setCurrentDetails(describeProgress(input, progress)));
    const evaluationMs = Date.now() - evalStarted;

    enter('scoring');
    const computed = scoreTask(outcomes, prov.plan.trajectories);
    const integrity = agentRun.integrity;
    const voided = integrity?.verdict === 'voided' ? { reason: `evaluator access in the transcript (${integrity.evaluatorHits} hit(s))`, original: computed.overall } : undefined;
    const score = voided ? voidScore(computed) : computed;
    progress.scorePct = score.overall.pct;
    upsertSearchAttributes([{ key: SA.score, value: score.overall.pct ?? 0 }]);

    const result: RolloutResult = {
      workflowId, rolloutKey, taskId: input.taskId, agent: input.agent, model: input.model, repeat: input.repeat, sweep: input.sweep,
      runDir: prov.runDir, host: prov.host, agentRun, score, outcomes, voided,
      timings: { provisionMs: prov.provisionMs, agentMs, evaluationMs, totalMs: Date.now() - started },
    };
    enter('persisting');
    await host.acts.persistResults({ ref, result, input });
    enter('done');
    return result;
  } catch (err) {
    enter('failed');
    throw err;
  } finally {
    // Always, even when the workflow is cancelled: containers of a dead rollout are a leak.
    await CancellationScope.nonCancellable(() => host.teardown.teardown({ rolloutKey }));
  }
}

/** An agent that could not be run at all is recorded, not fatal: the empty workspace still gets scored. */
async function runAgentOrRecord(agentActs: Acts, ref: RolloutRef, input: RolloutInput): Promise<AgentRunSummary> {
  try {
    return await agentActs.runAgent({ ref, agent: input.agent, model: input.model, budgetSeconds: input.budgetSeconds, idleSeconds: input.idleSeconds, retry: input.agentRetry });
  } catch (err) {
    const e = err as Error & { cause?: Error };
    // a cancelled rollout stops here (teardown follows); a misconfigured agent is the user's to fix
    if (isCancellation(err) || e.cause?.name === 'AgentConfigError') throw err;
    return { agent: input.agent, model: input.model, exitReason: 'infrastructure', exitCode: null, attempts: 0, agentSeconds: 0, message: e.cause?.message ?? e.message, history: [] };
  }
}

async function evaluateDag(
  prov: Provisioned,
  ref: RolloutRef,
  input: RolloutInput,
  acts: Acts,
  progress: RolloutProgress,
  onChange: () => void,
): Promise<NodeOutcome[]> {
  const sched = new DagScheduler(prov.plan);
  // unset: the task's default — one node at a time unless it declares parallel evaluation safe
  const parallelism = input.evaluation.parallelism ?? prov.plan.defaultParallelism ?? 1;
  const running = new Map<string, Promise<void>>();
  // workflow time (deterministic on replay): one instant for the whole evaluation's date variables
  const clockAt = new Date().toISOString();
  const record = (o: NodeOutcome) => {
    sched.complete(o);
    progress.nodesDone = sched.finished;
    progress.statusCounts[o.status] = (progress.statusCounts[o.status] ?? 0) + 1;
  };
  while (!sched.done()) {
    sched.takeBlocked().forEach((o) => {
      progress.nodesDone = sched.finished;
      progress.statusCounts[o.status] = (progress.statusCounts[o.status] ?? 0) + 1;
    });
    for (const n of sched.takeReady(parallelism - running.size)) {
      const p = acts
        .evaluateNode({ ref, nodeId: n.id, vars: sched.contextFor(n.id), judge: input.evaluation.judge, clockAt })
        .then(record)
        .finally(() => running.delete(n.id));
      running.set(n.id, p);
    }
    progress.nodesRunning = [...running.keys()];
    onChange();
    if (running.size === 0) {
      if (sched.done()) break;
      throw ApplicationFailure.nonRetryable('DAG scheduler stalled: no node can run (this is a bug)', 'SchedulerBug');
    }
    await Promise.race(running.values());
  }
  return sched.results();
}
