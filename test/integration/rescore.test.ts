import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { log } from '../../src/log';
import { rescore } from '../../src/evaluation/rescore';
import { startWorker, type WorkerHandle } from '../../src/worker/worker';
import { repoRoot } from '../../src/paths';
import type { RolloutResult } from '../../src/model/rollout';
import { devServer } from '../helpers/temporal';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, runRolloutWorkflow, statusesOf } from '../helpers/rollout';

let env: TestWorkflowEnvironment;
let worker: WorkerHandle;
const taskDir = join(mkdtempSync(join(tmpdir(), 'rescore-task-')), 'tiny');

before(async () => {
  cpSync(join(repoRoot(), 'test', 'fixtures', 'tasks', 'tiny'), taskDir, { recursive: true });
  process.env.SAASBENCH_RUNS_DIR = mkdtempSync(join(tmpdir(), 'saasbench-runs-'));
  env = await devServer();
  worker = await startWorker({ address: env.address, namespace: 'default', hostId: 'rescore-itest' });
});

after(async () => {
  await worker?.shutdown();
  await env?.teardown();
});

test('rescore re-runs the evaluation on the preserved workspace: same statuses; an edited DAG shows up as a changed lock', async () => {
  const r: RolloutResult = await runRolloutWorkflow(env, rolloutInput(taskDir, 'oracle'));
  assert.ok(existsSync(join(r.runDir, 'workspace.tar.gz')), 'workspace snapshot kept with the results');
  const lock = JSON.parse(readFileSync(join(r.runDir, 'lock.json'), 'utf8'));
  assert.match(lock.task.hash, /^[0-9a-f]{64}$/);
  assert.ok(lock.images.app.id?.startsWith('sha256:'));
  assert.equal(lock.agent.name, 'oracle');

  const same = await rescore(r.runDir, log);
  assert.deepEqual(same.lockChanges, []);
  assert.deepEqual(Object.fromEntries(same.outcomes.map((o) => [o.nodeId, o.status])), statusesOf(r));
  assert.deepEqual(same.statusChanges, []);

  const dagFile = join(taskDir, 'evaluation', 'dag.json');
  const dag = JSON.parse(readFileSync(dagFile, 'utf8'));
  dag.nodes.find((n: { id: string }) => n.id === 'ITEM_READ').primitive_chain[2].inputs.assertions[0].expected = 'two';
  writeFileSync(dagFile, JSON.stringify(dag));
  const changed = await rescore(r.runDir, log);
  assert.deepEqual(changed.lockChanges.map((c) => c.path).sort(), ['task.dagSha256', 'task.hash']);
  assert.deepEqual(changed.statusChanges.find((c) => c.nodeId === 'ITEM_READ'), { nodeId: 'ITEM_READ', before: 'PASSED', after: 'FAILED' });
  assert.deepEqual(labelledFor(r.rolloutKey), []);
});
