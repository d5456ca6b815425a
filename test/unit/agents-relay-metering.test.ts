// The relay applies the registry's settings to what reaches the upstream and meters every answer:
// a translated request (Claude Code's Anthropic Messages on a Chat upstream) and a passed-through
// one (Codex's Responses on a Responses upstream), each against a fake, the upstream's recorded
// body checked field by field and the cost = the fake's usage × the price.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../src/agents/llm-relay';
import type { SettingsModel } from '../../src/agents/gateway-settings';
import { gatewayRecord, type Price } from '../../src/agents/metering';
import { startFakeOpenAI } from '../fakes/fake-openai';
import type { FakeServer } from '../fakes/fake-common';

const KEY = 'sk-real-key-metering-unit-1234567890';
const fakes: FakeServer[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

function post(url: string, path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = http.request(new URL(path, url), { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(data.length), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

const price: Price = { asOf: '2025-11-18', inputPerMTok: 2, cachedInputPerMTok: 0.2, outputPerMTok: 12, source: 'test' };

test('translated (Anthropic → Chat, streaming): Gemini-style settings in the Chat body, usage and cost recorded', async () => {
  const fake = await startFakeOpenAI({ script: { commands: [], finalText: 'Hello.' }, requireKey: KEY });
  fakes.push(fake);
  const model: SettingsModel & { id: string; price: Price } = { id: 'gem', snapshot: 'snap-1', reasoning: true, temperature: 0, maxOutputTokens: 4096, thinking: { enabled: true, includeThoughts: true, budgetTokens: 1024 }, price };
  const stateDir = mkdtempSync(join(tmpdir(), 'relay-m-'));
  const relay = await startRelay({ key: 'r-meter-1', bindHost: '127.0.0.1', upstream: { baseUrl: `${fake.url}/v1`, key: KEY, auth: 'bearer', keyEnv: 'X', protocol: 'chat' }, stateDir, model: 'snap-1', settings: model, price });
  try {
    const h = { 'x-api-key': relay.token, 'anthropic-version': '2023-06-01' };
    const a = await post(relay.url, '/v1/messages', h, { model: 'claude-x', stream: true, max_tokens: 32000, temperature: 1, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(a.status, 200, a.text);
    assert.match(a.text, /Hello\./);
    const body = fake.modelCalls()[0].body as Record<string, any>;
    assert.equal(body.model, 'snap-1');
    assert.equal(body.temperature, 0);
    assert.equal(body.max_tokens, 4096);
    assert.equal(body.max_completion_tokens, undefined);
    assert.deepEqual(body.extra_body, { google: { thinking_config: { include_thoughts: true, thinking_budget: 1024 } } });
    assert.deepEqual(body.stream_options, { include_usage: true });
    const s = relay.stats;
    assert.equal(s.settings!.requests, 1);
    assert.equal(s.settings!.overridden.temperature.count, 1);
    assert.deepEqual(s.settings!.overridden.temperature.agentSent, [1]);
    assert.deepEqual(s.settings!.overridden.max_tokens.agentSent, [32000]);
    // the fake's first Chat answer: prompt 300, completion 40 tokens
    assert.deepEqual({ ...s.usage }, { requests: 1, input: 300, cachedInput: 0, output: 40, reasoning: 0 });
    assert.equal(s.unmeteredAnswers, 0);
    const rec = gatewayRecord(s, model);
    assert.equal(rec.costUsd, (300 * 2 + 40 * 12) / 1e6);
    assert.equal(rec.costReason, null);
    assert.equal(rec.settings?.appliedAt, 'gateway');
    // the request's own line in the gateway log carries its cost (written when the answer closes)
    const logFile = join(stateDir, 'gateway-log.jsonl');
    for (let i = 0; i < 50 && !existsSync(logFile); i++) await new Promise((r) => setTimeout(r, 20));
    const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { costUsd?: number; inTok: number });
    assert.deepEqual(lines.map((l) => [l.inTok, l.costUsd]), [[300, (300 * 2 + 40 * 12) / 1e6]]);
  } finally {
    await relay.close();
  }
});

test('passed through (Responses → Responses): reasoning effort and temperature set, cached tokens priced at the cached rate', async () => {
  const fake = await startFakeOpenAI({ script: { commands: [], finalText: 'Done.' }, requireKey: KEY });
  fakes.push(fake);
  const model: SettingsModel & { id: string; price: Price } = { id: 'gpt', snapshot: 'gpt-snap', reasoning: true, temperature: 1, reasoningEffort: 'xhigh', reasoningSummary: 'auto', price };
  const relay = await startRelay({ key: 'r-meter-2', bindHost: '127.0.0.1', upstream: { baseUrl: `${fake.url}/v1`, key: KEY, auth: 'bearer', keyEnv: 'X', protocol: 'responses' }, stateDir: mkdtempSync(join(tmpdir(), 'relay-m-')), model: 'gpt-snap', settings: model });
  try {
    const h = { authorization: `Bearer ${relay.token}` };
    const a = await post(relay.url, '/v1/responses', h, { model: 'gpt-snap', stream: true, reasoning: { effort: 'medium' }, input: [{ role: 'user', content: 'hi' }] });
    assert.equal(a.status, 200, a.text);
    const b = await post(relay.url, '/v1/responses', h, { model: 'other-model', stream: true, temperature: 0.5, input: [{ role: 'user', content: 'hi' }] });
    assert.equal(b.status, 200, b.text);
    const [first, second] = fake.modelCalls().map((c) => c.body as Record<string, any>);
    assert.deepEqual(first.reasoning, { effort: 'xhigh', summary: 'auto' });
    assert.equal(first.temperature, 1);
    assert.equal(second.temperature, 0.5, 'another model than the snapshot is passed untouched');
    assert.equal(relay.stats.translated, 0);
    assert.equal(relay.stats.settings!.requests, 1);
    assert.equal(relay.stats.settings!.otherModelRequests, 1);
    // two answers of the fake at step 0: 200 input (50 cached), 30 output (5 reasoning) each
    assert.deepEqual({ ...relay.stats.usage }, { requests: 2, input: 400, cachedInput: 100, output: 60, reasoning: 10 });
    assert.equal(gatewayRecord(relay.stats, model).costUsd, Math.round(((300 * 2 + 100 * 0.2 + 60 * 12) / 1e6) * 1e6) / 1e6);
  } finally {
    await relay.close();
  }
});

test('the stats are on disk after every answer; a resumed agent run (another worker process) continues the count', async () => {
  const fake = await startFakeOpenAI({ script: { commands: [], finalText: 'Done.' }, requireKey: KEY });
  fakes.push(fake);
  const stateDir = mkdtempSync(join(tmpdir(), 'relay-m-'));
  const statsFile = join(stateDir, 'relay-stats.json');
  const model: SettingsModel = { snapshot: 'gpt-snap', reasoning: true, temperature: 1 };
  const open = (key: string, resumeStats: boolean) => startRelay({ key, bindHost: '127.0.0.1', upstream: { baseUrl: `${fake.url}/v1`, key: KEY, auth: 'bearer', keyEnv: 'X', protocol: 'responses' }, stateDir, model: 'gpt-snap', settings: model, statsFile, resumeStats });
  const ask = async (relay: Awaited<ReturnType<typeof open>>) => assert.equal((await post(relay.url, '/v1/responses', { authorization: `Bearer ${relay.token}` }, { model: 'gpt-snap', stream: true, input: [{ role: 'user', content: 'hi' }] })).status, 200);
  const first = await open('r-meter-3', false);
  await ask(first);
  await first.close();
  assert.equal(JSON.parse(readFileSync(statsFile, 'utf8')).usage.input, 200, 'written without waiting for the activity to end');
  const resumed = await open('r-meter-3b', true);
  try {
    assert.equal(resumed.stats.usage.input, 200);
    assert.equal(resumed.stats.settings!.requests, 1);
    await ask(resumed);
    assert.equal(resumed.stats.usage.input, 400);
    assert.equal(resumed.stats.usage.requests, 2);
  } finally {
    await resumed.close();
  }
  const fresh = await open('r-meter-3c', false);
  try {
    assert.equal(fresh.stats.usage.input, 0, 'a new agent run starts from zero');
  } finally {
    await fresh.close();
  }
});
