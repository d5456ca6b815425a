import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker } from '@temporalio/worker';
import { sweepLookupRollouts, sweepResolveTasks, sweepWriteReport } from '../../src/activities';
import { sweepWorkflowId, type SweepInputRaw, type SweepProgress, type SweepResult } from '../../src/model/sweep';
import { devServer } from '../helpers/temporal';
import { rolloutExecutions, uniqueName, until } from './sweep-support';

const QUEUE = 'sweep-scale';
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;

before(async () => {
  process.env.SAASBENCH_RUNS_DIR = mkdtempSync(join(tmpdir(), 'saasbench-sweep-scale-'));
  env = await devServer();
  worker = await Worker.create({
    connection: await NativeConnection.connect({ address: env.address }),
    taskQueue: QUEUE,
    workflowsPath: require.resolve('./sweep-fake-workflows'),
    activities: { sweepResolveTasks, sweepLookupRollouts, sweepWriteReport },
    maxConcurrentWorkflowTaskExecutions: 40,
  });
  running = worker.run();
});

after(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

function input(name: string, over: Partial<SweepInputRaw> = {}): SweepInputRaw {
  return {
    name,
    tasks: ['test/fixtures/tasks/tiny', 'test/fixtures/tasks/tiny2'],
    agents: ['oracle', 'noop'],
    repeats: 20,
    concurrency: 12,
    continueAsNewEvery: 20,
    taskQueue: QUEUE,
    evaluation: { parallelism: 1, judge: { enabled: false, model: 'none' } },
    ...over,
  };
}

/**
 * Every run of the sweep (continue-as-new chain, re-submissions) replays deterministically on the
 * current code. Returns the number of events of each run.
 */
async function replaySweepRuns(name: string, atLeast: number): Promise<number[]> {
  const runs: string[] = [];
  for await (const wf of env.client.workflow.list({ query: `WorkflowId='${sweepWorkflowId(name)}'` })) runs.push(wf.runId);
  assert.ok(runs.length >= atLeast, `${runs.length} runs listed`);
  const histories = await Promise.all(runs.map(async (runId) => ({ workflowId: sweepWorkflowId(name), history: await env.client.workflow.getHandle(sweepWorkflowId(name), runId).fetchHistory() })));
  // one bundle for all runs
  for await (const r of Worker.runReplayHistories({ workflowsPath: require.resolve('./sweep-fake-workflows') }, histories)) {
    assert.equal(r.error, undefined, `run ${r.runId} replays deterministically`);
  }
  return histories.map((h) => h.history.events?.length ?? 0);
}

/** Follow a sweep across its continue-as-new runs, checking the concurrency bound on the way. */
async function follow(name: string, bound: number): Promise<{ result: SweepResult; maxRunning: number }> {
  const handle = env.client.workflow.getHandle(sweepWorkflowId(name));
  let maxRunning = 0;
  let done = false;
  const result = handle.result() as Promise<SweepResult>;
  void result.finally(() => (done = true)).catch(() => undefined);
  while (!done) {
    const p = await handle.query<SweepProgress>('progress').catch(() => null);
    if (p) {
      maxRunning = Math.max(maxRunning, p.counts.running);
      assert.ok(p.counts.running <= bound, `running ${p.counts.running} > ${bound}`);
    }
    await new Promise((r) => setTimeout(r, 600));
  }
  return { result: await result, maxRunning };
}

test('an 80-rollout sweep: bounded concurrency across continue-as-new runs, each rollout once, exact means', async () => {
  const name = uniqueName('scale');
  await env.client.workflow.start('sweepWorkflow', { taskQueue: QUEUE, workflowId: sweepWorkflowId(name), args: [input(name)] });
  const { result: r, maxRunning } = await follow(name, 12);
  assert.equal(r.counts.completed, 80);
  assert.ok(r.runs >= 3, `${r.runs} runs`);
  assert.equal(maxRunning, 12);
  const oracle = r.benchmark.configs.find((c) => c.agent === 'oracle')!;
  assert.equal(oracle.score, 55, '(70 + 40) / 2');
  assert.equal(oracle.byTask.tiny.mean, 70);
  assert.equal(oracle.bestOfK, 60, '(80 + 40) / 2');
  assert.equal(oracle.completed, 40);
  const execs = await rolloutExecutions(env.client, name);
  assert.equal(execs.length, 80);
  assert.equal(new Set(execs.map((e) => e.workflowId)).size, 80);
  const events = await replaySweepRuns(name, r.runs);
  // A run's history grows with the rollouts it sees (continueAsNewEvery = 20, plus up to 12 still
  // running at hand-over), never with the size of the sweep: measured ~160 events in the largest
  // run, ~460 for all 80 together. A bound of 6 per rollout of one run holds here and fails if
  // continue-as-new stopped happening. bench/sweep-scale.ts: 1,000 rollouts, < 600 events per run.
  const perRunBound = 6 * (20 + 12) + 50;
  assert.ok(Math.max(...events) <= perRunBound, `events per run ${events.join(', ')} (bound ${perRunBound}, and 10,000 at most)`);
});

test('terminating a sweep mid-way and re-submitting it adopts running rollouts and reuses finished ones: still one run each', async () => {
  const name = uniqueName('term');
  const handle = await env.client.workflow.start('sweepWorkflow', { taskQueue: QUEUE, workflowId: sweepWorkflowId(name), args: [input(name, { repeats: 10, continueAsNewEvery: 1000 })] });
  await until(async () => ((await handle.query<SweepProgress>('progress').catch(() => null))?.counts.completed ?? 0) >= 8, 60_000, 'some finished rollouts');
  await handle.terminate('test: the sweep dies, its rollouts go on');
  const alive = (await rolloutExecutions(env.client, name)).filter((e) => e.status === 'RUNNING').length;
  await env.client.workflow.start('sweepWorkflow', { taskQueue: QUEUE, workflowId: sweepWorkflowId(name), args: [input(name, { repeats: 10, continueAsNewEvery: 1000 })] });
  const { result: r } = await follow(name, 12);
  assert.equal(r.counts.completed, 40);
  const reused = r.rollouts.filter((x) => x.origin === 'earlier').length;
  assert.ok(reused >= 8, `reused ${reused} (${alive} were still running when the sweep was terminated)`);
  const execs = await rolloutExecutions(env.client, name);
  assert.equal(execs.length, 40, 'one execution per rollout id');
  assert.equal(r.benchmark.configs.find((c) => c.agent === 'oracle')!.score, 55);
  await replaySweepRuns(name, 2);
});
