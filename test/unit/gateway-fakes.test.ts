// The translation against the project's own fake providers over real HTTP on 127.0.0.1: a request
// translated from the agent's protocol is accepted by the fake upstream, and its streamed answer,
// fed to the StreamTranslator exactly as the socket delivers it, is a valid stream for the agent.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { SseParser, StreamTranslator, mapUpstreamError, translateRequest, translateResponse, type Protocol } from '../../src/gateway';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import { startFakeOpenAI } from '../fakes/fake-openai';
import type { FakeServer } from '../fakes/fake-common';

const fakes: FakeServer[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

function post(url: string, body: unknown, onChunk: (b: Buffer) => void): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(data.length) } }, (res) => {
      res.on('data', onChunk);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function through(upstreamUrl: string, agent: Protocol, upstream: Protocol, body: unknown): Promise<Record<string, any>[]> {
  const t = translateRequest(agent, upstream, body);
  const tr = new StreamTranslator(upstream, agent, t.context);
  let out = '';
  const res = await post(upstreamUrl, t.body, (b) => (out += tr.push(b)));
  assert.equal(res.status, 200);
  out += tr.end();
  const p = new SseParser();
  return [...p.push(out), ...p.end()].filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data) as Record<string, any>);
}

test('fakes: Claude Code request → fake Chat upstream (OpenHands script) → Anthropic stream with a tool_use', async () => {
  const fake = await startFakeOpenAI({ script: { commands: ['echo hi'] } });
  fakes.push(fake);
  const evs = await through(`${fake.url}/v1/chat/completions`, 'anthropic', 'chat', { model: 'claude-x', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'go' }], tools: [{ name: 'execute_bash', input_schema: { type: 'object' } }] });
  const sent = fake.modelCalls()[0].body as Record<string, any>;
  assert.deepEqual(sent.stream_options, { include_usage: true });
  assert.equal(sent.tools[0].function.name, 'execute_bash');
  const start = evs.find((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use');
  assert.equal(start?.content_block.name, 'execute_bash');
  const json = evs.filter((e) => e.delta?.type === 'input_json_delta').map((e) => e.delta.partial_json).join('');
  assert.equal(JSON.parse(json).command, 'echo hi');
  assert.equal(evs.find((e) => e.type === 'message_delta')?.delta.stop_reason, 'tool_use');
  assert.equal(evs.find((e) => e.type === 'message_delta')?.usage.input_tokens, 300);
  assert.equal(evs[evs.length - 1].type, 'message_stop');
});

test('fakes: Codex request → fake Anthropic upstream → Responses stream with a function_call', async () => {
  const fake = await startFakeAnthropic({ script: { commands: ['ls'] } });
  fakes.push(fake);
  const evs = await through(`${fake.url}/v1/messages`, 'responses', 'anthropic', { model: 'gpt-x', stream: true, input: [{ role: 'user', content: 'go' }], tools: [{ type: 'function', name: 'Bash', parameters: { type: 'object' } }] });
  const sent = fake.modelCalls()[0].body as Record<string, any>;
  assert.equal(sent.max_tokens, 32000);
  const done = evs[evs.length - 1];
  assert.equal(done.type, 'response.completed');
  const call = done.response.output.find((i: any) => i.type === 'function_call');
  assert.equal(JSON.parse(call.arguments).command, 'ls');
  assert.match(call.call_id, /^toolu_/);
  assert.deepEqual(done.response.usage.input_tokens_details, { cached_tokens: 10 });
});

test('fakes: OpenHands (Chat) request → fake Responses upstream → Chat chunks with the final text, finish_reason and usage', async () => {
  const fake = await startFakeOpenAI({ script: { commands: [], finalText: 'All done 世界' } });
  fakes.push(fake);
  const evs = await through(`${fake.url}/v1/responses`, 'chat', 'responses', { model: 'm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'go' }] });
  assert.equal(evs.map((e) => e.choices[0]?.delta.content ?? '').join(''), 'All done 世界');
  assert.equal(evs[evs.length - 2].choices[0].finish_reason, 'stop');
  assert.equal(evs[evs.length - 1].usage.prompt_tokens, 200);
});

test('fakes: the fake Anthropic 529 overloaded reaches a Codex agent as 503 server_is_overloaded; JSON answers translate too', async () => {
  const fake = await startFakeAnthropic({ script: { commands: ['ls'] }, faults: { 1: { kind: 'overloaded' } } });
  fakes.push(fake);
  const body = translateRequest('responses', 'anthropic', { model: 'm', input: 'go', tools: [{ type: 'function', name: 'Bash', parameters: { type: 'object' } }] }).body;
  let text = '';
  const r1 = await post(`${fake.url}/v1/messages`, body, (b) => (text += b.toString()));
  const mapped = mapUpstreamError(r1.status, r1.headers, text, 'responses');
  assert.equal(mapped.status, 503);
  assert.equal(JSON.parse(mapped.body).error.code, 'server_is_overloaded');
  text = '';
  await post(`${fake.url}/v1/messages`, body, (b) => (text += b.toString()));
  const asResponses = translateResponse('anthropic', 'responses', JSON.parse(text)) as Record<string, any>;
  assert.deepEqual(asResponses.output.map((i: any) => i.type), ['message', 'function_call']);
  assert.equal(asResponses.status, 'completed');
});

test('fakes: maxConcurrent — a request beyond the limit gets 429 + Retry-After in the provider shape; a slot frees when an answer ends', async () => {
  for (const [start, path, shape] of [[startFakeAnthropic, '/v1/messages', 'rate_limit_error'], [startFakeOpenAI, '/v1/chat/completions', 'rate_limit_exceeded']] as const) {
    const f = await start({ script: { commands: [] }, maxConcurrent: 2, limitRetryAfter: 3, delayFor: () => 300 });
    fakes.push(f);
    const body = { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] };
    let refusal = '';
    const three = await Promise.all([0, 1, 2].map((i) => new Promise((r) => setTimeout(r, i * 50)).then(() => post(`${f.url}${path}`, body, (b) => (refusal += b.toString())))));
    assert.deepEqual(three.map((x) => x.status), [200, 200, 429], path);
    assert.equal(three[2].headers['retry-after'], '3');
    assert.match(refusal, new RegExp(shape));
    assert.equal(f.maxOpen(), 2);
    assert.equal(f.modelCalls().filter((x) => x.fault === 'concurrency_limit').length, 1);
    assert.equal((await post(`${f.url}${path}`, body, () => undefined)).status, 200, 'both answers ended: a slot is free');
  }
});
