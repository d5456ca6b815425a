import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startWorker, type WorkerHandle } from '../../src/worker/worker';
import { repoRoot } from '../../src/paths';
import { devServer } from '../helpers/temporal';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, runRolloutWorkflow, statusesOf } from '../helpers/rollout';

const HELPDESK = join(repoRoot(), 'tasks', 'helpdesk');
let env: TestWorkflowEnvironment;
let worker: WorkerHandle;

before(async () => {
  process.env.SAASBENCH_RUNS_DIR = mkdtempSync(join(tmpdir(), 'saasbench-runs-'));
  delete process.env.ANTHROPIC_API_KEY;
  delete process.env.SAASBENCH_JUDGE_API_KEY;
  env = await devServer();
  worker = await startWorker({ address: env.address, namespace: 'default', hostId: 'helpdesk-itest' });
});

after(async () => {
  await worker?.shutdown();
  await env?.teardown();
});

test('helpdesk with the oracle: every deterministic node passes; judge nodes SKIPPED_LLM and out of the denominator', async () => {
  // judge enabled in settings, but no API key on this worker: the judge is unavailable
  const r = await runRolloutWorkflow(env, rolloutInput(HELPDESK, 'oracle', { evaluation: { parallelism: 8, judge: { enabled: true, model: 'claude-sonnet-4-5-20250929' } } }));
  const notPassed = r.outcomes.filter((o) => o.method !== 'llm-judge' && o.status !== 'PASSED');
  assert.deepEqual(notPassed.map((o) => `${o.nodeId}: ${o.message}`), []);
  assert.equal(r.score.nonLlm.pct, 100);
  const judges = r.outcomes.filter((o) => o.method === 'llm-judge');
  assert.ok(judges.length >= 4);
  assert.ok(judges.every((o) => o.status === 'SKIPPED_LLM'));
  const judgeMax = judges.reduce((a, o) => a + o.maxScore, 0);
  const allMax = r.outcomes.reduce((a, o) => a + o.maxScore, 0);
  assert.equal(r.score.judgeDroppedMaxScore, judgeMax);
  assert.equal(r.score.overall.maxScore, allMax - judgeMax, 'judge maxScore left the denominator');
  assert.equal(r.score.overall.pct, 100);
  for (const b of ['Deploy', 'Data', 'API', 'Logic', 'AuthZ', 'Quality']) assert.ok(r.score.byBackbone[b], `backbone ${b} covered`);
  assert.deepEqual(labelledFor(r.rolloutKey), []);
});

test('helpdesk with noop: deployment health fails, >= 80% of nodes SKIPPED_DEPENDENCY, score below 10', async () => {
  const r = await runRolloutWorkflow(env, rolloutInput(HELPDESK, 'noop'));
  const st = statusesOf(r);
  assert.equal(st.DEPLOY_HEALTH, 'FAILED');
  const skipped = Object.values(st).filter((s) => s === 'SKIPPED_DEPENDENCY').length;
  assert.ok(skipped / r.outcomes.length >= 0.8, `${skipped}/${r.outcomes.length} skipped`);
  assert.ok((r.score.overall.pct ?? 0) < 10);
  assert.deepEqual(labelledFor(r.rolloutKey), []);
});
