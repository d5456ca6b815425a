// Acceptance (issue 14 item 2): a real Claude Code rollout on worker host A (scripted fake LLM on
// 127.0.0.1) snapshots every 3 s; host A's worker is SIGKILLed and its rollout containers removed;
// the rollout is provisioned again on host B, restored from the latest snapshot, the agent's session
// resumed (the fake sees the earlier conversation in the resumed request), and it scores like an
// undisturbed run of the same script (the tiny oracle's statuses, as test/integration/agents-cli.test.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { config } from '../../src/config';
import { repoRoot } from '../../src/paths';
import { RESUME_PROMPT } from '../../src/agents/claude-code';
import { rolloutKeyOf, rolloutWorkflowId, type RolloutResult } from '../../src/model/rollout';
import { startFakeAnthropic, toolResultsSoFar } from '../fakes/fake-anthropic';
import type { FakeServer } from '../fakes/fake-common';
import { TINY_BUILD } from '../fixtures/agents/scripts';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, statusesOf } from '../helpers/rollout';
import { devServer } from '../helpers/temporal';
import { progressOf, until } from '../helpers/wait';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

const ROOT = repoRoot();
const TINY = join(ROOT, 'test', 'fixtures', 'tasks', 'tiny');
const KEY = `sk-ant-move-${process.pid}-${Date.now().toString(36)}`;
const SNAPSHOT_SECONDS = 3;
// what the real Claude Code scores on the tiny task with TINY_BUILD, undisturbed (agents-cli.test.ts)
const UNDISTURBED = { DEPLOY_HEALTH: 'PASSED', ITEM_READ: 'PASSED', ITEM_BY_CAPTURED_ID: 'PASSED', WEIGHTED_MIX: 'PASSED', FILES_PRESENT: 'PASSED', NEVER_RUNS: 'FAILED', AFTER_FAIL: 'SKIPPED_DEPENDENCY', CODE_QUALITY: 'SKIPPED_LLM' };

let env: TestWorkflowEnvironment;
let fake: FakeServer;
let runsDir: string;
const workers: WorkerProcess[] = [];
let held = 0;

before(async () => {
  runsDir = mkdtempSync(join(tmpdir(), 'saasbench-move-'));
  // step 1 builds and starts the app, step 2 writes a marker, step 3 (re)starts the app (idempotent:
  // on the new host the process is gone); the answer after step 2 is held once, so host A dies while
  // the agent waits for its model with both tool results in its session
  fake = await startFakeAnthropic({
    script: { commands: [TINY_BUILD.commands[0], 'echo two > /app/step2.txt && echo step two', TINY_BUILD.commands[0]], finalText: TINY_BUILD.finalText },
    requireKey: KEY,
    delayFor: (body) => (Array.isArray(body.tools) && toolResultsSoFar(body.messages as unknown[]) === 2 && held++ === 0 ? 120_000 : 0),
  });
  env = await devServer();
});

after(async () => {
  for (const w of workers) await w.kill().catch(() => undefined);
  await env?.teardown();
  await fake?.close();
});

function workerEnv(): Record<string, string> {
  return {
    TEMPORAL_NAMESPACE: 'default',
    SAASBENCH_MODELS_FILE: join(ROOT, 'test', 'fixtures', 'agents', 'models.json'),
    SAASBENCH_ANTHROPIC_BASE_URL: fake.url,
    SAASBENCH_ANTHROPIC_API_KEY: KEY,
    SAASBENCH_AGENT_CLI_RETRIES: '0',
    SAASBENCH_REAP_INTERVAL_SECONDS: '0',
  };
}

function snapshotsOf(key: string): { seq: number; takenAt: number }[] {
  const dir = join(runsDir, '.snapshots', key);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => existsSync(join(dir, d, 'meta.json')))
    .map((d) => JSON.parse(readFileSync(join(dir, d, 'meta.json'), 'utf8')) as { seq: number; takenAt: number });
}

test('host A dies mid-agent: the rollout finishes on host B from the latest snapshot, the session resumed, the score unchanged', async () => {
  const input = rolloutInput(TINY, 'claude-code', { model: 'fake-claude', heartbeatSeconds: 5, hostLossSeconds: 5, snapshotSeconds: SNAPSHOT_SECONDS, agentRetry: { transientRetries: 0, backoffSeconds: 1, onLostProcess: 'resume' } });
  const key = rolloutKeyOf(input);
  // only host A polls the shared queue when the rollout starts: it provisions
  const a = await startWorkerProcess({ address: env.address, hostId: 'moveA', runsDir, env: workerEnv() });
  workers.push(a);
  const h = await env.client.workflow.start('rolloutWorkflow', { taskQueue: config.sharedQueue(), workflowId: rolloutWorkflowId(input), args: [input] });
  await until('agent phase on host A', async () => (await progressOf(h)).phase === 'agent', 60_000, 500);
  const b = await startWorkerProcess({ address: env.address, hostId: 'moveB', runsDir, env: workerEnv() });
  workers.push(b);
  // the agent waits on its held model answer; a snapshot after that holds both tool results
  const heldAt = await until('the answer after step 2 is held', async () => fake.modelCalls().find((c) => Array.isArray((c.body as { tools?: unknown }).tools) && toolResultsSoFar((c.body as { messages: unknown[] }).messages) === 2)?.at, 60_000, 200);
  await until('a snapshot after step 2', async () => snapshotsOf(key).some((s) => s.takenAt > heldAt + 500), 30_000, 300);
  await a.kill('SIGKILL');
  const ids = execFileSync('docker', ['ps', '-aq', '--filter', `label=saasbench.rollout=${key}`], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  assert.ok(ids.length > 0, 'host A had containers');
  execFileSync('docker', ['rm', '-f', ...ids]);

  const r: RolloutResult = await h.result();
  assert.equal(r.host, 'moveB');
  assert.equal(r.moves?.length, 1, JSON.stringify(r.moves));
  const m = r.moves![0];
  assert.deepEqual([m.fromHost, m.toHost], ['moveA', 'moveB']);
  assert.match(m.reason, /unpolled/);
  const last = snapshotsOf(key).filter((s) => s.takenAt <= Date.now()).sort((x, y) => x.seq - y.seq);
  assert.ok(m.snapshot && last.some((s) => m.snapshot!.endsWith(String(s.seq).padStart(4, '0'))), `snapshot ${m.snapshot}`);
  assert.ok(m.secondsLost <= SNAPSHOT_SECONDS + 3, `agent seconds lost ${m.secondsLost} ≤ the snapshot interval (+ one poll)`);
  // the resumed session: its first request carries the earlier conversation and the resume prompt
  const resumed = fake.modelCalls().filter((c) => JSON.stringify(c.body).includes(RESUME_PROMPT.slice(0, 40)));
  assert.ok(resumed.length > 0, 'the fake saw the resumed session');
  const body = resumed[0].body as { messages: unknown[] };
  assert.ok(toolResultsSoFar(body.messages) >= 2, 'the resumed request holds the earlier tool results');
  assert.equal(r.agentRun.exitReason, 'completed', r.agentRun.message);
  assert.equal(r.agentRun.history[0].exitReason, 'infrastructure');
  assert.deepEqual(statusesOf(r), UNDISTURBED);
  const report = JSON.parse(readFileSync(join(r.runDir, 'report.json'), 'utf8'));
  assert.deepEqual(report.moves, r.moves);
  assert.deepEqual(labelledFor(key), [], 'host B tore its stack down');
});
