// The real Claude Code and Codex CLIs, each inside the tiny task's container, against fake LLM
// servers on 127.0.0.1 reached through the per-rollout LLM relay; a real Temporal dev server and a
// real worker — started as a child process so its log output can be searched for the planted keys.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { config } from '../../src/config';
import { repoRoot } from '../../src/paths';
import { rolloutKeyOf, rolloutWorkflowId, type RolloutInput, type RolloutResult } from '../../src/model/rollout';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import { startFakeOpenAI } from '../fakes/fake-openai';
import type { FakeServer } from '../fakes/fake-common';
import { TINY_BUILD } from '../fixtures/agents/scripts';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, runRolloutWorkflow, statusesOf } from '../helpers/rollout';
import { devServer } from '../helpers/temporal';
import { PROVIDER_ENV, startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

const ROOT = repoRoot();
const TINY = join(ROOT, 'test', 'fixtures', 'tasks', 'tiny');
// unique per run: if either shows up anywhere persisted, logged or in Temporal, the test fails
const KEY_A = `sk-ant-planted-${process.pid}-${Date.now().toString(36)}-a7f3`;
const KEY_O = `sk-openai-planted-${process.pid}-${Date.now().toString(36)}-9c2e`;

let env: TestWorkflowEnvironment;
let worker: WorkerProcess | undefined;
let runsDir: string;
let anthropic: FakeServer;
let openai: FakeServer;
const ran: RolloutResult[] = [];

const TINY_ORACLE_STATUSES = {
  DEPLOY_HEALTH: 'PASSED',
  ITEM_READ: 'PASSED',
  ITEM_BY_CAPTURED_ID: 'PASSED',
  WEIGHTED_MIX: 'PASSED',
  FILES_PRESENT: 'PASSED',
  NEVER_RUNS: 'FAILED',
  AFTER_FAIL: 'SKIPPED_DEPENDENCY',
  CODE_QUALITY: 'SKIPPED_LLM',
};

before(async () => {
  runsDir = mkdtempSync(join(tmpdir(), 'saasbench-agents-'));
  anthropic = await startFakeAnthropic({ script: TINY_BUILD, requireKey: KEY_A });
  openai = await startFakeOpenAI({ script: TINY_BUILD, requireKey: KEY_O });
  env = await devServer();
  worker = await startWorkerProcess({
    address: env.address,
    hostId: 'agents-itest',
    runsDir,
    dropEnv: PROVIDER_ENV,
    env: {
      TEMPORAL_NAMESPACE: 'default',
      SAASBENCH_HOST_ID: 'agents-itest',
      SAASBENCH_LOG_LEVEL: 'debug',
      SAASBENCH_MODELS_FILE: join(ROOT, 'test', 'fixtures', 'agents', 'models.json'),
      SAASBENCH_ANTHROPIC_BASE_URL: anthropic.url,
      SAASBENCH_ANTHROPIC_API_KEY: KEY_A,
      SAASBENCH_OPENAI_BASE_URL: `${openai.url}/v1`,
      SAASBENCH_OPENAI_API_KEY: KEY_O,
      // the CLIs' own API retries off, so an "overloaded" answer reaches the harness at once
      SAASBENCH_AGENT_CLI_RETRIES: '0',
    },
  });
});

after(async () => {
  await worker?.stop();
  await env?.teardown();
  await anthropic?.close();
  await openai?.close();
});

async function rollout(agent: string, model: string, over: Partial<RolloutInput> = {}): Promise<{ r: RolloutResult; report: Record<string, any> }> {
  const input = rolloutInput(TINY, agent, { model, agentRetry: { transientRetries: 1, backoffSeconds: 2, onLostProcess: 'resume' }, ...over });
  const r = await runRolloutWorkflow(env, input);
  ran.push(r);
  const report = JSON.parse(readFileSync(join(r.runDir, 'report.json'), 'utf8')) as Record<string, any>;
  assert.deepEqual(labelledFor(r.rolloutKey), [], 'teardown removed the stack');
  return { r, report };
}

/** USD of gateway usage at per-million-token prices, to the millionth (as src/agents/metering.ts rounds) */
const usd = (u: { input: number; cachedInput: number; output: number }, input: number, cached: number, output: number) =>
  Math.round((((u.input - u.cachedInput) * input + u.cachedInput * cached + u.output * output) / 1e6) * 1e6) / 1e6;

function assertRelayed(fake: FakeServer, key: string): void {
  const calls = fake.modelCalls();
  assert.ok(calls.length > 0, 'the fake saw model calls');
  for (const c of calls) {
    assert.equal(c.auth, 'ok', `model call ${c.modelCall} carried the real key (injected by the relay), not ${c.auth}`);
    assert.equal(c.foreignCredential, undefined);
  }
  assert.ok(!JSON.stringify(fake.requests).includes(key), 'the recorded requests never hold the key itself');
}

test('claude-code: the real CLI builds the tiny app through the relay; deployment passes; trajectory, ATIF, audit in the report', async () => {
  anthropic.configure({ script: TINY_BUILD });
  const { r, report } = await rollout('claude-code', 'fake-claude');
  assert.equal(r.agentRun.exitReason, 'completed', r.agentRun.message);
  assert.equal(r.agentRun.attempts, 1);
  assert.deepEqual(statusesOf(r), TINY_ORACLE_STATUSES);
  assertRelayed(anthropic, KEY_A);
  assert.ok(anthropic.modelCalls().every((c) => c.model === 'claude-fake-20261129'), 'the registry snapshot id is what the API sees');
  assert.ok(anthropic.modelCalls().every((c) => c.stream === true));
  // settings: Claude Code sends adaptive thinking and no temperature (its record's `applied`,
  // `agentCannotSet`); the gateway applies the registry's (fake-claude: no thinking, temperature 0)
  // to every model call, and the report says what it overrode
  const ms = JSON.parse(readFileSync(join(r.runDir, 'agent', 'model-settings.json'), 'utf8'));
  assert.deepEqual(ms.applied.thinking, { type: 'adaptive' });
  assert.equal(ms.appliedAt, 'gateway');
  assert.deepEqual(ms.appliedAtGateway, { temperature: 0 });
  assert.ok(ms.agentCannotSet.some((n: string) => /^temperature/.test(n)));
  for (const c of anthropic.modelCalls()) {
    const b = c.body as Record<string, unknown>;
    assert.equal(b.thinking, undefined, `model call ${c.modelCall}: thinking removed at the gateway`);
    assert.equal(b.temperature, 0, `model call ${c.modelCall}: temperature set at the gateway`);
  }
  assert.deepEqual(report.modelSettingsNotApplied, ms.notApplied, 'the report lists what nothing could apply');
  const metered = report.agentRun.gateway;
  assert.equal(metered.settings.requests, anthropic.modelCalls().length);
  assert.equal(metered.settings.overridden.thinking.count, anthropic.modelCalls().length);
  // metering: the fake's usage summed by the gateway, priced at the fixture's $3 / $0.30 / $15 per MTok
  assert.equal(metered.usage.requests, anthropic.modelCalls().length);
  const u = metered.usage;
  assert.equal(report.costUsd, usd(u, 3, 0.3, 15));
  assert.ok(report.costUsd > 0);
  // what the report says about the agent
  assert.equal(report.trajectory.toolCalls, 2);
  assert.equal(report.trajectory.commands, 2);
  assert.ok(report.trajectory.inputTokens > 0 && report.trajectory.outputTokens > 0);
  assert.equal(typeof report.trajectory.costUsd, 'number');
  assert.equal(report.trajectory.agentVersion, '2.1.126');
  assert.equal(report.integrity.verdict, 'clean');
  assert.equal(report.status, 'SCORED');
  // the files
  for (const f of ['claude_events.jsonl', 'claude_stderr.log', 'trajectory.json', 'trajectory.atif.json', 'integrity.json', 'agent/model-settings.json', 'agent/attempt-1/stdout.log']) assert.ok(existsSync(join(r.runDir, f)), f);
  const events = readFileSync(join(r.runDir, 'claude_events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(events[0].type, 'system');
  assert.equal(events.at(-1).type, 'result');
  assert.equal(events.at(-1).is_error, false);
  const traj = JSON.parse(readFileSync(join(r.runDir, 'trajectory.json'), 'utf8'));
  const calls = traj.steps.flatMap((s: any) => s.toolCalls ?? []);
  assert.match(calls[0].command, /cat > \/app\/server\.pl/);
  assert.equal(calls[0].name, 'Bash');
  assert.match(calls[0].output, /server started/);
  const atif = JSON.parse(readFileSync(join(r.runDir, 'trajectory.atif.json'), 'utf8'));
  assert.equal(atif.schema_version, 'ATIF-v1.4');
  assert.equal(atif.agent.name, 'claude-code');
  assert.deepEqual(atif.steps.map((s: any) => s.step_id), atif.steps.map((_: unknown, i: number) => i + 1));
  assert.equal(atif.steps[0].source, 'user');
  assert.ok(atif.steps.some((s: any) => s.tool_calls?.[0]?.function_name === 'Bash' && s.observation?.results?.[0]?.source_call_id === s.tool_calls[0].tool_call_id));
  // the relay's per-request log, and the rollout page's view of the run rendered from the ATIF file
  const gw = readFileSync(join(r.runDir, 'agent', 'gateway-log.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(gw.length, anthropic.modelCalls().length, 'one gateway-log line per model call');
  assert.ok(gw.every((e: any) => e.status === 200 && e.protocol === 'anthropic' && e.ms >= 0));
  const page = readFileSync(join(r.runDir, 'report.html'), 'utf8');
  assert.match(page, /<h2 id="agent-run">Agent run<\/h2>/);
  assert.match(page, /<span class="tool">Bash<\/span>/);
  assert.match(page, new RegExp(`gateway log: ${gw.length} model requests`));
});

test('codex: the real CLI builds the tiny app through the relay (Responses API); deployment passes', async () => {
  openai.configure({ script: TINY_BUILD });
  const { r, report } = await rollout('codex', 'fake-gpt');
  assert.equal(r.agentRun.exitReason, 'completed', r.agentRun.message);
  assert.deepEqual(statusesOf(r), TINY_ORACLE_STATUSES);
  assertRelayed(openai, KEY_O);
  assert.ok(openai.modelCalls().every((c) => c.path === '/v1/responses' && c.model === 'gpt-fake'));
  assert.equal(report.trajectory.commands, 2);
  assert.ok(report.trajectory.inputTokens > 0);
  assert.equal(report.trajectory.agentVersion, '0.128.0');
  assert.equal(report.integrity.verdict, 'clean');
  const events = readFileSync(join(r.runDir, 'codex_events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(events[0].type, 'thread.started');
  assert.ok(events.some((e) => e.type === 'turn.completed'));
  const settings = JSON.parse(readFileSync(join(r.runDir, 'agent', 'model-settings.json'), 'utf8'));
  assert.match(settings.configToml, /wire_api = "responses"/);
  assert.match(settings.configToml, /model_reasoning_effort = "high"/);
  // reasoning: what the record says Codex was told is what the fake saw in every request
  assert.equal(settings.applied.model_reasoning_effort, 'high');
  for (const c of openai.modelCalls()) assert.equal(((c.body as Record<string, any>).reasoning ?? {}).effort, 'high', `model call ${c.modelCall} reasoning ${JSON.stringify((c.body as Record<string, any>).reasoning)}`);
  assert.doesNotMatch(settings.configToml, /sk-/, 'no credential in the config');
  // metering works for Codex too (it reports no cost itself): the gateway's usage × the fixture's price
  const u = report.agentRun.gateway.usage;
  assert.ok(u.requests > 0 && u.input > 0);
  assert.equal(report.costUsd, usd(u, 1.25, 0.125, 10));
});

test('claude-code: 529 overloaded mid-run → exactly one retry after the configured backoff, then success', async () => {
  anthropic.configure({ script: TINY_BUILD, faults: { 2: { kind: 'overloaded' } } });
  const { r, report } = await rollout('claude-code', 'fake-claude', { repeat: 1 });
  assert.equal(r.agentRun.attempts, 2);
  assert.equal(r.agentRun.exitReason, 'completed');
  assert.equal(r.agentRun.history[0].exitReason, 'failed');
  assert.match(String(r.agentRun.history[0].transient), /overloaded|529/i);
  assert.equal(r.agentRun.history[1].transient, null);
  const calls = anthropic.modelCalls();
  const failed = calls.find((c) => c.status === 529)!;
  const next = calls.find((c) => c.modelCall === failed.modelCall! + 1)!;
  assert.ok(next.at - failed.at >= 2000, `the retry waited the 2 s backoff (waited ${next.at - failed.at} ms)`);
  assert.equal(calls.filter((c) => c.status === 529).length, 1);
  assert.ok(existsSync(join(r.runDir, 'agent', 'attempt-1', 'stdout.log')) && existsSync(join(r.runDir, 'agent', 'attempt-2', 'stdout.log')), 'both attempts kept');
  assert.equal(report.agentRun.attempts, 2);
  assert.match(report.agentRun.history[0].transient, /overloaded|529/i);
  assert.equal(statusesOf(r).DEPLOY_HEALTH, 'PASSED');
});

test('codex: overloaded on the retry too → no third attempt; evaluation still runs', async () => {
  openai.configure({ script: TINY_BUILD, faults: { 2: { kind: 'overloaded' }, 3: { kind: 'overloaded' } } });
  const { r, report } = await rollout('codex', 'fake-gpt', { repeat: 1 });
  assert.equal(r.agentRun.attempts, 2, 'one retry at most');
  assert.equal(r.agentRun.exitReason, 'failed');
  assert.match(String(r.agentRun.history[0].transient), /capacity|overloaded|high demand/i);
  assert.match(String(r.agentRun.history[1].transient), /capacity|overloaded|high demand/i);
  assert.equal(openai.modelCalls().length, 3);
  assert.equal(report.agentRun.exitReason, 'failed');
  assert.equal(statusesOf(r).DEPLOY_HEALTH, 'PASSED', 'step 1 had started the server; evaluation ran on the final state');
});

test('claude-code: a stalled stream → the idle watchdog ends the attempt (no retry); evaluation still runs', async () => {
  anthropic.configure({ script: TINY_BUILD, faults: { 2: { kind: 'stall' } } });
  const { r, report } = await rollout('claude-code', 'fake-claude', { repeat: 2, idleSeconds: 6 });
  assert.equal(r.agentRun.exitReason, 'idle_timeout', r.agentRun.message);
  assert.equal(r.agentRun.attempts, 1);
  assert.equal(report.agentRun.exitReason, 'idle_timeout');
  assert.equal(statusesOf(r).DEPLOY_HEALTH, 'PASSED');
  // the killed attempt's partial transcript is still normalized
  assert.equal(report.trajectory.toolCalls, 1);
});

test('codex: the budget runs out mid-run → the agent is stopped and evaluation still runs', async () => {
  openai.configure({ script: TINY_BUILD, faults: { 2: { kind: 'delay', ms: 120_000 } } });
  const { r, report } = await rollout('codex', 'fake-gpt', { repeat: 2, budgetSeconds: 8, idleSeconds: 600 });
  assert.equal(r.agentRun.exitReason, 'budget_exhausted', r.agentRun.message);
  assert.ok(r.agentRun.agentSeconds >= 8 && r.agentRun.agentSeconds < 30, `stopped at the budget (${r.agentRun.agentSeconds}s)`);
  assert.equal(report.agentRun.exitReason, 'budget_exhausted');
  assert.equal(statusesOf(r).DEPLOY_HEALTH, 'PASSED');
  assert.ok(r.outcomes.length === 8, 'every node was evaluated or skipped');
});

test('claude-code: the agent process vanishes without an exit record → its session is resumed (--resume, same cwd and HOME) and completes', async () => {
  anthropic.configure({ script: TINY_BUILD, faults: { 2: { kind: 'stall' } } });
  const input = rolloutInput(TINY, 'claude-code', { model: 'fake-claude', repeat: 3, idleSeconds: 120 });
  const handle = await env.client.workflow.start('rolloutWorkflow', { taskQueue: config.sharedQueue(), workflowId: rolloutWorkflowId(input), args: [input] });
  const deadline = Date.now() + 60_000;
  while (!anthropic.modelCalls().some((c) => c.fault === 'stall')) {
    assert.ok(Date.now() < deadline, 'the agent reached the stalled call');
    await new Promise((r) => setTimeout(r, 200));
  }
  const key = rolloutKeyOf(input);
  const app = execFileSync('docker', ['ps', '-q', '--filter', `label=saasbench.rollout=${key}`, '--filter', 'label=saasbench.service=app'], { encoding: 'utf8' }).trim();
  // kill the runner's whole process group: no exit_code is written, as after an OOM kill
  execFileSync('docker', ['exec', app, 'bash', '-c', 'kill -9 -$(cat /tmp/.saasbench/agent/attempt-1/pid)']);
  const r = (await handle.result()) as RolloutResult;
  ran.push(r);
  assert.equal(r.agentRun.exitReason, 'completed', r.agentRun.message);
  assert.deepEqual(r.agentRun.history.map((h) => h.exitReason), ['infrastructure', 'completed']);
  const sessions = r.agentRun.trajectory!.sessionIds;
  assert.equal(sessions.length, 1, 'the resumed attempt continued the same session');
  const resumed = readFileSync(join(r.runDir, 'agent', 'attempt-2', 'stdout.log'), 'utf8');
  assert.match(resumed, new RegExp(`"session_id":"${sessions[0]}"`));
  // the resumed session's first request carried the history: step 1's tool result was already there
  const afterKill = anthropic.modelCalls().filter((c) => c.modelCall! > 2);
  assert.ok(afterKill.length >= 1 && afterKill[0].step! >= 1, `resumed with history (first step ${afterKill[0]?.step})`);
  assert.equal(statusesOf(r).DEPLOY_HEALTH, 'PASSED');
});

test('planted API keys appear in no persisted file, no worker log line and no Temporal payload', async () => {
  assert.ok(ran.length >= 7, 'runs to inspect');
  const files: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else files.push(p);
    }
  };
  walk(runsDir);
  assert.ok(files.length > 50, `run dirs hold the artifacts (${files.length} files)`);
  for (const f of files) {
    const text = readFileSync(f, 'latin1');
    for (const k of [KEY_A, KEY_O]) assert.ok(!text.includes(k), `${k.slice(0, 14)}… found in ${f}`);
  }
  assert.ok(worker!.output().length > 1000 && /LLM relay listening/.test(worker!.output()), 'the worker logged (debug level)');
  for (const k of [KEY_A, KEY_O]) assert.ok(!worker!.output().includes(k), 'key in the worker log');
  for (const r of ran) {
    const history = await env.client.workflow.getHandle(r.workflowId).fetchHistory();
    const json = historyToJSON(history);
    // payloads are base64-encoded JSON: search them decoded too
    const decoded = [...json.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1], 'base64').toString('utf8')).join('\n');
    assert.ok(decoded.includes(r.rolloutKey), 'the decoded payloads are searchable (they name the rollout)');
    assert.ok(decoded.includes('agentRun'), 'the agent summary payload is among them');
    for (const k of [KEY_A, KEY_O]) {
      assert.ok(!json.includes(k) && !decoded.includes(k), `key in the history of ${rolloutWorkflowId(r as unknown as RolloutInput)}`);
    }
  }
});
