import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import { chromium } from 'playwright-core';
import { startWorker, type WorkerHandle } from '../../src/worker/worker';
import { temporalBin } from '../../src/temporal/tools';
import { repoRoot } from '../../src/paths';
import { sweepWorkflowId, type SweepProgress, type SweepResult } from '../../src/model/sweep';
import type { ConfigRow } from '../../src/model/benchmark';
import type { RolloutProgress } from '../../src/model/rollout';
import { devServer } from '../helpers/temporal';
import { labelledFor } from '../helpers/docker';
import { executeSweep, rolloutExecutions, sweepInput, uniqueName, until } from './sweep-support';

const run = promisify(execFile);
let env: TestWorkflowEnvironment;
let worker: WorkerHandle;
let runsDir: string;
let first: SweepResult;

before(async () => {
  runsDir = mkdtempSync(join(tmpdir(), 'saasbench-sweep-'));
  process.env.SAASBENCH_RUNS_DIR = runsDir;
  env = await devServer();
  worker = await startWorker({ address: env.address, namespace: 'default', hostId: 'itest', reapEverySeconds: 0 });
});

after(async () => {
  await worker?.shutdown();
  await env?.teardown();
});

const oracle = (r: SweepResult) => r.benchmark.configs.find((c) => c.agent === 'oracle')!;
const noop = (r: SweepResult) => r.benchmark.configs.find((c) => c.agent === 'noop')!;
const close = (a: number | null, b: number, msg: string) => assert.ok(a !== null && Math.abs(a - b) < 0.006, `${msg}: ${a} vs ${b}`);

// Hand-computed from the fixture DAGs (judge disabled, so tiny's CODE_QUALITY is SKIPPED_LLM):
//   tiny  oracle: 9.7/18 = 53.89 %  (Deploy 3/3, API 4/4, Quality 2.7/11: WEIGHTED_MIX is round(2/3·4, 1) = 2.7)
//   tiny2 oracle: 9.2/12 = 76.67 %  (Deploy 2/2, Data 2/2, AuthZ 2/2, Logic 2.2/3, API 1/1, Quality 0/2)
//   noop: 0 everywhere. Benchmark = mean over tasks of the mean over (identical) repeats.
const TINY_ORACLE = (100 * 9.7) / 18;
const TINY2_ORACLE = (100 * 9.2) / 12;

function assertHandComputed(r: SweepResult): void {
  const o = oracle(r);
  close(o.score, (TINY_ORACLE + TINY2_ORACLE) / 2, 'oracle benchmark score');
  close(o.nonLlm, (TINY_ORACLE + TINY2_ORACLE) / 2, 'oracle non-LLM subscore');
  close(o.byTask.tiny.mean, TINY_ORACLE, 'oracle tiny');
  close(o.byTask.tiny2.mean, TINY2_ORACLE, 'oracle tiny2');
  close(o.byBackbone.Deploy, 100, 'Deploy');
  close(o.byBackbone.API, 100, 'API');
  close(o.byBackbone.Data, 100, 'Data (tiny2 only)');
  close(o.byBackbone.AuthZ, 100, 'AuthZ (tiny2 only)');
  close(o.byBackbone.Logic, (100 * 2.2) / 3, 'Logic (tiny2 only)');
  close(o.byBackbone.Quality, ((100 * 2.7) / 11 + 0) / 2, 'Quality');
  close(o.byTrajectory.happy_path, (100 + (100 * 6.2) / 7) / 2, 'happy_path (tiny 5/5, tiny2 6.2/7)');
  close(o.byCategory.CRUD, 100, 'CRUD');
  assert.deepEqual(o.taxonomy, { T1: 0, T2: 2, T3: 2, T4: 0, T5: 0, none: 0 }, 'tiny oracle: only Quality weak (T2); tiny2 oracle: Logic and Quality (T3)');
  assert.equal(o.tasks, 2);
  assert.equal(o.completed, 4);
  const n = noop(r);
  assert.equal(n.score, 0);
  assert.deepEqual(n.taxonomy, { T1: 0, T2: 0, T3: 0, T4: 0, T5: 4, none: 0 });
  assert.deepEqual(r.benchmark.configs.map((c: ConfigRow) => [c.rank, c.agent]), [[1, 'oracle'], [2, 'noop']]);
}

