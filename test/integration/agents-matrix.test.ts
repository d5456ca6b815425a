// Issue 13: the three agents × the three upstream wire protocols, each combination a real rollout of
// the tiny task (the real agent builds the app, deployment is evaluated), the relay translating
// whenever the agent's protocol is not the upstream's. One Temporal dev server, one worker child
// process and one fake upstream per combination (its own provider in a generated registry overlay,
// so faults and call counts are per combination); the combinations run a few at a time.
// Exercised on the way: a thinking model's opaque reasoning (Anthropic signature, Responses
// encrypted_content) carried through the other protocol and back on the next turn unchanged; a 429
// with Retry-After reaching the agent in its own protocol and the agent's own retry; streaming (the
// CLIs) and whole answers (OpenHands/LiteLLM). The OpenHands rows need its runtime (gated as in
// agents-openhands.test.ts) and run one at a time; SAASBENCH_MATRIX_CONCURRENCY sets how many
// rollouts run at once (3),
// SAASBENCH_MATRIX_ONLY picks combinations (for debugging one).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { rolloutKeyOf } from '../../src/model/rollout';
import { repoRoot } from '../../src/paths';
import { containerName, projectName } from '../../src/sandbox';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import type { Fault, FakeServer } from '../fakes/fake-common';
import { startFakeOpenAI } from '../fakes/fake-openai';
import { TINY_BUILD } from '../fixtures/agents/scripts';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, runRolloutWorkflow, statusesOf } from '../helpers/rollout';
import { devServer } from '../helpers/temporal';
import { openhandsSkip } from '../helpers/openhands';
import { PROVIDER_ENV, startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

const ROOT = repoRoot();
const TINY = join(ROOT, 'test', 'fixtures', 'tasks', 'tiny');
const KEY = `sk-matrix-planted-${process.pid}-${Date.now().toString(36)}-e41c`;

type Agent = 'claude-code' | 'codex' | 'openhands';
type Upstream = 'anthropic' | 'chat' | 'responses';
interface Combo {
  agent: Agent;
  upstream: Upstream;
  /** the agent's own protocol: passed through when equal to the upstream's */
  native: boolean;
  /** a thinking model: its reasoning must come back unchanged on the next turn */
  reasoning?: boolean;
  /**
   * false: the agent itself drops the reasoning from its history (observed: OpenHands 1.6.0 through
   * LiteLLM sends no thinking blocks back to an Anthropic upstream), so only its tolerance is checked
   */
  echoes?: false;
  /** the upstream answers this model call with 429 + Retry-After: 1 */
  rateLimitAt?: number;
}

const COMBOS: Combo[] = [
  { agent: 'claude-code', upstream: 'anthropic', native: true },
  { agent: 'claude-code', upstream: 'chat', native: false },
  { agent: 'claude-code', upstream: 'responses', native: false, reasoning: true, rateLimitAt: 2 },
  { agent: 'codex', upstream: 'responses', native: true },
  { agent: 'codex', upstream: 'chat', native: false },
  { agent: 'codex', upstream: 'anthropic', native: false, reasoning: true, rateLimitAt: 2 },
  { agent: 'openhands', upstream: 'chat', native: true },
  { agent: 'openhands', upstream: 'anthropic', native: true, reasoning: true, echoes: false },
  { agent: 'openhands', upstream: 'responses', native: false, reasoning: true },
];

const API: Record<Upstream, string> = { anthropic: 'anthropic', chat: 'openai-chat', responses: 'openai' };
const PATH: Record<Upstream, string> = { anthropic: '/v1/messages', chat: '/v1/chat/completions', responses: '/v1/responses' };
/** the usage the fakes report for the answer at step n: base + n */
const IN_BASE: Record<Upstream, number> = { anthropic: 110, chat: 300, responses: 200 };
const OUT_BASE: Record<Upstream, number> = { anthropic: 20, chat: 40, responses: 30 };
/** each combination's list price (USD per MTok), distinct so a cost priced at another cell's price fails */
const PRICE: Record<Upstream, { inputPerMTok: number; cachedInputPerMTok: number; outputPerMTok: number }> = {
  anthropic: { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 },
  chat: { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10 },
  responses: { inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 },
};
const AGENT_BUMP: Record<Agent, number> = { 'claude-code': 0, codex: 0.5, openhands: 1 };
const priceOf = (c: Combo) => {
  const p = PRICE[c.upstream];
  return { asOf: '2026-12-01', inputPerMTok: p.inputPerMTok + AGENT_BUMP[c.agent], cachedInputPerMTok: p.cachedInputPerMTok, outputPerMTok: p.outputPerMTok + AGENT_BUMP[c.agent], source: 'agents-matrix.test.ts (a made-up price)' };
};
const idOf = (c: Combo) => `mx-${c.agent}-${c.upstream}`;
const envOf = (c: Combo) => `SAASBENCH_MX_${c.agent}_${c.upstream}_URL`.replace(/-/g, '_').toUpperCase();

const ohSkip = openhandsSkip();
// SAASBENCH_MATRIX_ONLY=codex,claude-code×chat: run only the combinations whose "agent×upstream" contains one of these
const only = process.env.SAASBENCH_MATRIX_ONLY?.split(',').filter(Boolean);
const skipOf = (c: Combo) => (only && !only.some((o) => `${c.agent}×${c.upstream}`.includes(o)) ? 'not in SAASBENCH_MATRIX_ONLY' : c.agent === 'openhands' ? ohSkip : false);

let env: TestWorkflowEnvironment;
let worker: WorkerProcess | undefined;
const fakes = new Map<string, FakeServer>();
const rows: string[] = [];

before(async () => {
  const providers: Record<string, unknown> = {};
  const models: Record<string, unknown> = {};
  const urls: Record<string, string> = {};
  for (const c of COMBOS) {
    if (skipOf(c)) continue;
    const fake = c.upstream === 'anthropic' ? await startFakeAnthropic({ script: TINY_BUILD, requireKey: KEY }) : await startFakeOpenAI({ script: TINY_BUILD, requireKey: KEY });
    fakes.set(idOf(c), fake);
    providers[idOf(c)] = { api: API[c.upstream], baseUrlEnv: envOf(c), keyEnv: ['SAASBENCH_MX_KEY'], auth: c.upstream === 'anthropic' ? 'x-api-key' : 'bearer' };
    models[idOf(c)] = {
      snapshot: `${idOf(c)}-model`,
      provider: idOf(c),
      reasoning: c.reasoning === true,
      temperature: c.reasoning ? 1 : 0,
      ...(c.reasoning && c.upstream === 'anthropic' ? { thinking: { enabled: true, type: 'enabled' } } : {}),
      ...(c.reasoning && c.upstream === 'responses' ? { reasoningEffort: 'high' } : {}),
      verified: true,
      price: priceOf(c),
    };
    urls[envOf(c)] = c.upstream === 'anthropic' ? fake.url : `${fake.url}/v1`;
  }
  const dir = mkdtempSync(join(tmpdir(), 'saasbench-matrix-'));
  writeFileSync(join(dir, 'models.json'), JSON.stringify({ $comment: 'agents-matrix.test.ts: one provider per combination', providers, models }));
  env = await devServer();
  worker = await startWorkerProcess({
    address: env.address,
    hostId: 'matrix-itest',
    runsDir: join(dir, 'runs'),
    dropEnv: PROVIDER_ENV,
    env: {
      ...urls,
      TEMPORAL_NAMESPACE: 'default',
      SAASBENCH_HOST_ID: 'matrix-itest',
      SAASBENCH_MODELS_FILE: join(dir, 'models.json'),
      SAASBENCH_MX_KEY: KEY,
      // the agents' own API retries on (a 429 must be retried by the agent, not by saasbench)
      SAASBENCH_AGENT_CLI_RETRIES: '3',
    },
  });
});

after(async () => {
  if (rows.length) console.log(`matrix (agent × upstream: calls, tokens in/cached/out/reasoning, agent's cost estimate and the gateway's USD, seconds)\n${rows.map((r) => `  ${r}`).join("\n")}`);
  await worker?.stop();
  await env?.teardown();
  for (const f of fakes.values()) await f.close();
});

/** A counting semaphore: `run` waits for one of `n` slots. */
function slots(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let free = n;
  const waiting: (() => void)[] = [];
  return async (fn) => {
    if (free > 0) free--;
    else await new Promise<void>((r) => waiting.push(r));
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

const LIMIT = Number(process.env.SAASBENCH_MATRIX_CONCURRENCY ?? 3);
// One OpenHands rollout at a time, in a lane of its own: its local runtime's action server must
// answer within 120 s of starting, which three at once on a 2-core machine do not (observed); the
// CLI cells share the other lanes.
const openhandsLane = slots(1);
const cliLanes = slots(Math.max(1, COMBOS.some((c) => c.agent === 'openhands' && !skipOf(c)) ? LIMIT - 1 : LIMIT));
const runCombo = (c: Combo) => (c.agent === 'openhands' ? openhandsLane : cliLanes)(() => runOne(c));

async function runOne(c: Combo): Promise<void> {
  const started = Date.now();
  const fake = fakes.get(idOf(c))!;
  const input = rolloutInput(TINY, c.agent, { model: idOf(c), idleSeconds: c.agent === 'openhands' ? 900 : 300, agentRetry: { transientRetries: 0, backoffSeconds: 2, onLostProcess: 'resume' } });
  const faults: Record<number, Fault> = c.rateLimitAt ? { [c.rateLimitAt]: { kind: 'rate_limit', retryAfter: 1 } } : {};
  // OpenHands' shell is the host's: the same build is sent into the app container
  const app = containerName(projectName(rolloutKeyOf(input)), 'app');
  const script = c.agent === 'openhands' ? { commands: TINY_BUILD.commands.map((x) => `docker exec -i ${app} bash -s <<'SAASBENCH_OUTER'\n${x}\nSAASBENCH_OUTER`), finalText: 'Done: the server runs in the app container.' } : TINY_BUILD;
  fake.configure({ script, faults, reasoning: c.reasoning === true });

  const r = await runRolloutWorkflow(env, input);
  const calls = fake.modelCalls();
  const label = `${c.agent} × ${c.upstream}`;
  const trace = calls.map((x) => `#${x.modelCall} ${x.status} step ${x.step}`).join(', ');
  assert.equal(r.agentRun.exitReason, 'completed', `${label}: ${r.agentRun.message} (upstream calls: ${trace})`);
  assert.equal(r.agentRun.attempts, 1, `${label}: the agent itself handled every upstream answer`);
  assert.equal(statusesOf(r).DEPLOY_HEALTH, 'PASSED', label);
  assert.equal(statusesOf(r).ITEM_READ, 'PASSED', label);
  assert.deepEqual(labelledFor(r.rolloutKey), [], `${label}: teardown removed the stack`);

  assert.ok(calls.filter((x) => x.status === 200).length >= 3, `${label}: the scripted steps went through the upstream (${calls.length} calls)`);
  for (const x of calls) {
    assert.equal(x.path, PATH[c.upstream], `${label}: call ${x.modelCall} at the upstream's own endpoint`);
    assert.equal(x.auth, 'ok', `${label}: the relay injected the real key`);
    assert.equal(x.model, `${idOf(c)}-model`, `${label}: every call names the snapshot`);
  }
  // the CLIs stream; OpenHands (LiteLLM) asks for whole answers
  if (c.agent === 'openhands') assert.ok(calls.every((x) => !x.stream), `${label}: whole answers`);
  else assert.ok(calls.filter((x) => x.status === 200).every((x) => x.stream), `${label}: streamed`);
  const steps = new Set(calls.filter((x) => x.status === 200).map((x) => x.step));
  assert.ok(steps.has(0) && steps.has(1) && steps.has(2), `${label}: both commands' results came back (steps ${[...steps].join(',')})`);

  if (c.reasoning) {
    const minted = new Set(calls.map((x) => x.minted).filter((m): m is string => m !== undefined));
    const echoed = calls.flatMap((x) => x.echoed ?? []);
    assert.ok(minted.size >= 2, `${label}: the upstream minted reasoning (${minted.size})`);
    if (c.echoes === false) assert.deepEqual(echoed, [], `${label}: the agent drops its reasoning (if this changed, drop echoes: false)`);
    else assert.ok(echoed.length >= 1, `${label}: the reasoning came back on a later turn`);
    for (const e of echoed) assert.ok(minted.has(e), `${label}: reasoning sent back unchanged (${e.slice(0, 40)})`);
  }
  if (c.rateLimitAt) {
    const limited = calls.find((x) => x.modelCall === c.rateLimitAt)!;
    assert.equal(limited.status, 429);
    const next = calls.find((x) => x.modelCall === c.rateLimitAt! + 1);
    assert.ok(next && next.step === limited.step, `${label}: the agent retried the same turn`);
    assert.ok(next.at - limited.at >= 900, `${label}: after Retry-After (${next.at - limited.at} ms)`);
  }

  const stats = JSON.parse(readFileSync(join(r.runDir, 'agent', 'relay-stats.json'), 'utf8')) as { translated: number; statusCounts: Record<string, number>; usage: { requests: number; input: number; cachedInput: number; output: number; reasoning: number } };
  const answered = calls.filter((x) => x.status === 200).length;
  if (c.native) assert.equal(stats.translated, 0, `${label}: same protocol passes through`);
  else assert.ok(stats.translated >= calls.length, `${label}: translated ${stats.translated} of ${calls.length}`);
  if (c.rateLimitAt) assert.ok((stats.statusCounts['429'] ?? 0) >= 1, `${label}: the relay saw the 429`);
  const u = stats.usage;
  // exactly what the fake reported per answer (input counts cached tokens: Anthropic 100+step + 10 cache reads)
  const ok = calls.filter((x) => x.status === 200);
  assert.equal(u.requests, answered, `${label}: every answer metered`);
  assert.equal(u.input, ok.reduce((n, x) => n + IN_BASE[c.upstream] + (x.step ?? 0), 0), `${label}: input tokens ${JSON.stringify(u)}`);
  assert.equal(u.output, ok.reduce((n, x) => n + OUT_BASE[c.upstream] + (x.step ?? 0), 0), `${label}: output tokens ${JSON.stringify(u)}`);
  // report.json: the agent's own token counts (its transcript / OpenHands llm_metrics) agree with
  // the relay's, through translation too; trajectory.costUsd is the agent's own estimate (Claude
  // Code prices by its own table, Codex reports none, LiteLLM 0 for an unknown model)
  type Report = {
    trajectory?: { inputTokens?: number; cachedInputTokens?: number; outputTokens?: number; costUsd?: number | null };
    costUsd?: number | null;
    agentRun?: { gateway?: { usage: typeof u; costUsd: number | null; costReason: string | null; price: { inputPerMTok: number } | null } };
  };
  const report = JSON.parse(readFileSync(join(r.runDir, 'report.json'), 'utf8')) as Report;
  const tr = report.trajectory;
  assert.deepEqual([tr?.inputTokens, tr?.cachedInputTokens, tr?.outputTokens], [u.input, u.cachedInput, u.output], `${label}: report.json tokens = the relay's`);
  // the gateway's cost: the fake's usage at this cell's registry price (src/agents/metering.ts:
  // uncached input, cached input and output each at its own rate, rounded to a millionth of a USD)
  const g = report.agentRun?.gateway;
  assert.ok(g, `${label}: report.json agentRun.gateway`);
  assert.deepEqual([g.usage.requests, g.usage.input, g.usage.cachedInput, g.usage.output], [u.requests, u.input, u.cachedInput, u.output], `${label}: gateway usage = the relay's`);
  const p = priceOf(c);
  const expected = Math.round(((u.input - u.cachedInput) * p.inputPerMTok + u.cachedInput * p.cachedInputPerMTok + u.output * p.outputPerMTok) / 1e6 * 1e6) / 1e6;
  assert.ok(expected > 0, `${label}: a cost to check`);
  assert.equal(g.costUsd, expected, `${label}: gateway cost = usage × price (${JSON.stringify(g)})`);
  assert.equal(g.costReason, null, `${label}: every answer metered`);
  assert.equal(report.costUsd, expected, `${label}: report.json costUsd = the gateway's`);
  rows.push(`${label.padEnd(26)} ${String(calls.length).padStart(2)} calls  ${u.input}/${u.cachedInput}/${u.output}/${u.reasoning}  agent cost ${tr?.costUsd ?? '-'} gateway $${g.costUsd}  ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

test('agents × upstream protocols: every combination builds the tiny app through the relay', { concurrency: COMBOS.length }, async (t) => {
  const started = Date.now();
  await Promise.all(COMBOS.map((c) => t.test(`${c.agent} × ${c.upstream}${c.native ? ' (native)' : ' (translated)'}`, { skip: skipOf(c) }, () => runCombo(c))));
  rows.push(`total ${((Date.now() - started) / 1000).toFixed(0)} s at concurrency ${LIMIT}`);
  assert.ok(!worker!.output().includes(KEY), 'the key is in no worker log line');
});
