import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { config } from '../../src/config';
import { connectClient, type ConnectedClient } from '../../src/temporal/connection';
import { ensureDevServer, stopDevServer, type DevServerOptions } from '../../src/temporal/dev-server';
import { repoRoot } from '../../src/paths';
import { rolloutWorkflowId, type RolloutInput, type RolloutResult } from '../../src/model/rollout';
import { labelledLeftovers } from '../helpers/docker';
import { reapDeadRollouts } from '../../src/worker/reaper';
import { rolloutInput, statusesOf } from '../helpers/rollout';
import { progressOf, until } from '../helpers/wait';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

const SLOW = join(repoRoot(), 'test', 'fixtures', 'tasks', 'slow');
const runsDir = mkdtempSync(join(tmpdir(), 'saasbench-durability-'));
let server: DevServerOptions;
let conn: ConnectedClient;
let address: string;
let baseline: RolloutResult;
const workers: WorkerProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

async function worker(hostId = 'durable-host'): Promise<WorkerProcess> {
  const w = await startWorkerProcess({ address, hostId, runsDir });
  workers.push(w);
  return w;
}

function input(over: Partial<RolloutInput> = {}): RolloutInput {
  return rolloutInput(SLOW, 'oracle', { heartbeatSeconds: 5, evaluation: { parallelism: 2, judge: { enabled: false, model: 'x' } }, ...over });
}

async function start(c: Client, i: RolloutInput): Promise<WorkflowHandle> {
  return c.workflow.start('rolloutWorkflow', { taskQueue: config.sharedQueue(), workflowId: rolloutWorkflowId(i), args: [i] });
}

const scoresOf = (r: RolloutResult) => Object.fromEntries(r.outcomes.map((o) => [o.nodeId, `${o.status}:${o.score}`]));

function agentLog(r: RolloutResult, attempt = 1): string {
  return readFileSync(join(r.runDir, 'agent', `attempt-${attempt}`, 'stdout.log'), 'utf8');
}

function appContainer(rolloutKey: string): string {
  return execFileSync('docker', ['ps', '-q', '--filter', `label=saasbench.rollout=${rolloutKey}`, '--filter', 'label=saasbench.service=app'], { encoding: 'utf8' }).trim();
}

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'saasbench-temporal-'));
  server = { port: await freePort(), uiPort: await freePort(), dbFile: join(dir, 'dev.db'), logFile: join(dir, 'temporal.log'), pidFile: join(dir, 'dev.pid'), ignoreTemporalAddress: true };
  const h = await ensureDevServer(server);
  address = h.address;
  conn = await connectClient(h);
  await worker();
  baseline = await (await start(conn.client, input())).result();
});

after(async () => {
  for (const w of workers) await w.kill().catch(() => undefined);
  await conn?.connection.close().catch(() => undefined);
  await stopDevServer(server).catch(() => undefined);
});

test('undisturbed baseline: the slow task scores as designed', () => {
  assert.equal(baseline.agentRun.exitReason, 'completed');
  assert.equal(baseline.agentRun.history.length, 1);
  assert.equal(statusesOf(baseline).DEPLOY_HEALTH, 'PASSED');
  // SLOW_6 (binary) and SLOW_3 (weighted, 2 of 3 pass) expect a 404 from an endpoint that answers 200
  assert.equal(statusesOf(baseline).SLOW_6, 'FAILED');
  assert.equal(baseline.outcomes.find((o) => o.nodeId === 'SLOW_3')!.score, 2);
});

test('SIGKILL the worker while the agent runs: the same agent process is re-attached and the result is unchanged', async () => {
  const i = input();
  const h = await start(conn.client, i);
  await until('agent phase with ticks', async () => (await progressOf(h)).phase === 'agent');
  await new Promise((r) => setTimeout(r, 3000));
  await workers[workers.length - 1].kill();
  await new Promise((r) => setTimeout(r, 1000));
  await worker();
  const r: RolloutResult = await h.result();
  assert.equal(r.agentRun.history.length, 1, 'one agent process for the whole run');
  assert.equal(r.agentRun.exitReason, 'completed');
  const ticks = agentLog(r).split('\n').filter((l) => l.startsWith('tick'));
  assert.deepEqual(ticks.map((l) => Number(l.split(' ')[1])), Array.from({ length: 12 }, (_, k) => k + 1), 'its log is uninterrupted');
  assert.equal(new Set(ticks.map((l) => l.split(' ')[3])).size, 1, 'every tick came from the same process');
  assert.deepEqual(scoresOf(r), scoresOf(baseline));
});