test('acceptance 1: 2 tasks × 2 agents × 2 repeats, concurrency 3 — leaderboard equals the hand-computed means', async () => {
  const input = sweepInput(uniqueName('acc1'));
  const handle = await env.client.workflow.start('sweepWorkflow', { taskQueue: 'saasbench', workflowId: sweepWorkflowId(input.name), args: [input] });
  // the progress query answers while it runs, with per-rollout states and an ETA once one finished
  let sawRunning = 0;
  let sawEta = false;
  const result = handle.result() as Promise<SweepResult>;
  let done = false;
  void result.finally(() => (done = true)).catch(() => undefined);
  while (!done) {
    const p = await handle.query<SweepProgress>('progress').catch(() => null);
    if (p) {
      assert.ok(p.counts.running <= 3, `at most 3 rollouts at once, saw ${p.counts.running}`);
      sawRunning = Math.max(sawRunning, p.counts.running);
      if (p.etaSeconds !== null && p.counts.completed > 0) sawEta = true;
      assert.ok(p.total === 0 || p.total === 8, 'total is known once the plan is resolved');
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  first = await result;
  assert.equal(sawRunning, 3, 'concurrency 3 was used');
  assert.ok(sawEta, 'the progress query gave an ETA');
  assert.equal(first.counts.completed, 8);
  assert.equal(first.rollouts.length, 8);
  assert.ok(first.rollouts.every((x) => x.origin === 'this-sweep'));
  assertHandComputed(first);

  // deterministic child ids, findable with the README's queries
  const execs = await rolloutExecutions(env.client, input.name);
  assert.equal(execs.length, 8);
  assert.ok(execs.some((e) => e.workflowId === `rollout/${input.name}/tiny2/oracle/none/1`));
  const failed: string[] = [];
  for await (const wf of env.client.workflow.list({ query: `SaasbenchSweep='${input.name}' AND ExecutionStatus='Failed'` })) failed.push(wf.workflowId);
  assert.deepEqual(failed, []);
  const low: string[] = [];
  for await (const wf of env.client.workflow.list({ query: `WorkflowType='rolloutWorkflow' AND SaasbenchSweep='${input.name}' AND SaasbenchScore < 10` })) low.push(wf.workflowId);
  assert.equal(low.length, 4, 'the noop rollouts score 0');

  // the sweep's files
  const dir = join(runsDir, 'sweeps', input.name);
  assert.equal(first.reportDir, dir);
  for (const f of ['sweep.json', 'summary.md', 'leaderboard.csv', 'groups.csv', 'rollouts.csv', 'rollouts.jsonl', 'report.html']) assert.ok(existsSync(join(dir, f)), f);
  const csv = readFileSync(join(dir, 'leaderboard.csv'), 'utf8').split('\n');
  assert.match(csv[1], /^1,oracle,none,65\.28,65\.28,/);
  assert.equal(readFileSync(join(dir, 'rollouts.jsonl'), 'utf8').trim().split('\n').length, 8);
  assert.match(readFileSync(join(dir, 'summary.md'), 'utf8'), /\| 1 \| oracle \| none \| 65\.28 \|/);
  for (const x of first.rollouts) assert.ok(existsSync(join(x.runDir!, 'report.html')), `rollout report for ${x.workflowId}`);
  assert.deepEqual(labelledFor(input.name), [], 'every stack torn down');

  // the memo holds the config
  const d = await handle.describe();
  assert.equal((d.memo as { config: { name: string } }).config.name, input.name);
});

test('re-submitting a finished sweep runs nothing again: every result is fetched, the leaderboard is the same', async () => {
  assert.ok(first, 'needs the first test');
  const again = await executeSweep(env.client, first.input);
  assert.equal(again.counts.completed, 8);
  assert.ok(again.rollouts.every((x) => x.origin === 'earlier'), 'all reused');
  assert.deepEqual(again.benchmark, first.benchmark);
  const execs = await rolloutExecutions(env.client, first.name);
  assert.equal(execs.length, 8, 'no new rollout executions');
});

test('acceptance 2: the same sweep started with the plain temporal CLI (and continue-as-new every 3 rollouts) gives the same results', async () => {
  assert.ok(first, 'needs the first test');
  const name = uniqueName('acc2');
  const file = join(runsDir, 'sweep-cli.json');
  writeFileSync(file, JSON.stringify({ ...sweepInput(name), continueAsNewEvery: 3 }, null, 2));
  await run(temporalBin(), ['workflow', 'start', '--address', env.address, '--namespace', 'default', '--type', 'sweepWorkflow', '--task-queue', 'saasbench', '--workflow-id', sweepWorkflowId(name), '--input-file', file], { cwd: repoRoot() });
  const r = (await env.client.workflow.getHandle(sweepWorkflowId(name)).result()) as SweepResult;
  assert.ok(r.runs >= 3, `continued as new: ${r.runs} runs`);
  assert.equal(r.counts.completed, 8);
  assertHandComputed(r);
  assert.deepEqual(r.benchmark, first.benchmark);
  const execs = await rolloutExecutions(env.client, name);
  assert.equal(execs.length, 8, 'each rollout ran once across the runs');
  assert.equal(new Set(execs.map((e) => e.workflowId)).size, 8);
});

test('acceptance 6: the sweep HTML report opens in headless Chromium without console errors and shows its charts', async () => {
  assert.ok(first?.reportDir, 'needs the first test');
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage', '--no-first-run'],
  });
  try {
    for (const file of [join(first.reportDir!, 'report.html'), join(first.rollouts.find((x) => x.agent === 'oracle')!.runDir!, 'report.html')]) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
      await page.goto(`file://${file}`);
      const svgs = await page.locator('svg').count();
      const marks = await page.locator('svg g.role-mark > path, svg g.role-mark > text, svg g.role-mark > rect').count();
      const shot = file.replace(/\.html$/, '.png');
      await page.screenshot({ path: shot, fullPage: true });
      assert.deepEqual(errors, [], `no console errors in ${file}`);
      if (file.includes('sweeps')) {
        assert.equal(svgs, 5, 'leaderboard, backbone, category, task and taxonomy charts');
        assert.ok(marks >= 40, `SVG marks drawn: ${marks}`);
        assert.equal(await page.locator('table.leaderboard tbody tr').count(), 2);
      } else {
        assert.equal(svgs, 3, 'the two score charts and the "where the time went" timeline');
        assert.ok(marks >= 10, `SVG marks drawn: ${marks}`);
        assert.equal(await page.locator('details.node').count(), 8, 'one drill-down per node');
      }
      assert.ok(existsSync(shot));
      await page.close();
    }
  } finally {
    await browser.close();
  }
});

