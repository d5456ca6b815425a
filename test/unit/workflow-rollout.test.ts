/**
 * Every branch of rolloutWorkflow on the time-skipping test server, activities stubbed (no Docker):
 * misconfigured agent, crashed agent, voided, cancellation in each phase (teardown always runs),
 * node ERROR vs host trouble retried.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { AgentConfigError, describeFailure, failureType, InfraError } from '../../src/errors';
import { progressQuery, rolloutWorkflow } from '../../src/workflows/rollout';
import type { AgentRunSummary, EvalPlan, Provisioned, RolloutInput, RolloutPhase, RolloutResult } from '../../src/model/rollout';
import type { NodeOutcome } from '../../src/model/scores';
import type * as activities from '../../src/activities';
import { validateRolloutInput } from '../../src/activities/validate-input';
import { timeSkippingWithBundle } from '../helpers/temporal';
import { GovernorConfigError } from '../../src/governor/client';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => ({ env, bundle } = await timeSkippingWithBundle()));
after(async () => {
  await env?.teardown();
});

const plan: EvalPlan = {
  taskId: 't',
  taskHash: 'h',
  nodes: [
    { id: 'A', prereqs: [], method: 'binary', maxScore: 2, category: 'API', subcategory: '' },
    { id: 'B', prereqs: ['A'], method: 'binary', maxScore: 2, category: 'DB', subcategory: '' },
  ],
  order: ['A', 'B'],
  trajectories: { T1: ['A', 'B'] },
};

type Acts = typeof activities;
interface Stubs {
  runAgent?: Acts['runAgent'];
  evaluateNode?: Acts['evaluateNode'];
  /** block this phase's activity until the workflow is cancelled */
  hangIn?: 'provision' | 'runAgent' | 'evaluateNode' | 'persistResults';
  /** merged into the rollout input */
  input?: Record<string, unknown>;
}

interface Calls {
  teardown: number;
  /** what provision was asked (prepare: it also puts the PRD and knowledge base in the workspace) */
  provisionPrepare?: boolean;
  prepareWorkspace: number;
  /** persistResults saw teardown start before it finished (they run side by side) */
  teardownDuringPersist?: boolean;
  evaluate: Record<string, number>;
  phases: RolloutPhase[];
}

const passed = (id: string, extra: Partial<NodeOutcome> = {}): NodeOutcome => ({ nodeId: id, status: 'PASSED', score: 2, maxScore: 2, method: 'binary', category: id === 'A' ? 'API' : 'DB', subcategory: '', message: 'ok', exports: {}, durationMs: 1, ...extra });
const completed = (extra: Partial<AgentRunSummary> = {}): AgentRunSummary => ({ agent: 'codex', model: 'm', exitReason: 'completed', exitCode: 0, attempts: 1, agentSeconds: 1, message: 'done', history: [], ...extra });

