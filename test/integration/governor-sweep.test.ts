/**
 * Issue 13, the rate governor end to end (docs/gateway.md "Rate governor"): a real sweep of four
 * rollouts of the tiny task at concurrency 4, each the real Claude Code CLI driven by the scripted
 * fake Anthropic upstream (test/fakes), through a worker process whose registry overlay gives the
 * provider `limits: { concurrent: 2 }`. The fake itself allows two streams at once (429 +
 * Retry-After beyond) and holds every answer STREAM_MS, so four agents must queue in the governor.
 * What must hold: the upstream never refused (no 429) and never saw more than two streams; every
 * rollout completed and deployed (the tiny app scores what the oracle does); at least one rollout
 * waited in the governor; and no rollout's agent seconds include its waits.
 * (test/integration/governor-relays.test.ts covers the same with four bare relays, no containers.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import type { FakeServer } from '../fakes/fake-common';
import { TINY_BUILD } from '../fixtures/agents/scripts';
import { labelledFor } from '../helpers/docker';
import { devServer } from '../helpers/temporal';
import { executeSweep, spawnWorker, sweepInput, TINY, uniqueName, type WorkerProcess } from './sweep-support';

const LIMIT = 2;
const STREAM_MS = 1500;
const KEY = `sk-govsweep-planted-${process.pid}-${Date.now().toString(36)}-7a1c`;
// tiny's reference app without a judge: 9.7 of 18 (sweep-tiny.test.ts has the hand computation)
const TINY_APP = { score: 9.7, maxScore: 18 };

let env: TestWorkflowEnvironment;
let worker: WorkerProcess;
let fake: FakeServer;
let dir: string;

before(async () => {
  fake = await startFakeAnthropic({ script: TINY_BUILD, requireKey: KEY, maxConcurrent: LIMIT, limitRetryAfter: 1, delayFor: () => STREAM_MS });
  dir = mkdtempSync(join(tmpdir(), 'saasbench-govsweep-'));
  const registry = {
    $comment: 'governor-sweep.test.ts: one provider limited to two concurrent streams',
    providers: { 'gs-limited': { api: 'anthropic', baseUrlEnv: 'SAASBENCH_GS_URL', keyEnv: ['SAASBENCH_GS_KEY'], auth: 'x-api-key', limits: { concurrent: LIMIT } } },
    models: { 'gs-model': { snapshot: 'gs-model-snapshot', provider: 'gs-limited', reasoning: false, temperature: 0, verified: true } },
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(registry));
  env = await devServer();
  // the worker process inherits this environment: no real provider credentials, the overlay, the fake
  for (const k of Object.keys(process.env)) if (/^(ANTHROPIC|OPENAI|CLAUDE|CODEX)_/.test(k)) delete process.env[k];
  delete process.env.SAASBENCH_RATE_LIMITS;
  Object.assign(process.env, { SAASBENCH_MODELS_FILE: join(dir, 'models.json'), SAASBENCH_GS_URL: fake.url, SAASBENCH_GS_KEY: KEY });
  worker = await spawnWorker(env.address, 'govsweep-itest', join(dir, 'runs'), dir);
});

after(async () => {
  await worker?.kill();
  await env?.teardown();
  await fake?.close();
});

type Frac = { score: number; maxScore: number };
type Report = { agentRun: { exitReason: string; agentSeconds: number; governor?: { waits: number; waitSeconds: number } }; overall: Frac; byBackbone: Record<string, Frac>; timings: { agentMs: number } };

test('a sweep of 4 Claude Code rollouts against a 2-stream provider: no 429, waits not billed', async () => {
  const started = Date.now();
  const input = sweepInput(uniqueName('govsweep'), {
    tasks: [TINY],
    agents: [{ name: 'claude-code', models: ['gs-model'] }],
    repeats: 4,
    concurrency: 4,
    budgets: { agentSeconds: 600, idleSeconds: 300, heartbeatSeconds: 30 },
  });
  const r = await executeSweep(env.client, input);
  const seconds = (Date.now() - started) / 1000;

  const calls = fake.modelCalls();
  const trace = calls.map((x) => `#${x.modelCall} ${x.status}${x.fault ? ` ${x.fault}` : ''}`).join(', ');
  assert.deepEqual(calls.filter((x) => x.status === 429).length, 0, `the upstream never refused (calls: ${trace})`);
  assert.ok(fake.maxOpen() <= LIMIT, `at most ${LIMIT} streams at once, saw ${fake.maxOpen()}`);
  assert.ok(calls.every((x) => x.auth === 'ok'), 'the relay injected the real key');

  assert.equal(r.counts.completed, 4, JSON.stringify(r.rollouts.map((x) => [x.workflowId, x.state, x.agentExit, x.error])));
  const rows: string[] = [];
  let waited = 0;
  for (const x of r.rollouts) {
    assert.equal(x.agentExit, 'completed', x.workflowId);
    const rep = JSON.parse(readFileSync(join(x.runDir!, 'report.json'), 'utf8')) as Report;
    const deploy = rep.byBackbone.Deploy;
    assert.ok(deploy && deploy.maxScore > 0 && deploy.score === deploy.maxScore, `${x.workflowId}: deployed (${JSON.stringify(deploy)})`);
    assert.deepEqual([rep.overall.score, rep.overall.maxScore], [TINY_APP.score, TINY_APP.maxScore], `${x.workflowId}: the tiny app's score`);
    const g = rep.agentRun.governor;
    assert.ok(g, `${x.workflowId}: report.json agentRun.governor`);
    if (g.waits > 0) waited++;
    // the agent phase's wall time less the governor's waits bounds what was billed (1 s of slack:
    // agentSeconds and waitSeconds are rounded, and the phase has a little around the CLI itself)
    const wall = rep.timings.agentMs / 1000;
    assert.ok(rep.agentRun.agentSeconds <= wall - g.waitSeconds + 1, `${x.workflowId}: agentSeconds ${rep.agentRun.agentSeconds} ≤ agent wall ${wall} − waits ${g.waitSeconds} + 1`);
    rows.push(`  ${x.workflowId}: agent wall ${wall.toFixed(1)} s, billed ${rep.agentRun.agentSeconds} s, governor ${g.waits} waits / ${g.waitSeconds} s`);
  }
  assert.ok(waited >= 1, `at least one rollout waited in the governor:\n${rows.join('\n')}`);
  assert.deepEqual(labelledFor(input.name), [], 'every stack torn down');
  assert.ok(!readFileSync(join(dir, 'models.json'), 'utf8').includes(KEY), 'the key is in no registry file');
  console.log(`governor sweep: ${calls.length} model calls, peak ${fake.maxOpen()} streams, ${seconds.toFixed(0)} s\n${rows.join('\n')}`);
});
