import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { repoRoot } from '../../src/paths';
import { sweepWorkflowId, type SweepProgress, type SweepResult } from '../../src/model/sweep';
import { devServer } from '../helpers/temporal';
import { labelledFor } from '../helpers/docker';
import { activitiesOf, rolloutExecutions, spawnWorker, sweepInput, TINY2, uniqueName, until, type WorkerProcess } from './sweep-support';

const run = promisify(execFile);
let env: TestWorkflowEnvironment;
let runsDir: string;
const workers: WorkerProcess[] = [];

before(async () => {
  runsDir = mkdtempSync(join(tmpdir(), 'saasbench-sweep-kill-'));
  env = await devServer();
});

after(async () => {
  for (const w of workers) await w.kill('SIGTERM');
  await env?.teardown();
});

/** `saasbench sweep <file> --no-worker` against the test server: validates, starts or attaches, follows, prints the leaderboard. */
function cliSweep(file: string) {
  return run(process.execPath, [join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), 'sweep', file, '--no-worker'], {
    cwd: repoRoot(),
    env: { ...process.env, TEMPORAL_ADDRESS: env.address, SAASBENCH_RUNS_DIR: runsDir },
    timeout: 240_000,
  });
}

test('acceptance 3: kill the worker mid-sweep, restart it, re-submit — every rollout runs exactly once', async () => {
  const name = uniqueName('kill');
  // heartbeats every activity; a 5 s heartbeat timeout makes the dead worker's tasks move on quickly
  const input = sweepInput(name, { tasks: [TINY2], agents: ['oracle', 'noop'], repeats: 3, concurrency: 2, budgets: { heartbeatSeconds: 5 } });
  const file = join(runsDir, `${name}.json`);
  writeFileSync(file, JSON.stringify(input, null, 2));

  const first = await spawnWorker(env.address, 'killhost', runsDir, runsDir);
  workers.push(first);
  const handle = await env.client.workflow.start('sweepWorkflow', { taskQueue: 'saasbench', workflowId: sweepWorkflowId(name), args: [input] });
  let atKill: SweepProgress | null = null;
  await until(
    async () => {
      const p = await handle.query<SweepProgress>('progress').catch(() => null);
      atKill = p;
      return !!p && p.counts.completed >= 1 && p.counts.running >= 1 && p.counts.pending >= 1;
    },
    60_000,
    'a sweep with finished, running and pending rollouts',
    100,
  );
  await first.kill('SIGKILL');
  const p = atKill as SweepProgress | null;
  assert.ok(p && p.counts.running >= 1, 'killed with rollouts in flight');

  const second = await spawnWorker(env.address, 'killhost', runsDir, runsDir);
  workers.push(second);
  // re-submit while it runs: the CLI attaches to the running sweep instead of starting another
  const resubmit = await cliSweep(file);
  assert.match(resubmit.stderr, new RegExp(`attached to the running sweep/${name}`));
  assert.match(resubmit.stdout, /1\s+oracle\s+none\s+76\.67/);
  const r = (await handle.result()) as SweepResult;
  assert.equal(r.counts.completed, 6, JSON.stringify(r.counts));

  const execs = await rolloutExecutions(env.client, name);
  assert.equal(execs.length, 6, 'one rollout execution per id');
  assert.equal(new Set(execs.map((e) => e.workflowId)).size, 6);
  for (const e of execs) {
    const acts = await activitiesOf(env.client, e.workflowId);
    assert.equal(acts.filter((a) => a.type === 'provision').length, 1, `${e.workflowId} provisioned once`);
    assert.equal(acts.filter((a) => a.type === 'runAgent').length, 1, `${e.workflowId} ran its agent activity once (retried attempts re-attach)`);
  }
  for (const x of r.rollouts) assert.ok(existsSync(join(x.runDir!, 'rollout.json')));

  // and once finished: a re-submit starts a new sweep run that reuses every result
  const again = await cliSweep(file);
  assert.match(again.stderr, new RegExp(`started sweep/${name}`));
  assert.match(again.stdout, /1\s+oracle\s+none\s+76\.67/);
  assert.equal((await rolloutExecutions(env.client, name)).length, 6, 'still one execution per rollout');
  assert.deepEqual(labelledFor(name), [], 'every stack torn down');
});
