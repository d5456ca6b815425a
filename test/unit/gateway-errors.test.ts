// Upstream errors reach the agent as its own protocol's error (status, body type/code) with
// Retry-After kept, in plain responses and inside streams; usage and stop tables map as documented.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser, StreamTranslator, decodeResponse, mapUpstreamError, translateResponse } from '../../src/gateway';
import { anthropicStream, responsesStream } from '../fakes/gateway-samples';

const anthropicOverloaded = JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
const openaiRate = JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } });
const openaiOverloaded = JSON.stringify({ error: { message: 'The server is overloaded', type: 'server_error', code: 'server_is_overloaded' } });

test('errors: Anthropic 529 overloaded → OpenAI agents get 503 server_is_overloaded; Anthropic agents keep 529', () => {
  const c = mapUpstreamError(529, {}, anthropicOverloaded, 'chat');
  assert.equal(c.status, 503);
  assert.deepEqual(JSON.parse(c.body), { error: { message: 'Overloaded', type: 'server_error', param: null, code: 'server_is_overloaded' } });
  const a = mapUpstreamError(529, { 'x-should-retry': 'false' }, anthropicOverloaded, 'anthropic');
  assert.equal(a.status, 529);
  assert.deepEqual(JSON.parse(a.body), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  assert.equal(a.headers['x-should-retry'], undefined); // provider hints that would stop the agent's retry are not copied
});

test('errors: OpenAI 429 → Anthropic 429 rate_limit_error with Retry-After; 503 overloaded → 529', () => {
  const a = mapUpstreamError(429, { 'retry-after': '7' }, openaiRate, 'anthropic');
  assert.equal(a.status, 429);
  assert.equal(JSON.parse(a.body).error.type, 'rate_limit_error');
  assert.equal(a.headers['retry-after'], '7');
  assert.equal(a.headers['retry-after-ms'], '7000');
  const o = mapUpstreamError(503, { 'retry-after-ms': '1500' }, openaiOverloaded, 'anthropic');
  assert.equal(o.status, 529);
  assert.equal(JSON.parse(o.body).error.type, 'overloaded_error');
  assert.equal(o.headers['retry-after'], '2');
  const r = mapUpstreamError(429, {}, anthropicOverloaded.replace('overloaded_error', 'rate_limit_error'), 'responses');
  assert.equal(r.status, 429);
  assert.deepEqual(JSON.parse(r.body).error.type, 'rate_limit_exceeded');
  assert.equal(r.headers['retry-after'], undefined);
});

test('errors: the body is more specific than the status; plain-text and unknown bodies keep the status meaning', () => {
  assert.equal(mapUpstreamError(500, {}, anthropicOverloaded, 'anthropic').status, 529);
  assert.equal(mapUpstreamError(502, {}, '<html>bad gateway</html>', 'anthropic').status, 500);
  assert.equal(mapUpstreamError(401, {}, 'nope', 'chat').status, 401);
  assert.equal(mapUpstreamError(400, {}, JSON.stringify({ error: { message: 'bad', type: 'invalid_request_error' } }), 'anthropic').status, 400);
  assert.equal(mapUpstreamError(504, {}, '', 'responses').status, 504);
});

function frames(text: string): { event?: string; data: string }[] {
  const p = new SseParser();
  return [...p.push(text), ...p.end()];
}

test('errors in streams: an Anthropic overloaded event becomes response.failed / a Chat error chunk', () => {
  const cut = anthropicStream().split('event: content_block_start')[0] + 'event: error\ndata: ' + anthropicOverloaded + '\n\n';
  const r = new StreamTranslator('anthropic', 'responses');
  const last = frames(r.push(cut) + r.end()).pop()!;
  assert.equal(last.event, 'response.failed');
  assert.deepEqual(JSON.parse(last.data).response.error, { code: 'server_is_overloaded', message: 'Overloaded' });
  const c = new StreamTranslator('anthropic', 'chat');
  const lastChat = frames(c.push(cut) + c.end()).pop()!;
  assert.equal(JSON.parse(lastChat.data).error.code, 'server_is_overloaded');
});

test('errors in streams: Responses response.failed and a cut-off Responses stream reach Claude Code as error events', () => {
  const failed = responsesStream().split('event: response.output_item.added')[0] + 'event: response.failed\ndata: ' + JSON.stringify({ type: 'response.failed', response: { id: 'r', status: 'failed', error: { code: 'rate_limit_exceeded', message: 'slow down' } } }) + '\n\n';
  const t = new StreamTranslator('responses', 'anthropic');
  const last = frames(t.push(failed) + t.end()).pop()!;
  assert.equal(last.event, 'error');
  assert.deepEqual(JSON.parse(last.data), { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
  const cutOff = responsesStream().split('event: response.completed')[0];
  const u = new StreamTranslator('responses', 'anthropic');
  const end = frames(u.push(cutOff) + u.end()).pop()!;
  assert.equal(JSON.parse(end.data).error.type, 'api_error');
});

test('usage and stop: one shape for metering; each protocol stop names', () => {
  const a = decodeResponse('anthropic', { id: 'x', model: 'm', content: [], stop_reason: 'max_tokens', usage: { input_tokens: 10, cache_read_input_tokens: 90, cache_creation_input_tokens: 5, output_tokens: 7 } });
  assert.deepEqual(a.usage, { input: 105, cachedInput: 90, output: 7, reasoning: 0 });
  assert.equal(a.stop, 'max_tokens');
  const c = decodeResponse('chat', { id: 'x', model: 'm', choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 9, prompt_cache_hit_tokens: 60, completion_tokens_details: { reasoning_tokens: 4 } } });
  assert.deepEqual(c.usage, { input: 100, cachedInput: 60, output: 9, reasoning: 4 });
  const r = decodeResponse('responses', { id: 'x', model: 'm', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [], usage: { input_tokens: 3, output_tokens: 2 } });
  assert.equal(r.stop, 'max_tokens');
  const asChat = translateResponse('anthropic', 'chat', { id: 'x', model: 'm', content: [{ type: 'text', text: 'a' }], stop_reason: 'end_turn', usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 7 } }) as any;
  assert.equal(asChat.choices[0].finish_reason, 'stop');
  assert.deepEqual(asChat.usage.prompt_tokens_details, { cached_tokens: 90 });
  assert.equal(asChat.usage.prompt_tokens, 100);
  const asAnthropic = translateResponse('responses', 'anthropic', { id: 'x', model: 'm', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [], usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 30 }, output_tokens: 2 } }) as any;
  assert.equal(asAnthropic.stop_reason, 'max_tokens');
  assert.deepEqual(asAnthropic.usage, { input_tokens: 70, cache_creation_input_tokens: 0, cache_read_input_tokens: 30, output_tokens: 2 });
  const asResponses = translateResponse('chat', 'responses', { id: 'x', model: 'm', choices: [{ message: { content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] }) as any;
  assert.equal(asResponses.status, 'completed');
  assert.equal(asResponses.output[0].type, 'function_call');
});

// Bug found by the agents × protocols matrix: Codex 0.128 does not retry an HTTP 429 (it ends the
// turn with "exceeded retry limit, last status: 429"); it retries an in-band response.failed
// rate_limit_exceeded after the delay its message names.
test('errors: a 429 for a streaming Responses agent arrives in-band (200, response.failed rate_limit_exceeded, "try again in Ns")', () => {
  const anthropicRate = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited' } });
  const s = mapUpstreamError(429, { 'retry-after': '3' }, anthropicRate, 'responses', { stream: true });
  assert.equal(s.status, 200);
  assert.match(s.headers['content-type'], /text\/event-stream/);
  const p = new SseParser();
  const evs = [...p.push(s.body), ...p.end()];
  assert.deepEqual(evs.map((e) => e.event), ['response.created', 'response.failed']);
  const failed = JSON.parse(evs[1].data) as { type: string; response: { status: string; error: { code: string; message: string } } };
  assert.equal(failed.type, 'response.failed');
  assert.equal(failed.response.status, 'failed');
  assert.equal(failed.response.error.code, 'rate_limit_exceeded');
  assert.match(failed.response.error.message, /^Rate limited\. Please try again in 3s\.$/);
  // without the hint header there is no delay to name; a non-streaming agent and other kinds keep the HTTP status
  assert.doesNotMatch(JSON.parse(new SseParser().push(mapUpstreamError(429, {}, anthropicRate, 'responses', { stream: true }).body)[1].data).response.error.message, /try again/);
  assert.equal(mapUpstreamError(429, { 'retry-after': '3' }, anthropicRate, 'responses').status, 429);
  assert.equal(mapUpstreamError(529, {}, anthropicOverloaded, 'responses', { stream: true }).status, 503);
  assert.equal(mapUpstreamError(429, { 'retry-after': '3' }, anthropicRate, 'anthropic', { stream: true }).status, 429);
});

test('errors: a rate limit inside a translated stream reaches a Responses agent as response.failed rate_limit_exceeded', () => {
  const tr = new StreamTranslator('anthropic', 'responses', { model: 'm' } as never);
  let out = tr.push(Buffer.from('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n'));
  out += tr.push(Buffer.from('event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}\n\n'));
  out += tr.end();
  const failed = [...new SseParser().push(out)].find((e) => e.event === 'response.failed');
  assert.ok(failed, out);
  assert.equal(JSON.parse(failed.data).response.error.code, 'rate_limit_exceeded');
});
