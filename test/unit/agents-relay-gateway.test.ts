// The relay as the LLM gateway, in-process against the fakes: each agent's request shape (Claude
// Code: Anthropic Messages; Codex: Responses; OpenHands: Chat) to an upstream of another protocol,
// streaming and not, errors in the agent's protocol, usage in the stats, and the credentials kept
// on their side (the real key never reaches the agent, the relay token never the upstream).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type Relay } from '../../src/agents/llm-relay';
import type { Upstream } from '../../src/agents/models';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import { startFakeOpenAI } from '../fakes/fake-openai';
import type { FakeServer } from '../fakes/fake-common';

const KEY = 'sk-real-key-gateway-unit-9876543210';
const fakes: FakeServer[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

interface Answer {
  status: number;
  text: string;
  headers: http.IncomingHttpHeaders;
}

function call(url: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
    const req = http.request(new URL(path, url), { method, headers: { 'content-type': 'application/json', 'content-length': String(data.length), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

let n = 0;
async function relayTo(upstream: Partial<Upstream> & Pick<Upstream, 'baseUrl' | 'auth' | 'protocol'>): Promise<Relay> {
  return startRelay({ key: `r-gw-${++n}`, bindHost: '127.0.0.1', upstream: { key: KEY, keyEnv: 'X', ...upstream }, stateDir: mkdtempSync(join(tmpdir(), 'relay-gw-')), model: 'snap-1' });
}

/** The SSE data payloads of an answer, parsed (skipping [DONE]). */
const events = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)) as Record<string, any>);

/** Neither credential crossed to the wrong side. */
function assertSecretsKept(relay: Relay, fake: FakeServer, answers: Answer[]): void {
  for (const a of answers) {
    assert.ok(!a.text.includes(KEY) && !JSON.stringify(a.headers).includes(KEY), 'the real key never reaches the agent');
  }
  assert.ok(fake.requests.length > 0);
  for (const r of fake.requests) {
    if (r.modelCall !== undefined) assert.equal(r.auth, 'ok', `upstream request ${r.n} carried the real key`);
    assert.equal(r.foreignCredential, undefined);
  }
  assert.ok(!JSON.stringify(fake.requests).includes(relay.token), 'the relay token never reaches the upstream');
}

const bashTool = { name: 'Bash', description: 'Run a shell command', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } };

test('gateway: Claude Code (Anthropic Messages, streaming, tool use) on a Chat Completions upstream', async () => {
  const fake = await startFakeOpenAI({ script: { commands: ['npm run build'], finalText: 'Built.' }, requireKey: KEY });
  fakes.push(fake);
  const relay = await relayTo({ baseUrl: `${fake.url}/v1`, auth: 'bearer', protocol: 'chat' });
  try {
    const h = { 'x-api-key': relay.token, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'x' };
    const turn1 = { model: 'snap-1', stream: true, max_tokens: 4096, system: [{ type: 'text', text: 'You are Claude Code.' }], messages: [{ role: 'user', content: 'build the app' }], tools: [bashTool] };
    const a1 = await call(relay.url, 'POST', '/v1/messages?beta=true', h, turn1);
    assert.equal(a1.status, 200);
    assert.match(String(a1.headers['content-type']), /text\/event-stream/);
    const up1 = fake.modelCalls()[0];
    assert.equal(up1.path, '/v1/chat/completions', 'the Chat endpoint under the provider base');
    const upBody = up1.body as { messages: { role: string; content: unknown }[]; tools: { function: { name: string } }[]; stream: boolean };
    assert.equal(upBody.stream, true);
    assert.equal(upBody.messages[0].role, 'system');
    assert.equal(upBody.tools[0].function.name, 'Bash');
    const ev1 = events(a1.text);
    assert.deepEqual([ev1[0].type, ev1.at(-1)!.type], ['message_start', 'message_stop']);
    const toolStart = ev1.find((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use')!;
    assert.equal(toolStart.content_block.name, 'Bash');
    const args = ev1.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta').map((e) => e.delta.partial_json).join('');
    assert.equal(JSON.parse(args).command, 'npm run build');
    assert.equal(ev1.find((e) => e.type === 'message_delta')!.delta.stop_reason, 'tool_use');

    // turn 2: the tool result goes back as a Chat tool message; the final text ends the turn
    const turn2 = {
      ...turn1,
      messages: [...turn1.messages, { role: 'assistant', content: [{ type: 'tool_use', id: toolStart.content_block.id, name: 'Bash', input: { command: 'npm run build' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolStart.content_block.id, content: 'ok' }] }],
    };
    const a2 = await call(relay.url, 'POST', '/v1/messages', h, turn2);
    const ev2 = events(a2.text);
    assert.equal(ev2.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'text_delta').map((e) => e.delta.text).join(''), 'Built.');
    assert.equal(ev2.find((e) => e.type === 'message_delta')!.delta.stop_reason, 'end_turn');
    const toolMsg = (fake.modelCalls()[1].body as { messages: { role: string; tool_call_id?: string }[] }).messages.find((m) => m.role === 'tool')!;
    assert.equal(toolMsg.tool_call_id, toolStart.content_block.id, 'tool-call ids kept across the protocols');

    // a background call naming Claude Code's own small model goes to the rollout's snapshot
    await call(relay.url, 'POST', '/v1/messages', h, { ...turn1, model: 'claude-haiku-4-5' });
    assert.equal(fake.modelCalls().at(-1)!.model, 'snap-1');

    // non-streaming
    const a3 = await call(relay.url, 'POST', '/v1/messages', h, { ...turn1, stream: false });
    const whole = JSON.parse(a3.text) as { type: string; stop_reason: string; content: { type: string; name?: string }[]; usage: { input_tokens: number } };
    assert.equal(whole.type, 'message');
    assert.equal(whole.stop_reason, 'tool_use');
    assert.equal(whole.content.find((b) => b.type === 'tool_use')!.name, 'Bash');

    // side endpoints Chat providers do not have: answered locally
    const ct = await call(relay.url, 'POST', '/v1/messages/count_tokens?beta=true', h, { model: 'snap-1', messages: turn1.messages, tools: [bashTool] });
    assert.equal(ct.status, 200);
    assert.ok((JSON.parse(ct.text) as { input_tokens: number }).input_tokens > 10);
    const models = await call(relay.url, 'GET', '/v1/models', h);
    assert.equal((JSON.parse(models.text) as { data: { id: string }[] }).data[0].id, 'snap-1');
    assert.equal(fake.modelCalls().length, 4, 'side endpoints never reach the upstream');

    // usage (Chat prompt_tokens 300+step, completion_tokens 40+step) summed per rollout
    assert.deepEqual(relay.stats.usage, { requests: 4, input: 300 + 301 + 300 + 300, cachedInput: 0, output: 40 + 41 + 40 + 40, reasoning: 0 });
    assert.equal(relay.stats.translated, 4);
    assertSecretsKept(relay, fake, [a1, a2, a3, ct, models]);
  } finally {
    await relay.close();
  }
});

const shellFn = { type: 'function', name: 'Bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } };
const codexTurn = (stream: boolean) => ({
  model: 'snap-1',
  stream,
  instructions: 'You are Codex.',
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'build the app' }] }],
  tools: [shellFn],
  store: false,
});

