import {
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Duration, RetryPolicy } from '@temporalio/common';
import type * as activities from '../activities';
import { NON_RETRYABLE, describeFailure, failureType, isInfraFailure, rootMessage } from '../errors';
import { scoreTask } from '../scoring/task-score';
import { voidScore } from '../scoring/void';
import type { NodeOutcome } from '../model/scores';
import {
  type AgentRunSummary,
  type PlanNode,
  type Provisioned,
  type RolloutInput,
  type RolloutPhase,
  type RolloutProgress,
  type RolloutRef,
  type RolloutResult,
} from '../model/rollout';
import { rolloutKeyOf } from '../model/rollout-ids';
import { runDag } from '../dag/run-dag';
import { SA } from './search-attributes';
import { describeProgress } from './progress-text';
import { agentPhase, type AgentPhaseState } from './host-move';

type Acts = typeof activities;
export const PREPARE_IN_PROVISION_PATCH = 'saasbench-prepare-in-provision';
export const TEARDOWN_BESIDE_PERSIST_PATCH = 'saasbench-teardown-beside-persist';
export const VALIDATE_IN_ACTIVITY_PATCH = 'saasbench-validate-in-activity';
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
      // a retry nobody picks up means the host is gone: the workflow moves the rollout (host-move.ts)
      scheduleToStartTimeout: `${input.hostLossSeconds} seconds`,
      heartbeatTimeout,
      retry: { ...retry, maximumAttempts: 5 },
    }),
    teardown: proxyActivities<Acts>({ taskQueue: hostQueue, startToCloseTimeout: '5 minutes', retry: { ...retry, maximumAttempts: 10 } }),
  };
}

export async function rolloutWorkflow(raw: RolloutInput): Promise<RolloutResult> {
  // Newer histories ask for every patch of the first workflow task BEFORE the input check: its local
  // activity may end that task (a workflow task boundary after its marker), and a patch asked for
  // after such a boundary is not seen on replay (the SDK knows a task's patches from its own events)
  const validateInActivity = patched(VALIDATE_IN_ACTIVITY_PATCH);
  const prepareFirst = validateInActivity ? patched(PREPARE_IN_PROVISION_PATCH) : undefined;
  const input = await checkedInput(raw, validateInActivity);
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
  if (input.fromSnapshot) upsertSearchAttributes([{ key: SA.parent, value: input.fromSnapshot.workflowId }]);
  const enter = (phase: RolloutPhase) => {
    progress.phase = phase;
    progress.phaseStartedAt = Date.now();
    upsertSearchAttributes([{ key: SA.phase, value: phase }]);
    setCurrentDetails(describeProgress(input, progress));
  };

  enter('provisioning');
  // newer workflows: provision also prepares the workspace, and teardown runs beside persistResults
  // (two workflow round trips and ~0.2 s less per rollout: bench/sweep-overhead.ts); recorded
  // histories replay the old sequence
  const prepareInProvision = prepareFirst ?? patched(PREPARE_IN_PROVISION_PATCH);
  const provisionInput = { rolloutKey, workflowId, taskDir: input.taskDir, taskId: input.taskId, ...(input.imageMap ? { imageMap: input.imageMap } : {}), ...(prepareInProvision ? { prepare: true } : {}) };
  let prov: Provisioned = await onShared(input).provision(provisionInput);
  Object.assign(progress, { nodesTotal: prov.plan.nodes.length, runDir: prov.runDir, host: prov.host });
  let host = onHost(prov.hostQueue, input);
  let ref: RolloutRef = { rolloutKey, workflowId, taskDir: input.taskDir, taskHash: prov.plan.taskHash, runDir: prov.runDir, stack: prov.stack };
  const moved: AgentPhaseState = { prov, ref, host, moves: [] };
  let tornDown: Promise<unknown> | undefined;
  const teardown = () => CancellationScope.nonCancellable(() => host.teardown.teardown({ rolloutKey }));
  try {
    if (!prepareInProvision) {
      enter('preparing');
      await host.acts.prepareWorkspace({ ref, agent: input.agent, model: input.model });
    }

    enter('agent');
    const agentStarted = Date.now();
    const agentRun = await runAgentOrRecord(input, () =>
      agentPhase(moved, {
        input, shared: onShared(input), onHost: (q) => onHost(q, input), progress, provisionInput,
        onMove: (m) => {
          ({ prov, ref, host } = m);
          Object.assign(progress, { runDir: prov.runDir, host: prov.host, moves: m.moves });
          setCurrentDetails(describeProgress(input, progress));
        },
      }),
    );
    if (agentRun.governor) progress.governor = agentRun.governor;
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
    // the gateway-metered cost rides in the same upsert (one command: recorded histories replay unchanged)
    const costUsd = agentRun.gateway?.costUsd;
    upsertSearchAttributes([{ key: SA.score, value: score.overall.pct ?? 0 }, ...(typeof costUsd === 'number' ? [{ key: SA.costUsd, value: costUsd }] : [])]);

    const result: RolloutResult = {
      workflowId, rolloutKey, taskId: input.taskId, agent: input.agent, model: input.model, repeat: input.repeat, sweep: input.sweep,
      runDir: prov.runDir, host: prov.host, agentRun, score, outcomes, voided,
      timings: { provisionMs: prov.provisionMs, agentMs, evaluationMs, totalMs: Date.now() - started },
      ...(moved.moves.length ? { moves: moved.moves } : {}),
      ...(input.fromSnapshot ? { parent: { workflowId: input.fromSnapshot.workflowId, rolloutKey: input.fromSnapshot.rolloutKey, snapshot: `${input.fromSnapshot.rolloutKey}/${String(input.fromSnapshot.seq).padStart(4, '0')}`, ...(input.fromSnapshot.runDir ? { runDir: input.fromSnapshot.runDir } : {}) } } : {}),
    };
    enter('persisting');
    // the stack is not needed any more: the report is written from the result and the run folder
    if (patched(TEARDOWN_BESIDE_PERSIST_PATCH)) {
      tornDown = teardown();
      await Promise.all([host.acts.persistResults({ ref, result, input }), tornDown]);
    } else await host.acts.persistResults({ ref, result, input });
    enter('done');
    return result;
  } catch (err) {
    enter('failed');
    throw err;
  } finally {
    // Always, even when the workflow is cancelled: containers of a dead rollout are a leak.
    // The phase shows in the progress query only: a search-attribute upsert here would add a
    // command that recorded histories do not have (test/unit/replay.test.ts).
    const final = progress.phase;
    progress.phase = 'teardown';
    progress.phaseStartedAt = Date.now();
    setCurrentDetails(describeProgress(input, progress));
    await (tornDown ?? teardown());
    progress.phase = final;
    setCurrentDetails(describeProgress(input, progress));
  }
}

