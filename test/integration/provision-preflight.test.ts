// The image preflight on the worker: a rollout whose stack needs an image this host cannot have
// fails in provision at once (non-retryable, one error naming the image, nothing started); the
// rollout input's image map reaches provision, runs the stack and is recorded in lock.json.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { RetryState } from '@temporalio/common';
import { startWorker, type WorkerHandle } from '../../src/worker/worker';
import { repoRoot } from '../../src/paths';
import { rolloutKeyOf } from '../../src/model/rollout';
import { devServer } from '../helpers/temporal';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, runRolloutWorkflow } from '../helpers/rollout';

let env: TestWorkflowEnvironment;
let worker: WorkerHandle;
let taskDir: string;
let runsDir: string;

before(async () => {
  process.env.SAASBENCH_NO_REGISTRY = '1';
  runsDir = mkdtempSync(join(tmpdir(), 'saasbench-runs-'));
  process.env.SAASBENCH_RUNS_DIR = runsDir;
  // the tiny fixture, its app on an image no host has
  taskDir = join(mkdtempSync(join(tmpdir(), 'preflight-task-')), 'tiny');
  cpSync(join(repoRoot(), 'test', 'fixtures', 'tasks', 'tiny'), taskDir, { recursive: true });
  const compose = join(taskDir, 'environment', 'docker-compose.yml');
  writeFileSync(compose, readFileSync(compose, 'utf8').replace('image: saasbench/base:bookworm', 'image: example/registry-only:1'));
  env = await devServer();
  worker = await startWorker({ address: env.address, namespace: 'default', hostId: 'preflight-itest' });
});

after(async () => {
  await worker?.shutdown();
  await env?.teardown();
  delete process.env.SAASBENCH_NO_REGISTRY;
  rmSync(join(taskDir, '..'), { recursive: true, force: true });
});

test('an image the host cannot have fails provision at once, naming it; nothing is started', async () => {
  const input = rolloutInput(taskDir, 'noop');
  const started = Date.now();
  await assert.rejects(runRolloutWorkflow(env, input), (e: unknown) => {
    assert.ok(e instanceof WorkflowFailedError, String(e));
    const act = e.cause;
    assert.ok(act instanceof ActivityFailure && act.activityType === 'provision', String(act));
    const app = act.cause;
    assert.ok(app instanceof ApplicationFailure);
    assert.equal(app.type, 'ImagePreflightError');
    assert.equal(act.retryState, RetryState.NON_RETRYABLE_FAILURE, 'not retried: the type is non-retryable');
    assert.match(app.message, /task tiny: 1 image is not available on this host:\n {2}app: image example\/registry-only:1 is not present locally and cannot be pulled/);
    return true;
  });
  console.log(`# provision preflight failed the rollout in ${Date.now() - started} ms`);
  assert.deepEqual(labelledFor(rolloutKeyOf(input)), []);
});

test('the input\'s image map reaches provision: the stack runs on the mapped image and lock.json records the map', async () => {
  const imageMap = { 'example/registry-only:*': 'saasbench/base:bookworm' };
  const input = rolloutInput(taskDir, 'noop', { imageMap });
  const r = await runRolloutWorkflow(env, input);
  const lock = JSON.parse(readFileSync(join(r.runDir, 'lock.json'), 'utf8'));
  assert.deepEqual(lock.imageMap, imageMap);
  assert.equal(lock.images.app.ref, 'saasbench/base:bookworm');
  assert.ok(existsSync(join(r.runDir, 'report.json')));
  assert.deepEqual(labelledFor(rolloutKeyOf(input)), []);
});
