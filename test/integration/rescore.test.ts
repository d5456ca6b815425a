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

  assert.match(lock.harness.primitives, /^[0-9a-f]{64}$/);
  assert.match(lock.task.nodes.ITEM_READ, /^[0-9a-f]{64}$/);

  // nothing changed: every outcome reused, not one node evaluated (and no stack started)
  const same = await rescore(r.runDir, log);
  assert.deepEqual(same.lockChanges, []);
  assert.deepEqual(same.evaluated, []);
  assert.deepEqual(Object.fromEntries(same.outcomes.map((o) => [o.nodeId, o.status])), statusesOf(r));
  assert.deepEqual(same.statusChanges, []);

  const dagFile = join(taskDir, 'evaluation', 'dag.json');
  const edit = (f: (nodes: { id: string; description: string; primitive_chain: { inputs: { assertions: { expected: string }[] } }[] }[]) => void) => {
    const dag = JSON.parse(readFileSync(dagFile, 'utf8'));
    f(dag.nodes);
    writeFileSync(dagFile, JSON.stringify(dag));
  };
  // one node's definition changes: that node alone is evaluated; the id ITEM_READ exported (reused) still reaches it
  edit((nodes) => (nodes.find((n) => n.id === 'ITEM_BY_CAPTURED_ID')!.description = 'edited'));
  const one = await rescore(r.runDir, log);
  assert.deepEqual(one.evaluated, [{ nodeId: 'ITEM_BY_CAPTURED_ID', why: 'definition changed' }]);
  const skipped = one.outcomes.filter((o) => o.status === 'SKIPPED_DEPENDENCY').length;
  assert.equal(one.reused.length, one.outcomes.length - 1 - skipped, 'every other node that ran last time is reused');
  assert.ok(one.reused.includes('ITEM_READ') && !one.reused.includes('ITEM_BY_CAPTURED_ID'));
  assert.deepEqual(one.statusChanges, [], 'PASSED again: {{item_id}} came from the reused ITEM_READ');
  assert.deepEqual(one.lockChanges.map((c) => c.path).sort(), ['task.dagSha256', 'task.hash', 'task.nodes.ITEM_BY_CAPTURED_ID']);
  const record = JSON.parse(readFileSync(join(r.runDir, 'rescore.json'), 'utf8'));
  assert.notEqual(record.lock.before.nodes.ITEM_BY_CAPTURED_ID, record.lock.after.nodes.ITEM_BY_CAPTURED_ID);
  assert.equal(record.lock.before.nodes.ITEM_READ, record.lock.after.nodes.ITEM_READ);
  assert.equal(record.lock.before.primitives, record.lock.after.primitives);

  // the next edit is compared with that re-scoring: ITEM_BY_CAPTURED_ID is not evaluated again,
  // but it is skipped now that its prereq fails
  edit((nodes) => (nodes.find((n) => n.id === 'ITEM_READ')!.primitive_chain[2].inputs.assertions[0].expected = 'two'));
  const changed = await rescore(r.runDir, log);
  assert.deepEqual(changed.evaluated.map((e) => e.nodeId), ['ITEM_READ']);
  assert.deepEqual(changed.statusChanges.find((c) => c.nodeId === 'ITEM_READ'), { nodeId: 'ITEM_READ', before: 'PASSED', after: 'FAILED' });
  assert.deepEqual(changed.statusChanges.find((c) => c.nodeId === 'ITEM_BY_CAPTURED_ID'), { nodeId: 'ITEM_BY_CAPTURED_ID', before: 'PASSED', after: 'SKIPPED_DEPENDENCY' });
  assert.deepEqual(changed.statusChanges.length, 2);
  assert.deepEqual(labelledFor(r.rolloutKey), []);
});