/**
 * The input checked and defaulted by a local activity: zod and the schemas are built once in the
 * worker, not in every workflow run (src/workflows/index.ts). Histories recorded before the
 * activity existed check it here, with the same words: the module is required only then.
 */
async function checkedInput(raw: RolloutInput, inActivity: boolean): Promise<RolloutInput> {
  try {
    if (inActivity) {
      const local = proxyLocalActivities<Acts>({ startToCloseTimeout: '1 minute', retry: { ...retry, initialInterval: '1s' } });
      return await local.validateRolloutInput(raw);
    }
    return (require('../rollout-input') as typeof import('../rollout-input')).checkRolloutInput(raw);
  } catch (err) {
    if (failureType(err) === 'InvalidInputError') throw ApplicationFailure.nonRetryable(rootMessage(err), 'InvalidInputError');
    throw err;
  }
}

/**
 * An agent that crashed after its retries is recorded, not fatal: the workspace it left is scored.
 * A misconfigured agent (no API key on this worker, unknown model) or worker (rate limits but no
 * governor target) never ran: scoring its empty workspace would put a 0 in the averages, so the
 * rollout FAILS with the reason instead.
 */
async function runAgentOrRecord(input: RolloutInput, run: () => Promise<AgentRunSummary>): Promise<AgentRunSummary> {
  try {
    return await run();
  } catch (err) {
    if (isCancellation(err)) throw err; // teardown follows
    // across Temporal the thrown class is the ApplicationFailure's `.type`, not the cause's `.name`
    const type = failureType(err);
    if (type === 'AgentConfigError' || type === 'GovernorConfigError') throw ApplicationFailure.create({ message: rootMessage(err), type, nonRetryable: true });
    return { agent: input.agent, model: input.model, exitReason: 'infrastructure', exitCode: null, attempts: 0, agentSeconds: 0, message: `${type}: ${rootMessage(err)}`, history: [] };
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
  // workflow time (deterministic on replay): one instant for the whole evaluation's date variables
  const clockAt = new Date().toISOString();
  return runDag(prov.plan, {
    // unset: the task's default — one node at a time unless it declares parallel evaluation safe
    parallelism: input.evaluation.parallelism ?? prov.plan.defaultParallelism ?? 1,
    evaluate: (n, vars) =>
      acts.evaluateNode({ ref, nodeId: n.id, vars, judge: input.evaluation.judge, clockAt }).catch((err: unknown) => {
        // Docker or network trouble of the HOST was retried by the activity policy; once retries
        // are exhausted the node is ERROR with what went wrong. Anything else fails the rollout.
        if (!isInfraFailure(err)) throw err;
        return errorOutcome(n, describeFailure(err));
      }),
    onOutcome: (o, finished) => {
      progress.nodesDone = finished;
      progress.statusCounts[o.status] = (progress.statusCounts[o.status] ?? 0) + 1;
    },
    onRunning: (running) => {
      progress.nodesRunning = running;
      onChange();
    },
    stalled: (message) => ApplicationFailure.nonRetryable(message, 'SchedulerBug'),
  });
}

function errorOutcome(n: PlanNode, message: string): NodeOutcome {
  return { nodeId: n.id, status: 'ERROR', score: 0, maxScore: n.maxScore, method: n.method, category: n.category, subcategory: n.subcategory, message: message.slice(0, 500), exports: {}, durationMs: 0 };
}
