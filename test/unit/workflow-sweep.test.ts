/**
 * sweepWorkflow branches on the time-skipping test server: the real sweep and rollout workflows,
 * every activity stubbed (no Docker). A misconfigured agent is "not run" and out of the averages;
 * continue-as-new hands running rollouts over; stop with cancelRunning cancels them; the cost cap
 * stops new starts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Context } from '@temporalio/activity';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { AgentConfigError, failureType } from '../../src/errors';
import { stopSweepSignal, sweepWorkflow } from '../../src/workflows/sweep';
import { rolloutStateLabel, sweepWorkflowId, type LookupAnswer, type ResolvedTask, type SweepInputRaw, type SweepResult } from '../../src/model/sweep';
import type { AgentRunSummary, EvalPlan, Provisioned, RolloutResult } from '../../src/model/rollout';
import { summarizeRollout } from '../../src/scoring/benchmark';
import { leaderboardText, sweepBenchmark } from '../../src/report/sweep-export';
import { ImageMissingError } from '../../src/sandbox/errors';
import type * as activities from '../../src/activities';
import { validateRolloutInput } from '../../src/activities/validate-input';
import { timeSkippingWithBundle } from '../helpers/temporal';
import { SA } from '../../src/workflows/search-attributes';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => ({ env, bundle } = await timeSkippingWithBundle()));
after(async () => {
  await env?.teardown();
});

const plan: EvalPlan = { taskId: 't1', taskHash: 'h', nodes: [{ id: 'A', prereqs: [], method: 'binary', maxScore: 1, category: 'API', subcategory: '' }], order: ['A'], trajectories: {} };
const tasks: ResolvedTask[] = [{ path: 'tasks/t1', dir: '/t1', id: 't1', hash: 'h', nodes: 1, maxScore: 1 }];

let n = 0;
/** teardowns of the last runSweep, readable also when the sweep ended Canceled */
let lastTornDown = 0;
type Acts = typeof activities;
async function runSweep(
  over: Partial<SweepInputRaw>,
  agentBehaviour: (agent: string) => Promise<AgentRunSummary>,
  during?: (h: { signal(req?: { cancelRunning?: boolean }): Promise<void>; cancel(): Promise<unknown>; started(n: number): Promise<void> }) => Promise<void>,
  /** activities replaced for one test (e.g. tasks resolved, a provision that fails) */
  actsOver: Partial<Acts> = {},
): Promise<{ result: SweepResult; started: string[]; tornDown: number }> {
  const taskQueue = `sweep-ts-${++n}`;
  const name = `ts${n}`;
  const started: string[] = [];
  let tornDown = 0;
  lastTornDown = 0;
  const acts: Partial<Acts> = {
    validateRolloutInput,
    sweepResolveTasks: async () => tasks,
    // what the real lookup answers, from the test server: absent, running, or completed with its summary
    sweepLookupRollouts: async (i) =>
      Promise.all(
        i.items.map(async (it): Promise<LookupAnswer> => {
          const h = env.client.workflow.getHandle(it.workflowId);
          const d = await h.describe().catch(() => null);
          if (!d) return { workflowId: it.workflowId, state: 'absent' };
          if (d.status.name === 'RUNNING') return { workflowId: it.workflowId, state: 'running' };
          if (d.status.name === 'COMPLETED') return { workflowId: it.workflowId, state: 'completed', summary: summarizeRollout((await h.result()) as RolloutResult, 'earlier') };
          return { workflowId: it.workflowId, state: 'failed', summary: { ...it, state: 'failed', origin: 'earlier', error: d.status.name } };
        }),
      ),
    sweepWriteReport: async () => ({ dir: '/nonexistent', host: 'h' }),
    provision: async (i): Promise<Provisioned> => {
      started.push(i.workflowId);
      return { host: 'h', hostQueue: taskQueue, runDir: '/nonexistent', plan, stack: { rolloutKey: i.rolloutKey, project: 'p', network: 'n', services: {} }, appUrl: 'http://x', provisionMs: 1 };
    },
    prepareWorkspace: async () => ({ promptFile: 'p' }),
    runAgent: async (i) => agentBehaviour(i.agent),
    evaluateNode: async (i) => ({ nodeId: i.nodeId, status: 'PASSED', score: 1, maxScore: 1, method: 'binary', category: 'API', subcategory: '', message: 'ok', exports: {}, durationMs: 1 }),
    persistResults: async () => ({ runDir: '/nonexistent' }),
    teardown: async () => {
      tornDown++;
      lastTornDown = tornDown;
      return { containers: 0, networks: 0, volumes: 0 };
    },
    ...actsOver,
  };
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: acts });
  const input: SweepInputRaw = { name, tasks: ['tasks/t1'], agents: ['oracle'], repeats: 1, concurrency: 4, taskQueue, evaluation: { parallelism: 1, judge: { enabled: false, model: 'none' } }, ...over };
  const result = await worker.runUntil(async () => {
    const h = await env.client.workflow.start(sweepWorkflow, { taskQueue, workflowId: sweepWorkflowId(name), args: [input] });
    // `started(n)` waits for the n-th provision: on a loaded machine a fixed real-time delay can
    // signal before the first rollout was started, and the test would measure the machine
    const startedN = async (k: number) => {
      const deadline = Date.now() + 60_000;
      while (started.length < k) {
        if (Date.now() > deadline) throw new Error(`only ${started.length} of ${k} rollouts were provisioned within 60 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    if (during) await during({ signal: (req) => h.signal(stopSweepSignal, req), cancel: () => h.cancel(), started: startedN });
    return h.result();
  });
  return { result, started, tornDown };
}

const completed = (agent: string): AgentRunSummary => ({ agent, model: 'none', exitReason: 'completed', exitCode: 0, attempts: 1, agentSeconds: 1, message: 'ok', history: [] });

test('a misconfigured agent is recorded "not run: <reason>" and left out of the averages', async () => {
  const { result } = await runSweep({ agents: ['oracle', 'codex'], models: ['none'] }, async (agent) => {
    if (agent === 'codex') throw new AgentConfigError('provider openai: no API key in the worker environment (set OPENAI_API_KEY)');
    return completed(agent);
  });
  const codex = result.rollouts.find((r) => r.agent === 'codex')!;
  assert.equal(codex.state, 'failed');
  assert.equal(codex.notRun, 'AgentConfigError: provider openai: no API key in the worker environment (set OPENAI_API_KEY)');
  assert.equal(rolloutStateLabel(codex), 'not run: AgentConfigError: provider openai: no API key in the worker environment (set OPENAI_API_KEY)');
  assert.equal(codex.score, undefined, 'never scored');
  const row = result.benchmark.configs.find((c) => c.agent === 'codex')!;
  assert.equal(row.score, null, 'not averaged as a 0');
  assert.equal(row.completed, 0);
  assert.equal(result.benchmark.configs.find((c) => c.agent === 'oracle')!.score, 100);
});

test('a task that fails to provision: its row is incomplete ("1/2 tasks") and ranked after the complete one; --as-paper scores it 0', async () => {
  const two: ResolvedTask[] = [...tasks, { path: 'tasks/t2', dir: '/t2', id: 't2', hash: 'h', nodes: 1, maxScore: 1 }];
  const base = (i: { rolloutKey: string }): Provisioned => ({ host: 'h', hostQueue: '', runDir: '/nonexistent', plan, stack: { rolloutKey: i.rolloutKey, project: 'p', network: 'n', services: {} }, appUrl: 'http://x', provisionMs: 1 });
  let queue = '';
  const { result } = await runSweep({ tasks: ['tasks/t1', 'tasks/t2'], agents: ['codex', 'oracle'] }, async (agent) => completed(agent), undefined, {
    sweepResolveTasks: async (i) => {
      queue = i.input.taskQueue ?? '';
      return two;
    },
    provision: async (i) => {
      // codex scores 100 where it runs, but t2 never comes up for it
      if (i.workflowId.includes('/codex/') && i.taskId === 't2') throw new ImageMissingError('app', 'saasbench/t2-app:latest');
      return { ...base(i), hostQueue: queue };
    },
  });
  const codex = result.rollouts.find((r) => r.agent === 'codex' && r.taskId === 't2')!;
  assert.match(codex.notRun ?? '', /ImageMissingError/);
  const rows = result.benchmark.configs;
  assert.deepEqual(rows.map((c) => [c.agent, c.rank, c.incomplete, `${c.tasks}/${c.declaredTasks}`]), [['oracle', 1, false, '2/2'], ['codex', 2, true, '1/2']]);
  assert.deepEqual(rows[1].units, { T1: 1, T2: 0, T3: 0, T4: 0, T5: 0, none: 0, notRun: 1 }, 't1 passed its one API node: T1; t2 never ran');
  assert.match(leaderboardText(result.benchmark), /1\/2 tasks\s.*incomplete/);
  const paper = sweepBenchmark(result, { asPaper: true });
  assert.equal(paper.configs.find((c) => c.agent === 'codex')!.score, 50, '(100 + 0) / 2');
});

test('continue-as-new every 2 finished rollouts: all 5 complete across several runs, none run twice', async () => {
  const { result, started } = await runSweep({ repeats: 5, concurrency: 2, continueAsNewEvery: 2 }, async (agent) => completed(agent));
  assert.equal(result.counts.completed, 5);
  assert.ok(result.runs >= 2, `runs ${result.runs}`);
  assert.equal(new Set(started).size, started.length, 'no rollout provisioned twice');
  assert.equal(started.length, 5);
});

test('stop {cancelRunning}: running rollouts are cancelled (teardown runs), nothing new starts, the sweep completes stopped', async () => {
  const { result, started } = await runSweep(
    { repeats: 3, concurrency: 1 },
    async () => {
      const ctx = Context.current();
      for (;;) {
        ctx.heartbeat();
        await ctx.sleep(100);
      }
    },
    async (h) => {
      await h.started(1);
      await new Promise((r) => setTimeout(r, 300));
      await h.signal({ cancelRunning: true });
    },
  );
  assert.equal(result.stopped, 'cancel');
  assert.equal(started.length, 1, 'concurrency 1: one started, the others never');
  assert.equal(result.counts.cancelled, 1);
  assert.equal(result.counts.pending, 2);
});

test('stop (drain): the running rollout finishes and is scored, nothing new starts', async () => {
  const { result, started } = await runSweep(
    { repeats: 3, concurrency: 1 },
    async (agent) => {
      await new Promise((r) => setTimeout(r, 1500));
      return completed(agent);
    },
    async (h) => {
      await h.started(1);
      await h.signal({});
    },
  );
  assert.equal(result.stopped, 'drain');
  assert.equal(started.length, 1);
  assert.equal(result.counts.completed, 1);
  assert.equal(result.counts.pending, 2);
});

test('cancelling the sweep cancels its running rollouts (each tears down), writes the partial report and ends Canceled', async () => {
  let outcome: unknown;
  await assert.rejects(
    runSweep(
      { repeats: 2, concurrency: 2 },
      async () => {
        const ctx = Context.current();
        for (;;) {
          ctx.heartbeat();
          await ctx.sleep(100);
        }
      },
      async (h) => {
        await h.started(2);
        await new Promise((r) => setTimeout(r, 300));
        await h.cancel();
      },
    ).catch((e) => {
      outcome = e;
      throw e;
    }),
  );
  assert.equal(failureType(outcome), 'CancelledFailure');
  assert.equal(lastTornDown, 2, 'both running rollouts tore down');
});

test('cost cap: once the finished rollouts cost $1, nothing new starts; the rest are "not run: cost cap …"; each rollout carries SaasbenchCostUsd', async () => {
  const metered = (agent: string): AgentRunSummary => ({ ...completed(agent), gateway: { usage: { requests: 1, input: 1000, cachedInput: 0, output: 10, reasoning: 0 }, costUsd: 0.4, costReason: null, price: null, settings: null } });
  const { result, started } = await runSweep({ repeats: 5, concurrency: 1, costCapUsd: 1 }, async (agent) => metered(agent));
  // concurrency 1: $0.40, $0.80, $1.20 ≥ $1 → two never start
  assert.equal(started.length, 3);
  assert.equal(result.counts.completed, 3);
  const notRun = result.rollouts.filter((r) => r.notRun);
  assert.deepEqual(notRun.map((r) => [r.repeat, r.notRun]), [[3, 'cost cap $1.00 reached after $1.20'], [4, 'cost cap $1.00 reached after $1.20']]);
  assert.ok(notRun.every((r) => r.score === undefined), 'never scored');
  assert.deepEqual(result.costCap, { capUsd: 1, spentUsd: 1.2, reached: true, notStarted: 2 });
  assert.equal(result.rollouts.filter((r) => r.costUsd === 0.4).length, 3, 'the summaries carry the child results\' cost');
  const first = result.rollouts.find((r) => r.repeat === 0)!;
  const d = await env.client.workflow.getHandle(first.workflowId).describe();
  assert.equal(d.typedSearchAttributes.get(SA.costUsd), 0.4);
  assert.equal(result.benchmark.configs[0].completed, 3, 'the not-run rollouts are out of the averages');
});