test('gateway: Codex (Responses) on a Chat upstream and on an Anthropic upstream, streaming and not', async () => {
  const chatFake = await startFakeOpenAI({ script: { commands: ['make'] }, requireKey: KEY });
  const anthFake = await startFakeAnthropic({ script: { commands: ['make'] }, requireKey: KEY });
  fakes.push(chatFake, anthFake);
  const toChat = await relayTo({ baseUrl: `${chatFake.url}/v1`, auth: 'bearer', protocol: 'chat' });
  const toAnth = await relayTo({ baseUrl: anthFake.url, auth: 'x-api-key', protocol: 'anthropic' });
  try {
    for (const [relay, fake, path] of [
      [toChat, chatFake, '/v1/chat/completions'],
      [toAnth, anthFake, '/v1/messages'],
    ] as const) {
      const h = { authorization: `Bearer ${relay.token}` };
      const s = await call(relay.url, 'POST', '/responses', h, codexTurn(true));
      assert.equal(s.status, 200, s.text);
      assert.equal(fake.modelCalls().at(-1)!.path, path);
      const ev = events(s.text);
      assert.equal(ev[0].type, 'response.created');
      const done = ev.find((e) => e.type === 'response.completed')!;
      const fc = (done.response.output as { type: string; name?: string; arguments?: string }[]).find((o) => o.type === 'function_call')!;
      assert.equal(fc.name, 'Bash');
      assert.equal(JSON.parse(fc.arguments!).command, 'make');
      assert.ok(ev.some((e) => e.type === 'response.function_call_arguments.delta'), 'arguments streamed');
      const w = await call(relay.url, 'POST', '/responses', h, codexTurn(false));
      const whole = JSON.parse(w.text) as { object: string; status: string; output: { type: string; name?: string }[]; usage: { input_tokens: number } };
      assert.equal(whole.object, 'response');
      assert.equal(whole.status, 'completed');
      assert.equal(whole.output.find((o) => o.type === 'function_call')!.name, 'Bash');
      assertSecretsKept(relay, fake, [s, w]);
    }
    const anthUp = anthFake.modelCalls()[0].body as { system: unknown; max_tokens: number; tools: { name: string; input_schema: unknown }[] };
    assert.ok(anthUp.max_tokens > 0 && anthUp.tools[0].input_schema, 'an Anthropic request: max_tokens, input_schema');
    // Anthropic usage: input 100+10 cache reads, output 20, per request
    assert.deepEqual(toAnth.stats.usage, { requests: 2, input: 220, cachedInput: 20, output: 40, reasoning: 0 });
  } finally {
    await toChat.close();
    await toAnth.close();
  }
});

