import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import { startWorker, type WorkerHandle } from '../../src/worker/worker';
import { repoRoot } from '../../src/paths';
import { rolloutWorkflowId } from '../../src/model/rollout';
import { devServer } from '../helpers/temporal';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, runRolloutWorkflow, statusesOf } from '../helpers/rollout';

const TINY = join(repoRoot(), 'test', 'fixtures', 'tasks', 'tiny');
let env: TestWorkflowEnvironment;
let worker: WorkerHandle;

before(async () => {
  process.env.SAASBENCH_RUNS_DIR = mkdtempSync(join(tmpdir(), 'saasbench-runs-'));
  env = await devServer();
  worker = await startWorker({ address: env.address, namespace: 'default', hostId: 'itest' });
});

after(async () => {
  await worker?.shutdown();
  await env?.teardown();
});

test('oracle rollout on a real dev server and real containers: statuses, scores, context, results, teardown', async () => {
  const input = rolloutInput(TINY, 'oracle');
  const r = await runRolloutWorkflow(env, input);
  assert.deepEqual(statusesOf(r), {
    DEPLOY_HEALTH: 'PASSED',
    ITEM_READ: 'PASSED',
    ITEM_BY_CAPTURED_ID: 'PASSED', // {{item_id}} exported by ITEM_READ reached its dependent
    WEIGHTED_MIX: 'PASSED', // partial credit still unlocks dependents
    FILES_PRESENT: 'PASSED',
    NEVER_RUNS: 'FAILED',
    AFTER_FAIL: 'SKIPPED_DEPENDENCY',
    CODE_QUALITY: 'SKIPPED_LLM',
  });
  assert.equal(r.outcomes.find((o) => o.nodeId === 'WEIGHTED_MIX')!.score, 2.7, 'round(2/3 · 4, 1) as the published evaluator');
  // (2 + 3 + 1 + 2.7 + 1 + 0 + 0) / (2 + 3 + 1 + 4 + 1 + 2 + 5) = 9.7 / 18 = 53.9; the judge's 3 points are dropped
  assert.equal(r.score.overall.score, 9.7);
  assert.equal(r.score.overall.maxScore, 18);
  assert.equal(r.score.overall.pct, 53.9);
  assert.equal(r.score.judgeDroppedMaxScore, 3);
  assert.equal(r.score.byTrajectory.happy_path.pct, 100);
  assert.equal(r.agentRun.exitReason, 'completed');
  assert.equal(r.host, 'itest');

  const report = JSON.parse(readFileSync(join(r.runDir, 'report.json'), 'utf8'));
  assert.equal(report.overall.pct, 53.9);
  assert.equal(report.judgeDroppedMaxScore, 3);
  const nodes = JSON.parse(readFileSync(join(r.runDir, 'node_results.json'), 'utf8')) as { nodeId: string; steps: { inputs: { path?: string } }[] }[];
  const byCaptured = nodes.find((n) => n.nodeId === 'ITEM_BY_CAPTURED_ID')!;
  assert.equal(byCaptured.steps[0].inputs.path, '/items/1', 'resolved inputs are recorded');
  assert.ok(existsSync(join(r.runDir, 'prompt.md')));
  assert.match(readFileSync(join(r.runDir, 'prompt.md'), 'utf8'), /Important Reminder/);

  // search attributes make the rollout findable the way the README says
  const found: string[] = [];
  for await (const wf of env.client.workflow.list({ query: `SaasbenchTask='tiny' AND SaasbenchAgent='oracle' AND SaasbenchSweep='${input.sweep}'` })) found.push(wf.workflowId);
  assert.deepEqual(found, [rolloutWorkflowId(input)]);
  assert.deepEqual(labelledFor(r.rolloutKey), [], 'teardown removed every container, network and volume');
});

test('noop rollout: the health root fails and everything below it is SKIPPED_DEPENDENCY', async () => {
  const r = await runRolloutWorkflow(env, rolloutInput(TINY, 'noop'));
  const st = statusesOf(r);
  assert.equal(st.DEPLOY_HEALTH, 'FAILED');
  assert.equal(Object.values(st).filter((s) => s === 'SKIPPED_DEPENDENCY').length, 7);
  assert.equal(r.score.overall.pct, 0);
  // the PRD reached the workspace with the agent's launch: it is in what the agent left behind
  const prd = spawnSync('tar', ['-xzOf', join(r.runDir, 'workspace.tar.gz'), './task.md'], { encoding: 'utf8' });
  assert.equal(prd.status, 0, prd.stderr);
  assert.equal(prd.stdout, readFileSync(join(TINY, 'task.md'), 'utf8'));
  assert.deepEqual(labelledFor(r.rolloutKey), []);
});

test('two rollouts of the same task run side by side on separate stacks', async () => {
  const a = rolloutInput(TINY, 'oracle', { repeat: 1 });
  const b = { ...a, repeat: 2 };
  const [ra, rb] = await Promise.all([runRolloutWorkflow(env, a), runRolloutWorkflow(env, b)]);
  assert.equal(ra.score.overall.pct, 53.9);
  assert.equal(rb.score.overall.pct, 53.9);
  assert.notEqual(ra.runDir, rb.runDir);
});

test('bad workflow input fails at once, non-retryable, naming the field', async () => {
  const bad = { ...rolloutInput(TINY, 'oracle'), repeat: -1 };
  await assert.rejects(runRolloutWorkflow(env, bad), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError);
    assert.match(String((err.cause as Error).message), /repeat/);
    return true;
  });
});
