// The real Claude Code CLI (Anthropic Messages) in the tiny task's container, on a model served over
// Chat Completions: the per-rollout relay translates both ways (issue 13 item 1). A real Temporal
// dev server and a real worker started as a child process, as in agents-cli.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { repoRoot } from '../../src/paths';
import { startFakeOpenAI } from '../fakes/fake-openai';
import type { FakeServer } from '../fakes/fake-common';
import { TINY_BUILD } from '../fixtures/agents/scripts';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, runRolloutWorkflow, statusesOf } from '../helpers/rollout';
import { devServer } from '../helpers/temporal';

const ROOT = repoRoot();
const TINY = join(ROOT, 'test', 'fixtures', 'tasks', 'tiny');
const KEY = `sk-compat-planted-${process.pid}-${Date.now().toString(36)}-5d1b`;

let env: TestWorkflowEnvironment;
let worker: ChildProcess;
let workerLog = '';
let chat: FakeServer;

before(async () => {
  chat = await startFakeOpenAI({ script: TINY_BUILD, requireKey: KEY });
  env = await devServer();
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(ANTHROPIC|OPENAI|CLAUDE|CODEX)_/.test(k)) childEnv[k] = v;
  Object.assign(childEnv, {
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: 'default',
    SAASBENCH_RUNS_DIR: mkdtempSync(join(tmpdir(), 'saasbench-gateway-')),
    SAASBENCH_HOST_ID: 'gateway-itest',
    SAASBENCH_LOG_LEVEL: 'debug',
    SAASBENCH_MODELS_FILE: join(ROOT, 'test', 'fixtures', 'agents', 'models.json'),
    SAASBENCH_OPENAI_COMPAT_BASE_URL: `${chat.url}/v1`,
    SAASBENCH_OPENAI_COMPAT_API_KEY: KEY,
    SAASBENCH_AGENT_CLI_RETRIES: '0',
  });
  worker = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'worker', '--host-id', 'gateway-itest'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (b: Buffer) => (workerLog += b.toString('utf8'));
  worker.stdout!.on('data', collect);
  worker.stderr!.on('data', collect);
  const deadline = Date.now() + 60_000;
  while (!/polling/.test(workerLog)) {
    if (worker.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start:\n${workerLog}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

after(async () => {
  if (worker && worker.exitCode === null) {
    worker.kill('SIGTERM');
    await new Promise<void>((r) => {
      const t = setTimeout(() => {
        worker.kill('SIGKILL');
        r();
      }, 15_000);
      worker.once('exit', () => {
        clearTimeout(t);
        r();
      });
    });
  }
  await env?.teardown();
  await chat?.close();
});

test('claude-code on a Chat Completions model: the relay translates; the real CLI builds the tiny app and deployment passes', async () => {
  const input = rolloutInput(TINY, 'claude-code', { model: 'fake-chat', agentRetry: { transientRetries: 0, backoffSeconds: 2, onLostProcess: 'resume' } });
  const r = await runRolloutWorkflow(env, input);
  assert.deepEqual(labelledFor(r.rolloutKey), [], 'teardown removed the stack');
  assert.equal(r.agentRun.exitReason, 'completed', r.agentRun.message);
  assert.equal(statusesOf(r).DEPLOY_HEALTH, 'PASSED');
  const calls = chat.modelCalls();
  assert.ok(calls.length >= 3, `the scripted steps went through the Chat upstream (${calls.length} calls)`);
  for (const c of calls) {
    assert.equal(c.path, '/v1/chat/completions');
    assert.equal(c.auth, 'ok', 'the relay injected the real key');
    assert.equal(c.foreignCredential, undefined, 'the relay token never reached the upstream');
    assert.equal(c.model, 'gpt-fake-chat', 'every call names the rollout snapshot');
  }
  const stats = JSON.parse(readFileSync(join(r.runDir, 'agent', 'relay-stats.json'), 'utf8')) as { translated: number; usage: { requests: number; input: number; output: number } };
  assert.ok(stats.translated >= calls.length);
  assert.ok(stats.usage.requests >= 3 && stats.usage.input >= 300 * 3 && stats.usage.output > 0, JSON.stringify(stats.usage));
  assert.ok(!workerLog.includes(KEY), 'the key is in no worker log line');
});