test('gateway: a Chat agent (OpenHands) on a Responses-only upstream, streaming and not', async () => {
  const fake = await startFakeOpenAI({ script: { commands: ['ls'] }, requireKey: KEY });
  fakes.push(fake);
  const relay = await relayTo({ baseUrl: `${fake.url}/v1`, auth: 'bearer', protocol: 'responses' });
  try {
    const h = { authorization: `Bearer ${relay.token}` };
    const body = { model: 'snap-1', messages: [{ role: 'system', content: 'You are OpenHands.' }, { role: 'user', content: 'list files' }], tools: [{ type: 'function', function: { name: 'shell_command', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }], stream: true, stream_options: { include_usage: true } };
    const s = await call(relay.url, 'POST', '/chat/completions', h, body);
    assert.equal(s.status, 200, s.text);
    assert.equal(fake.modelCalls()[0].path, '/v1/responses');
    assert.match(s.text, /data: \[DONE\]\n\n$/);
    const chunks = events(s.text);
    const calls = chunks.flatMap((c) => (c.choices?.[0]?.delta?.tool_calls ?? []) as { function: { name?: string; arguments?: string } }[]);
    assert.equal(calls[0].function.name, 'shell_command');
    assert.equal(JSON.parse(calls.map((c) => c.function.arguments ?? '').join('')).command, 'ls');
    assert.equal(chunks.find((c) => c.choices?.[0]?.finish_reason)!.choices[0].finish_reason, 'tool_calls');
    assert.equal(chunks.at(-1)!.usage.prompt_tokens, 200);
    const w = await call(relay.url, 'POST', '/v1/chat/completions', h, { ...body, stream: false });
    const whole = JSON.parse(w.text) as { object: string; choices: { message: { tool_calls: { function: { name: string } }[] } }[] };
    assert.equal(whole.object, 'chat.completion');
    assert.equal(whole.choices[0].message.tool_calls[0].function.name, 'shell_command');
    // Responses usage: input 200 (50 cached), output 30 (5 reasoning)
    assert.deepEqual(relay.stats.usage, { requests: 2, input: 400, cachedInput: 100, output: 60, reasoning: 10 });
    assertSecretsKept(relay, fake, [s, w]);
  } finally {
    await relay.close();
  }
});

test('gateway: upstream 529/503/429 reach the agent as its own protocol’s overloaded / rate-limit error, Retry-After kept', async () => {
  const anth = await startFakeAnthropic({ script: { commands: [] }, requireKey: KEY, faults: { 1: { kind: 'overloaded' }, 2: { kind: 'overloaded' } } });
  const oai = await startFakeOpenAI({ script: { commands: [] }, requireKey: KEY, faults: { 1: { kind: 'overloaded' } } });
  fakes.push(anth, oai);
  // a provider answering 429 with Retry-After
  const limited = http.createServer((req, res) => {
    req.resume();
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
    res.end(JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }));
  });
  await new Promise<void>((r) => limited.listen(0, '127.0.0.1', r));
  const codexToAnth = await relayTo({ baseUrl: anth.url, auth: 'x-api-key', protocol: 'anthropic' });
  const claudeToChat = await relayTo({ baseUrl: `${oai.url}/v1`, auth: 'bearer', protocol: 'chat' });
  const claudeToLimited = await relayTo({ baseUrl: `http://127.0.0.1:${(limited.address() as { port: number }).port}/v1`, auth: 'bearer', protocol: 'responses' });
  try {
    // Anthropic 529 overloaded_error → a Responses agent's 503 server_is_overloaded (Codex retries it)
    const c = await call(codexToAnth.url, 'POST', '/responses', { authorization: `Bearer ${codexToAnth.token}` }, codexTurn(true));
    assert.equal(c.status, 503);
    assert.equal((JSON.parse(c.text) as { error: { code: string } }).error.code, 'server_is_overloaded');
    assert.equal(c.headers['x-should-retry'], undefined, 'provider retry hints are not passed on');
    // … and a Chat agent's too
    const o = await call(codexToAnth.url, 'POST', '/chat/completions', { authorization: `Bearer ${codexToAnth.token}` }, { model: 'snap-1', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(o.status, 503);
    assert.equal((JSON.parse(o.text) as { error: { code: string } }).error.code, 'server_is_overloaded');
    // OpenAI 503 server_is_overloaded → Claude Code's 529 overloaded_error
    const a = await call(claudeToChat.url, 'POST', '/v1/messages', { 'x-api-key': claudeToChat.token }, { model: 'snap-1', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(a.status, 529);
    assert.deepEqual(JSON.parse(a.text), { type: 'error', error: { type: 'overloaded_error', message: 'The server is overloaded or not ready yet.' } });
    // 429 with Retry-After → Anthropic 429 rate_limit_error, retry-after kept
    const l = await call(claudeToLimited.url, 'POST', '/v1/messages', { 'x-api-key': claudeToLimited.token }, { model: 'snap-1', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(l.status, 429);
    assert.equal((JSON.parse(l.text) as { error: { type: string } }).error.type, 'rate_limit_error');
    assert.equal(l.headers['retry-after'], '7');
    assert.deepEqual(codexToAnth.stats.statusCounts, { 529: 2 });
    assert.deepEqual(codexToAnth.stats.usage.requests, 0, 'no usage from errors');
  } finally {
    await codexToAnth.close();
    await claudeToChat.close();
    await claudeToLimited.close();
    await new Promise<void>((r) => limited.close(() => r()));
  }
});

test('gateway: same protocol passes through untranslated (usage metered on the side); a bad agent body is a 400 in its protocol', async () => {
  const fake = await startFakeAnthropic({ script: { commands: ['echo hi'] }, requireKey: KEY });
  fakes.push(fake);
  const relay = await relayTo({ baseUrl: fake.url, auth: 'x-api-key', protocol: 'anthropic' });
  try {
    const a = await call(relay.url, 'POST', '/v1/messages?beta=true', { 'x-api-key': relay.token }, { model: 'snap-1', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }], tools: [bashTool] });
    assert.equal(a.status, 200);
    assert.equal(relay.stats.translated, 0);
    // metered on the side: Anthropic input 100 + 10 cache reads, output 20
    assert.deepEqual(relay.stats.usage, { requests: 1, input: 110, cachedInput: 10, output: 20, reasoning: 0 });
    assert.match(a.text, /^event: message_start\n/, 'the bytes themselves untouched');
    // count_tokens goes to the Anthropic upstream itself (the fake answers 42)
    const ct = await call(relay.url, 'POST', '/v1/messages/count_tokens', { 'x-api-key': relay.token, 'anthropic-version': '2023-06-01' }, { model: 'snap-1', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal((JSON.parse(ct.text) as { input_tokens: number }).input_tokens, 42);
    const bad = await call(relay.url, 'POST', '/responses', { authorization: `Bearer ${relay.token}` }, { model: 'snap-1', input: [{ type: 'message', role: 'user', content: 7 }] });
    assert.equal(bad.status, 400);
    assert.match((JSON.parse(bad.text) as { error: { message: string } }).error.message, /Responses request: at \$\.input\[0\]/);
    assert.equal(fake.modelCalls().length, 1, 'a request the gateway cannot read never reaches the upstream');
  } finally {
    await relay.close();
  }
});