test('SIGKILL the worker during evaluation: node results are identical to an undisturbed run', async () => {
  const h = await start(conn.client, input());
  await until('evaluation under way', async () => {
    const p = await progressOf(h);
    return p.phase === 'evaluating' && p.nodesDone >= 2;
  });
  await workers[workers.length - 1].kill();
  await worker();
  const r: RolloutResult = await h.result();
  assert.deepEqual(scoresOf(r), scoresOf(baseline));
  assert.equal(r.score.overall.pct, baseline.score.overall.pct);
});

test('stop and restart the Temporal dev server (same db file) mid-rollout: the rollout completes', async () => {
  const i = input();
  const h = await start(conn.client, i);
  await until('agent phase', async () => (await progressOf(h)).phase === 'agent');
  await stopDevServer(server);
  await new Promise((r) => setTimeout(r, 2000));
  await ensureDevServer(server);
  const r: RolloutResult = await until('result after restart', async () => {
    const c = await connectClient({ address });
    try {
      return await c.client.workflow.getHandle(rolloutWorkflowId(i)).result();
    } finally {
      await c.connection.close();
    }
  }, 180_000, 1000);
  assert.deepEqual(scoresOf(r), scoresOf(baseline));
});

test('kill the agent process itself: its session is resumed with the remaining budget', async () => {
  const i = input({ budgetSeconds: 600 });
  const h = await start(conn.client, i);
  await until('agent phase', async () => (await progressOf(h)).phase === 'agent');
  await new Promise((r) => setTimeout(r, 3000));
  const c = await until('app container', async () => appContainer(rolloutKeyFor(i)));
  execFileSync('docker', ['exec', c, 'bash', '-c', 'kill -9 -$(cat /tmp/.saasbench/agent/attempt-1/pid)']);
  const r: RolloutResult = await h.result();
  assert.equal(r.agentRun.history.length, 2);
  assert.equal(r.agentRun.history[0].exitReason, 'infrastructure');
  assert.match(r.agentRun.history[0].transient ?? '', /lost/);
  assert.equal(r.agentRun.history[1].exitReason, 'completed');
  assert.ok(r.agentRun.agentSeconds < 600);
  const resumed = agentLog(r, 2).split('\n').filter((l) => l.startsWith('tick'));
  assert.ok(resumed.length > 0 && resumed.length < 12, 'the resumed session continued where the first one stopped');
  assert.deepEqual(scoresOf(r), scoresOf(baseline));
});

test('kill the agent process with resume disabled: the rollout ends with an infrastructure-failure reason, still scored', async () => {
  const i = input({ agentRetry: { transientRetries: 1, backoffSeconds: 60, onLostProcess: 'fail' } });
  const h = await start(conn.client, i);
  await until('agent phase', async () => (await progressOf(h)).phase === 'agent');
  await new Promise((r) => setTimeout(r, 2000));
  const c = await until('app container', async () => appContainer(rolloutKeyFor(i)));
  execFileSync('docker', ['exec', c, 'bash', '-c', 'kill -9 -$(cat /tmp/.saasbench/agent/attempt-1/pid)']);
  const r: RolloutResult = await h.result();
  assert.equal(r.agentRun.exitReason, 'infrastructure');
  assert.match(r.agentRun.message, /disappeared without an exit record.*resume is disabled/);
  assert.equal(statusesOf(r).DEPLOY_HEALTH, 'FAILED');
});

test('a terminated workflow never runs its teardown: the reaper removes its stack', async () => {
  const i = input();
  const h = await start(conn.client, i);
  await until('agent phase', async () => (await progressOf(h)).phase === 'agent');
  await h.terminate('test: simulate an operator terminating the rollout');
  const key = rolloutKeyFor(i);
  assert.notEqual(appContainer(key), '', 'the stack is still there after terminate');
  const removed = await reapDeadRollouts(conn.client, `${address}/default`);
  assert.ok(removed.includes(key), `reaped ${removed.join(', ')}`);
  assert.equal(appContainer(key), '');
});

test('after the durability scenarios no labelled container, network or volume remains', () => {
  const mine = labelledLeftovers().filter((l) => l.includes('.slow.') || l.includes('-slow-'));
  assert.deepEqual(mine, []);
});

function rolloutKeyFor(i: RolloutInput): string {
  return [i.sweep, i.taskId, i.agent, i.model, String(i.repeat)].join('.');
}