let queueNo = 0;
async function run(stubs: Stubs, onStarted?: (h: { cancel(): Promise<unknown> }) => Promise<void>): Promise<{ result?: RolloutResult; error?: unknown; calls: Calls }> {
  const taskQueue = `rollout-ts-${++queueNo}`;
  const calls: Calls = { teardown: 0, prepareWorkspace: 0, evaluate: {}, phases: [] };
  const { Context } = await import('@temporalio/activity');
  const hang = async <T>(phase: Stubs['hangIn'], value: () => Promise<T> | T): Promise<T> => {
    if (stubs.hangIn !== phase) return value();
    // heartbeat so the cancellation reaches the activity
    const ctx = Context.current();
    for (;;) {
      ctx.heartbeat();
      await ctx.sleep(200);
    }
  };
  const acts: Partial<Acts> = {
    validateRolloutInput,
    provision: async (i) => {
      calls.provisionPrepare = i.prepare;
      return hang('provision', (): Provisioned => ({ host: 'h1', hostQueue: taskQueue, runDir: '/nonexistent', plan, stack: { rolloutKey: 'k', project: 'p', network: 'n', services: {} }, appUrl: 'http://x', provisionMs: 1 }));
    },
    prepareWorkspace: async () => (calls.prepareWorkspace++, { promptFile: 'p' }),
    runAgent: async (i) => hang('runAgent', () => (stubs.runAgent ? stubs.runAgent(i) : completed())),
    evaluateNode: async (i) => {
      calls.evaluate[i.nodeId] = (calls.evaluate[i.nodeId] ?? 0) + 1;
      return hang('evaluateNode', () => (stubs.evaluateNode ? stubs.evaluateNode(i) : passed(i.nodeId)));
    },
    persistResults: async () =>
      hang('persistResults', async () => {
        for (let k = 0; k < 50 && calls.teardown === 0; k++) await new Promise((r) => setTimeout(r, 20));
        calls.teardownDuringPersist = calls.teardown > 0;
        return { runDir: '/nonexistent' };
      }),
    teardown: async () => {
      calls.teardown++;
      return { containers: 0, networks: 0, volumes: 0 };
    },
  };
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: acts });
  const input: Partial<RolloutInput> = { taskDir: '/t', taskId: 't', agent: 'codex', model: 'm', heartbeatSeconds: 5, evaluation: { parallelism: 2, judge: { enabled: false, model: 'x' } }, ...stubs.input };
  return worker.runUntil(async () => {
    const h = await env.client.workflow.start(rolloutWorkflow, { taskQueue, workflowId: `rollout-${taskQueue}`, args: [input as RolloutInput] });
    if (onStarted) await onStarted(h);
    try {
      return { result: await h.result(), calls };
    } catch (error) {
      return { error, calls };
    } finally {
      calls.phases.push((await h.query(progressQuery).catch(() => ({ phase: 'queued' as const }))).phase);
    }
  });
}

test('provision also prepares the workspace (no prepareWorkspace activity), and teardown runs beside persistResults', async () => {
  const { result, calls } = await run({});
  assert.equal(result?.score.overall.pct, 100);
  assert.equal(calls.provisionPrepare, true);
  assert.equal(calls.prepareWorkspace, 0);
  assert.equal(calls.teardownDuringPersist, true, 'teardown started before persistResults finished');
  assert.equal(calls.teardown, 1, 'and only once (the finally block reuses it)');
});

test('bad input: the rollout fails at once with every issue at its path (the validateRolloutInput local activity); nothing provisioned', async () => {
  const { result, error, calls } = await run({ input: { budgetSeconds: -1, colour: 'red' } });
  assert.equal(result, undefined);
  assert.equal(failureType(error), 'InvalidInputError');
  const lines = describeFailure(error).replace(/^InvalidInputError: /, '').split('\n');
  assert.deepEqual(lines.map((l) => l.split(': ').slice(0, 2).join(': ')).sort(), ['rollout input: budgetSeconds', 'rollout input: colour']);
  assert.ok(lines.includes('rollout input: colour: unknown key "colour"'), lines.join(' | '));
  assert.equal(calls.provisionPrepare, undefined, 'provision never ran');
  assert.equal(calls.teardown, 0);
});

test('misconfigured agent (AgentConfigError from runAgent): the rollout FAILS with the missing-key message, is not retried, never scored; teardown runs', async () => {
  let attempts = 0;
  const { result, error, calls } = await run({
    runAgent: async () => {
      attempts++;
      throw new AgentConfigError('provider openai: no API key in the worker environment (set OPENAI_API_KEY)');
    },
  });
  assert.equal(result, undefined);
  assert.ok(error instanceof WorkflowFailedError);
  assert.equal(failureType(error), 'AgentConfigError');
  assert.equal(describeFailure(error), 'AgentConfigError: provider openai: no API key in the worker environment (set OPENAI_API_KEY)');
  assert.equal(attempts, 1, 'not retried');
  assert.deepEqual(calls.evaluate, {}, 'nothing evaluated');
  assert.equal(calls.teardown, 1);
  assert.equal(calls.phases[0], 'failed');
});