test('bad input fails at once, non-retryable, naming the field; an unknown task names tasks[i]', async () => {
  const bad = { ...sweepInput(uniqueName('bad')), repeats: 0, agents: ['oracle', { name: 'noop', modls: ['x'] }] };
  await assert.rejects(executeSweep(env.client, bad as never), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError);
    const cause = err.cause as Error & { type?: string; nonRetryable?: boolean };
    assert.equal(cause.type, 'InvalidInputError');
    assert.equal(cause.nonRetryable, true);
    assert.match(cause.message, /repeats/);
    assert.match(cause.message, /agents\[1\]/);
    return true;
  });
  const missing = sweepInput(uniqueName('bad'), { tasks: ['test/fixtures/tasks/tiny', 'test/fixtures/tasks/no-such-task'] });
  await assert.rejects(executeSweep(env.client, missing), (err: unknown) => {
    const cause = (err as WorkflowFailedError).cause as Error & { type?: string };
    assert.equal(cause.type, 'InvalidInputError');
    assert.match(cause.message, /tasks\[1\].*no-such-task/);
    return true;
  });
});

test('stop signal: nothing new starts, the running rollout finishes, the report covers what finished', async () => {
  const input = sweepInput(uniqueName('stop'), { tasks: ['test/fixtures/tasks/tiny2'], agents: ['oracle'], repeats: 4, concurrency: 1 });
  const handle = await env.client.workflow.start('sweepWorkflow', { taskQueue: 'saasbench', workflowId: sweepWorkflowId(input.name), args: [input] });
  await until(async () => ((await handle.query<SweepProgress>('progress').catch(() => null))?.counts.running ?? 0) === 1, 30_000, 'a running rollout');
  await handle.signal('stop', {});
  const r = (await handle.result()) as SweepResult;
  assert.equal(r.stopped, 'drain');
  assert.equal(r.counts.completed, 1);
  assert.equal(r.counts.pending, 3);
  close(r.benchmark.configs[0].score, TINY2_ORACLE, 'score of the one finished rollout');
  assert.ok(r.reportDir && existsSync(join(r.reportDir, 'report.html')));
});

test('cancelling the sweep cancels its running rollouts (they tear down) and ends Canceled after the partial report', async () => {
  const input = sweepInput(uniqueName('cancel'), { tasks: ['test/fixtures/tasks/tiny2'], agents: ['oracle'], repeats: 3, concurrency: 2 });
  const handle = await env.client.workflow.start('sweepWorkflow', { taskQueue: 'saasbench', workflowId: sweepWorkflowId(input.name), args: [input] });
  // cancel once both rollouts have their stacks (past provisioning: see the note in docs/operations.md)
  await until(
    async () => {
      const p = await handle.query<SweepProgress>('progress').catch(() => null);
      const running = p?.rollouts.filter((x) => x.state === 'running') ?? [];
      if (running.length !== 2) return false;
      const phases = await Promise.all(running.map((x) => env.client.workflow.getHandle(x.workflowId).query<RolloutProgress>('progress').catch(() => null)));
      return phases.every((ph) => ph?.phase === 'agent');
    },
    30_000,
    'two rollouts in their agent phase',
  );
  await handle.cancel();
  await assert.rejects(handle.result());
  assert.equal((await handle.describe()).status.name, 'CANCELLED');
  const execs = await rolloutExecutions(env.client, input.name);
  assert.equal(execs.length, 2, 'the third rollout never started');
  await until(async () => (await rolloutExecutions(env.client, input.name)).every((e) => e.status === 'CANCELLED'), 10_000, 'rollouts cancelled');
  assert.deepEqual(labelledFor(input.name), [], 'cancelled rollouts tore down their stacks');
  const sweepJson = JSON.parse(readFileSync(join(runsDir, 'sweeps', input.name, 'sweep.json'), 'utf8')) as SweepResult;
  assert.equal(sweepJson.counts.cancelled, 2);
});
