// The real OpenHands 1.6.0 (PyPI, CodeActAgent, local runtime) driving the tiny task's container
// with `docker exec`, against the fake OpenAI-compatible Chat Completions endpoint through the relay.
// Needs the OpenHands runtime image and venv (node dist/src/agents/openhands/runtime.js, ~5 min on
// first use): skipped when they are absent unless SAASBENCH_TEST_OPENHANDS=1 (then installed here).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { containerName, projectName } from '../../src/sandbox';
import { startWorker, type WorkerHandle } from '../../src/worker/worker';
import { repoRoot } from '../../src/paths';
import { rolloutKeyOf } from '../../src/model/rollout';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import { startFakeOpenAI } from '../fakes/fake-openai';
import type { FakeServer } from '../fakes/fake-common';
import { TINY_BUILD } from '../fixtures/agents/scripts';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, runRolloutWorkflow, statusesOf } from '../helpers/rollout';
import { devServer } from '../helpers/temporal';
import { openhandsSkip } from '../helpers/openhands';

const ROOT = repoRoot();
const TINY = join(ROOT, 'test', 'fixtures', 'tasks', 'tiny');
const KEY = `sk-compat-planted-${process.pid}-${Date.now().toString(36)}`;

const skip = openhandsSkip();

let env: TestWorkflowEnvironment;
let worker: WorkerHandle;
let fake: FakeServer;
let anthropicFake: FakeServer;

before(async () => {
  if (skip) return;
  fake = await startFakeOpenAI({ script: { commands: [] }, requireKey: KEY });
  anthropicFake = await startFakeAnthropic({ script: { commands: [] }, requireKey: KEY });
  Object.assign(process.env, {
    SAASBENCH_RUNS_DIR: mkdtempSync(join(tmpdir(), 'saasbench-openhands-')),
    SAASBENCH_MODELS_FILE: join(ROOT, 'test', 'fixtures', 'agents', 'models.json'),
    SAASBENCH_OPENAI_COMPAT_BASE_URL: `${fake.url}/v1`,
    SAASBENCH_OPENAI_COMPAT_API_KEY: KEY,
    SAASBENCH_ANTHROPIC_COMPAT_BASE_URL: anthropicFake.url,
    SAASBENCH_ANTHROPIC_COMPAT_API_KEY: KEY,
  });
  env = await devServer();
  worker = await startWorker({ address: env.address, namespace: 'default', hostId: 'openhands-itest' });
});

after(async () => {
  await worker?.shutdown();
  await env?.teardown();
  await fake?.close();
  await anthropicFake?.close();
});

test('openhands thinking (kimi-k2-thinking over the Anthropic API): every request carries the thinking and temperature the record says', { skip }, async () => {
  const input = rolloutInput(TINY, 'openhands', { model: 'fake-kimi-thinking', idleSeconds: 300 });
  anthropicFake.configure({ script: { commands: [], finalText: 'Done.' } });
  const r = await runRolloutWorkflow(env, input);
  const calls = anthropicFake.modelCalls();
  assert.ok(calls.length >= 1, r.agentRun.message);
  const ms = JSON.parse(readFileSync(join(r.runDir, 'agent', 'model-settings.json'), 'utf8'));
  const kw = ms.applied.llm.saasbench.completion_kwargs;
  assert.deepEqual(kw.thinking, { type: 'enabled' });
  for (const c of calls) {
    const b = c.body as Record<string, unknown>;
    assert.equal(b.model, 'kimi-k2-thinking');
    assert.deepEqual(b.thinking, kw.thinking, `model call ${c.modelCall}`);
    assert.equal(b.temperature, 1);
  }
});

test('openhands: the real OpenHands accepts the generated TOML, builds the tiny app through docker exec, deployment passes', { skip }, async () => {
  const input = rolloutInput(TINY, 'openhands', { model: 'fake-chat', idleSeconds: 300 });
  const app = containerName(projectName(rolloutKeyOf(input)), 'app');
  // the same build as the CLI agents, sent into the app container from OpenHands' host-side shell
  fake.configure({ script: { commands: TINY_BUILD.commands.map((c) => `docker exec -i ${app} bash -s <<'SAASBENCH_OUTER'\n${c}\nSAASBENCH_OUTER`), finalText: 'Done: the server runs in the app container.' } });
  const r = await runRolloutWorkflow(env, input);
  assert.equal(r.agentRun.exitReason, 'completed', r.agentRun.message);
  assert.equal(statusesOf(r).DEPLOY_HEALTH, 'PASSED');
  assert.equal(statusesOf(r).ITEM_READ, 'PASSED');
  // through the relay: the fake saw the real key, the tools were OpenHands' native ones only
  const calls = fake.modelCalls();
  assert.ok(calls.length >= 3);
  assert.ok(calls.every((c) => c.auth === 'ok' && c.path === '/v1/chat/completions' && c.model === 'gpt-fake-chat'));
  const tools = ((calls[0].body as { tools: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name).sort();
  assert.ok(tools.includes('execute_bash') && tools.includes('str_replace_editor') && tools.includes('execute_ipython_cell'));
  assert.ok(!tools.some((t) => /browser|mcp/i.test(t)), `no browsing/MCP tools: ${tools.join(',')}`);
  assert.equal((calls[0].body as { temperature?: number }).temperature, 0);
  // the generated TOML, OpenHands' own trajectory, the normalized one
  const toml = readFileSync(join(r.runDir, 'openhands', 'config.toml'), 'utf8');
  for (const line of ['max_iterations = 500', 'default_agent = "CodeActAgent"', 'runtime = "local"', 'temperature = 0', 'num_retries = 5', 'retry_min_wait = 10', 'retry_max_wait = 60', 'enable_mcp = false', 'timeout = 900']) assert.ok(toml.includes(line), line);
  assert.ok(!toml.includes(KEY), 'the TOML holds the relay token, not the key');
  const own = JSON.parse(readFileSync(join(r.runDir, 'openhands_trajectory.json'), 'utf8')) as { action?: string }[];
  assert.ok(own.some((e) => e.action === 'finish'));
  const report = JSON.parse(readFileSync(join(r.runDir, 'report.json'), 'utf8'));
  assert.equal(report.trajectory.commands, 2);
  assert.equal(report.trajectory.agentVersion, '1.6.0');
  // (OpenHands' `docker exec` into its own app container is how the paper runs it, not an escape)
  assert.equal(report.integrity.evaluatorHits, 0);
  assert.notEqual(report.integrity.verdict, 'voided');
  const traj = JSON.parse(readFileSync(join(r.runDir, 'trajectory.json'), 'utf8'));
  const cmds = traj.steps.flatMap((s: { toolCalls?: { command?: string }[] }) => s.toolCalls ?? []).map((c: { command?: string }) => c.command).filter(Boolean);
  assert.match(cmds[0], new RegExp(`^docker exec -i ${app} bash -s`));
  assert.deepEqual(labelledFor(r.rolloutKey), [], 'teardown removed the stack and the OpenHands sidecar');
  // the planted key reached the upstream only: nothing OpenHands wrote holds it
  const files = execFileSync('find', [r.runDir, '-type', 'f'], { encoding: 'utf8' }).trim().split('\n');
  assert.ok(files.length > 20);
  for (const f of files) assert.ok(!readFileSync(f, 'latin1').includes(KEY), `key in ${f}`);
});
