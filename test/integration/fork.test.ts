// Acceptance (issue 14 item 3): `saasbench fork <rollout> --snapshot 1 --agent claude-code --model
// fake-claude` starts a new rollout from a finished tiny rollout's first snapshot. The parent is the
// oracle (it leaves server.pl in the workspace); the fork's scripted model only starts the server
// that is already there, so its deployment passes only if the parent's workspace was restored.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { config } from '../../src/config';
import { repoRoot } from '../../src/paths';
import { rolloutKeyOf, rolloutWorkflowId, type RolloutResult } from '../../src/model/rollout';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import type { FakeServer } from '../fakes/fake-common';
import { rolloutInput } from '../helpers/rollout';
import { devServer } from '../helpers/temporal';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

const ROOT = repoRoot();
const TINY = join(ROOT, 'test', 'fixtures', 'tasks', 'tiny');
const KEY = `sk-ant-fork-${process.pid}-${Date.now().toString(36)}`;
const START_EXISTING = [
  'test -f /app/server.pl && echo restored',
  'if ! (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then cd /app; nohup setsid perl server.pl > server.log 2>&1 < /dev/null & fi',
  'for i in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && break; sleep 0.1; done; echo server started',
].join('\n');

let env: TestWorkflowEnvironment;
let fake: FakeServer;
let worker: WorkerProcess;
let runsDir: string;
const wenv = () => ({
  TEMPORAL_NAMESPACE: 'default',
  SAASBENCH_MODELS_FILE: join(ROOT, 'test', 'fixtures', 'agents', 'models.json'),
  SAASBENCH_ANTHROPIC_BASE_URL: fake.url,
  SAASBENCH_ANTHROPIC_API_KEY: KEY,
  SAASBENCH_AGENT_CLI_RETRIES: '0',
});

before(async () => {
  runsDir = mkdtempSync(join(tmpdir(), 'saasbench-fork-'));
  fake = await startFakeAnthropic({ script: { commands: [START_EXISTING], finalText: 'Started the existing server.' }, requireKey: KEY });
  env = await devServer();
  worker = await startWorkerProcess({ address: env.address, hostId: 'forkhost', runsDir, env: wenv() });
});
after(async () => {
  await worker?.kill();
  writeFileSync(join(runsDir, 'worker.log'), worker?.output() ?? '');
  await env?.teardown();
  await fake?.close();
});

function runCli(cmd: string, args: string[], opts: { env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const t = setTimeout(() => p.kill('SIGKILL'), 120_000);
    p.on('exit', (status) => {
      clearTimeout(t);
      resolve({ status, stdout, stderr });
    });
  });
}

test('fork a finished rollout at its first snapshot with another agent and model: it completes and both reports link each other', async () => {
  const parentInput = rolloutInput(TINY, 'oracle', { snapshotSeconds: 0 });
  const parent: RolloutResult = await env.client.workflow.execute('rolloutWorkflow', { taskQueue: config.sharedQueue(), workflowId: rolloutWorkflowId(parentInput), args: [parentInput] });
  assert.deepEqual(parent.agentRun.snapshots?.map((s) => [s.seq, s.final]), [[1, true]], 'snapshotSeconds 0: the final snapshot only');

  const sweep = `fork${Date.now().toString(36)}`;
  // not spawnSync: the fake LLM answers from this process's event loop
  const cli = await runCli(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'fork', rolloutKeyOf(parentInput), '--snapshot', '1', '--agent', 'claude-code', '--model', 'fake-claude', '--sweep', sweep, '--no-worker', '--no-judge', '--json', '--budget', '60'], {
    env: { ...process.env, ...wenv(), TEMPORAL_ADDRESS: env.address, SAASBENCH_RUNS_DIR: runsDir },
  });
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stderr, /forking rollout\/.*at snapshot .*\/0001/);
  const forkKey = rolloutKeyOf({ sweep, taskId: parentInput.taskId, agent: 'claude-code', model: 'fake-claude', repeat: 0 });
  const forkReport = JSON.parse(readFileSync(join(runsDir, forkKey, 'report.json'), 'utf8'));
  const parentReport = JSON.parse(readFileSync(join(parent.runDir, 'report.json'), 'utf8'));
  assert.equal(forkReport.agentRun.exitReason, 'completed');
  assert.equal(forkReport.statusCounts.PASSED, 5, 'the parent workspace was restored: the server it left answers');
  assert.equal(JSON.parse(cli.stdout).overall.pct, forkReport.overall.pct);
  assert.deepEqual(forkReport.parent, { workflowId: parent.workflowId, rolloutKey: parent.rolloutKey, snapshot: `${parent.rolloutKey}/0001`, runDir: parent.runDir });
  assert.deepEqual(parentReport.children.map((c: { workflowId: string }) => c.workflowId), [forkReport.workflowId]);
  assert.equal(parentReport.children[0].model, 'fake-claude');
  // both pages link each other (sibling run folders): the parent's page was re-rendered with its fork
  const forkLink = new RegExp(`href="\\.\\./${encodeURIComponent(forkKey).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/report\\.html"`);
  assert.match(readFileSync(join(parent.runDir, 'report.html'), 'utf8'), forkLink, "the parent's page links the fork");
  assert.match(readFileSync(join(runsDir, forkKey, 'report.html'), 'utf8'), /forked from<\/dt><dd><a href="\.\.\//, "the fork's page links the parent");
  const found: string[] = [];
  for await (const wf of env.client.workflow.list({ query: `SaasbenchParent = '${parent.workflowId}'` })) found.push(wf.workflowId);
  assert.deepEqual(found, [forkReport.workflowId], 'search attribute SaasbenchParent');
});