test('misconfigured worker (GovernorConfigError): the rollout FAILS too, not retried, never scored', async () => {
  let attempts = 0;
  const { error, calls } = await run({
    runAgent: async () => {
      attempts++;
      throw new GovernorConfigError('rate governor: rate limits apply but no Temporal target is configured');
    },
  });
  assert.equal(failureType(error), 'GovernorConfigError');
  assert.equal(attempts, 1);
  assert.deepEqual(calls.evaluate, {});
  assert.equal(calls.teardown, 1);
});

test('crashed agent (retries exhausted): recorded as infrastructure and the workspace is still scored', async () => {
  let attempts = 0;
  const { result, calls } = await run({
    runAgent: async () => {
      attempts++;
      throw ApplicationFailure.create({ message: 'agent process vanished', type: 'AgentCrash' });
    },
  });
  assert.equal(attempts, 5, 'the agent activity retry policy ran (5 attempts)');
  assert.equal(result?.agentRun.exitReason, 'infrastructure');
  assert.match(result!.agentRun.message, /AgentCrash: agent process vanished/);
  assert.equal(result?.score.overall.pct, 100);
  assert.equal(calls.teardown, 1);
  assert.equal(calls.phases[0], 'done');
});

test('voided (evaluator access in the transcript): every aggregate is 0, the original kept', async () => {
  const { result } = await run({ runAgent: async () => completed({ integrity: { verdict: 'voided', evaluatorHits: 2 } as AgentRunSummary['integrity'] }) });
  assert.ok(result?.voided);
  assert.equal(result.voided.original.pct, 100);
  assert.equal(result.score.overall.score, 0);
  assert.equal(result.score.nonLlm.score, 0);
  for (const m of [result.score.byCategory, result.score.byBackbone, result.score.byTrajectory]) {
    assert.ok(Object.keys(m).length > 0);
    for (const c of Object.values(m)) assert.equal(c.score, 0);
  }
});

test('node ERROR from the app is the result; host trouble is retried and then gives the app real result', async () => {
  const tries: Record<string, number> = {};
  const { result, calls } = await run({
    evaluateNode: async (i) => {
      tries[i.nodeId] = (tries[i.nodeId] ?? 0) + 1;
      if (i.nodeId === 'A' && tries.A < 3) throw new InfraError('docker exec: connect ECONNRESET /var/run/docker.sock');
      if (i.nodeId === 'B') return passed('B', { status: 'ERROR', score: 0, message: 'TypeError: app answered garbage' });
      return passed(i.nodeId);
    },
  });
  assert.equal(calls.evaluate.A, 3, 'retried by the activity policy until it worked');
  assert.equal(result?.outcomes.find((o) => o.nodeId === 'A')?.status, 'PASSED');
  assert.equal(calls.evaluate.B, 1, 'an ERROR result is not retried');
  assert.equal(result?.outcomes.find((o) => o.nodeId === 'B')?.status, 'ERROR');
});

test('host trouble on every attempt: after the retries the node is ERROR with the message, the rollout completes', async () => {
  const { result, calls } = await run({
    evaluateNode: async (i) => {
      if (i.nodeId === 'A') throw new InfraError('docker daemon unreachable');
      return passed(i.nodeId);
    },
  });
  assert.equal(calls.evaluate.A, 3);
  const a = result?.outcomes.find((o) => o.nodeId === 'A');
  assert.equal(a?.status, 'ERROR');
  assert.equal(a?.message, 'InfraError: docker daemon unreachable');
  assert.equal(result?.outcomes.find((o) => o.nodeId === 'B')?.status, 'SKIPPED_DEPENDENCY');
});

for (const phase of ['runAgent', 'evaluateNode', 'persistResults'] as const) {
  test(`cancelled during ${phase}: the rollout ends cancelled and teardown runs`, async () => {
    const { error, calls } = await run({ hangIn: phase }, async (h) => {
      await new Promise((r) => setTimeout(r, 700));
      await h.cancel();
    });
    assert.equal(failureType(error), 'CancelledFailure');
    assert.equal(calls.teardown, 1);
  });
}
