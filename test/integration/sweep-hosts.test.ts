import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { devServer } from '../helpers/temporal';
import { activitiesOf, executeSweep, spawnWorker, sweepInput, uniqueName, type WorkerProcess } from './sweep-support';

let env: TestWorkflowEnvironment;
let runsDir: string;
const workers: WorkerProcess[] = [];

before(async () => {
  runsDir = mkdtempSync(join(tmpdir(), 'saasbench-sweep-hosts-'));
  env = await devServer();
  // two worker hosts, each in its own process: both poll `saasbench`, each its own host queue
  workers.push(...(await Promise.all([spawnWorker(env.address, 'hostA', runsDir, runsDir), spawnWorker(env.address, 'hostB', runsDir, runsDir)])));
});

after(async () => {
  for (const w of workers) await w.kill('SIGTERM');
  await env?.teardown();
});

test('acceptance 4: two worker hosts — every activity of a rollout ran on the host that provisioned it', async () => {
  const name = uniqueName('hosts');
  const r = await executeSweep(env.client, sweepInput(name, { repeats: 2, concurrency: 4 }));
  assert.equal(r.counts.completed, 8);
  const perHost: Record<string, number> = {};
  for (const x of r.rollouts) {
    const host = x.host!;
    perHost[host] = (perHost[host] ?? 0) + 1;
    assert.ok(['hostA', 'hostB'].includes(host), host);
    assert.equal(JSON.parse(readFileSync(join(x.runDir!, 'rollout.json'), 'utf8')).host, host, 'rollout.json names the host');
    const acts = await activitiesOf(env.client, x.workflowId);
    const prov = acts.filter((a) => a.type === 'provision');
    assert.equal(prov.length, 1);
    assert.equal(prov[0].taskQueue, 'saasbench', 'provision goes to the shared queue');
    const rest = acts.filter((a) => a.type !== 'provision');
    // provision prepared the workspace; the rest ran on the host queue
    for (const t of ['runAgent', 'evaluateNode', 'persistResults', 'teardown']) assert.ok(rest.some((a) => a.type === t), `${x.workflowId}: ${t} ran`);
    for (const a of rest) {
      assert.equal(a.taskQueue, `saasbench-host-${host}`, `${x.workflowId}: ${a.type} scheduled on the host queue`);
      assert.equal(a.identity, prov[0].identity, `${x.workflowId}: ${a.type} ran in the worker process that provisioned`);
    }
  }
  process.stderr.write(`rollouts per host: ${JSON.stringify(perHost)}\n`);
  assert.equal(Object.values(perHost).reduce((a, b) => a + b, 0), 8);
});
