// Streaming translation in all nine upstream→agent pairs, fed chunk-split SSE bytes: the agent's
// stream, decoded again, holds the same text, tool call, reasoning (restored exactly where the
// agent protocol has an opaque slot), stop reason and usage; the wire shapes are the agents' own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayMemory, SseParser, StreamTranslator, collectEvents, createStreamDecoder, type IrEvent, type IrReasoning, type IrResponse, type Protocol } from '../../src/gateway';
import { anthropicStream, chatStream, responsesStream, splitBytes } from '../fakes/gateway-samples';

const P: Protocol[] = ['anthropic', 'chat', 'responses'];
const SAMPLE: Record<Protocol, () => string> = { anthropic: anthropicStream, chat: chatStream, responses: responsesStream };
const THOUGHT = 'I should list files — ünïcode.';
const NATIVE: Record<Protocol, IrReasoning> = {
  anthropic: { origin: 'anthropic', text: THOUGHT, signature: 'EqQBCkgSIG-native-sig==' },
  chat: { origin: 'chat', text: THOUGHT },
  responses: { origin: 'responses', itemId: 'rs_R1', summary: ['I should list ', 'files — ünïcode.'], encrypted: 'gAAAA-encrypted-blob' },
};
const VISIBLE: Record<Protocol, string> = { anthropic: THOUGHT, chat: THOUGHT, responses: 'I should list \n\nfiles — ünïcode.' };

function translate(up: Protocol, agent: Protocol, input: string, seed: number, memory = new GatewayMemory(), maxLen = 9): string {
  const t = new StreamTranslator(up, agent, { memory, includeUsage: true });
  let out = '';
  for (const c of splitBytes(input, seed, maxLen)) out += t.push(c);
  return out + t.end();
}

function decodeAgentStream(agent: Protocol, text: string): IrResponse {
  const p = new SseParser();
  const d = createStreamDecoder(agent);
  const evs: IrEvent[] = [...p.push(text), ...p.end()].flatMap((e) => d.push(e));
  const r = collectEvents([...evs, ...d.end()]);
  if ('error' in r) assert.fail(`agent stream ended in error: ${r.error.message}`);
  return r;
}

for (const up of P) {
  for (const agent of P) {
    test(`stream ${up} → ${agent}: text, tool call, reasoning, stop and usage survive arbitrary byte splits`, () => {
      const memory = new GatewayMemory();
      const outputs = [1, 2, 3].map((seed) => translate(up, agent, SAMPLE[up](), seed, memory));
      // the same bytes cut differently give the same agent stream (up to generated ids and clocks)
      const norm = (s: string) => s.replace(/_sbgw[0-9a-z]+/g, '_ID').replace(/"(created|created_at)":\d+/g, '"$1":0');
      assert.ok(outputs[0].length > 0);
      assert.equal(norm(outputs[1]), norm(outputs[0]));
      assert.equal(norm(outputs[2]), norm(outputs[0]));
      const r = decodeAgentStream(agent, outputs[0]);
      const byType = (t: string) => r.parts.filter((p) => p.type === t);
      assert.deepEqual(byType('text'), [{ type: 'text', text: 'Listing 世界' }]);
      const [call] = byType('tool_call') as Extract<IrResponse['parts'][number], { type: 'tool_call' }>[];
      assert.equal(call.id, up === 'anthropic' ? 'toolu_X' : 'call_X');
      assert.equal(call.name, 'Bash');
      assert.deepEqual(JSON.parse(call.args), { command: 'ls' });
      const [reasoning] = byType('reasoning') as Extract<IrResponse['parts'][number], { type: 'reasoning' }>[];
      if (agent === 'chat' && up !== 'chat') {
        // Chat shows the text; the provider's signature/blob waits in the memory for the next turn
        assert.deepEqual(reasoning.reasoning, { origin: 'chat', text: VISIBLE[up] });
        assert.deepEqual(memory.recall(GatewayMemory.keyOf([call.id], 'Listing 世界'))?.reasoning, [NATIVE[up]]);
      } else assert.deepEqual(reasoning.reasoning, NATIVE[up]);
      if (up === 'chat') {
        const sig = agent === 'chat' ? call.thoughtSignature : memory.recall(GatewayMemory.keyOf(['call_X'], ''))?.thoughtSignatures.call_X;
        assert.equal(sig, 'GEMINI-SIG-1');
      }
      assert.equal(r.stop, 'tool_use');
      const reasoningTokens = up === 'anthropic' || agent === 'anthropic' ? 0 : 20; // Anthropic reports none
      assert.deepEqual(r.usage, { input: 150, cachedInput: 40, output: 55, reasoning: reasoningTokens });
    });
  }
}

test('stream: every single-byte split gives the same agent stream as one whole chunk (Responses → Anthropic)', () => {
  const whole = new StreamTranslator('responses', 'anthropic');
  const a = whole.push(responsesStream()) + whole.end();
  const b = translate('responses', 'anthropic', responsesStream(), 7, new GatewayMemory(), 1);
  assert.equal(b, a);
});

test('stream → anthropic: the event sequence Claude Code reads, signature_delta right before its block stops', () => {
  const out = translate('chat', 'anthropic', chatStream(), 5);
  const p = new SseParser();
  const evs = [...p.push(out), ...p.end()];
  const names = evs.map((e) => e.event);
  assert.deepEqual(names.filter((n, i) => n !== names[i - 1]), ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  const data = evs.map((e) => JSON.parse(e.data) as Record<string, any>);
  const sigAt = data.findIndex((d) => d.delta?.type === 'signature_delta');
  assert.equal(data[sigAt + 1].type, 'content_block_stop');
  assert.match(data[sigAt].delta.signature, /^sbgw1\./);
  assert.deepEqual(data.find((d) => d.type === 'message_delta')?.delta, { stop_reason: 'tool_use', stop_sequence: null });
  assert.deepEqual(data.find((d) => d.type === 'content_block_start' && d.content_block.type === 'tool_use')?.content_block, { type: 'tool_use', id: 'call_X', name: 'Bash', input: {} });
});

test('stream → chat: chunks with delta.reasoning_content/content/tool_calls, finish_reason, a usage chunk and [DONE]', () => {
  const out = translate('anthropic', 'chat', anthropicStream(), 3);
  const p = new SseParser();
  const evs = [...p.push(out), ...p.end()];
  assert.equal(evs[evs.length - 1].data, '[DONE]');
  const chunks = evs.slice(0, -1).map((e) => JSON.parse(e.data) as Record<string, any>);
  assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === 'msg_A'));
  const usage = chunks[chunks.length - 1];
  assert.deepEqual(usage.choices, []);
  assert.equal(usage.usage.prompt_tokens, 150);
  assert.equal(chunks[chunks.length - 2].choices[0].finish_reason, 'tool_calls');
  assert.ok(chunks.some((c) => c.choices[0]?.delta.reasoning_content === 'I should list '));
  const firstCall = chunks.find((c) => c.choices[0]?.delta.tool_calls)!.choices[0].delta.tool_calls[0];
  assert.deepEqual(firstCall, { index: 0, id: 'toolu_X', type: 'function', function: { name: 'Bash', arguments: '' } });
  // without include_usage the agent gets no usage chunk
  const t = new StreamTranslator('anthropic', 'chat', { includeUsage: false });
  const bare = t.push(anthropicStream()) + t.end();
  assert.ok(!bare.includes('"choices":[]'));
});

test('stream → responses: increasing sequence numbers, items in order, response.completed with the output and usage', () => {
  const out = translate('anthropic', 'responses', anthropicStream(), 11);
  const p = new SseParser();
  const data = [...p.push(out), ...p.end()].map((e) => JSON.parse(e.data) as Record<string, any>);
  assert.deepEqual(data.map((d) => d.sequence_number), data.map((_, i) => i));
  assert.equal(data[0].type, 'response.created');
  const done = data[data.length - 1];
  assert.equal(done.type, 'response.completed');
  assert.deepEqual(done.response.output.map((i: any) => i.type), ['reasoning', 'message', 'function_call']);
  assert.match(done.response.output[0].encrypted_content, /^sbgw1\./);
  assert.equal(done.response.output[2].call_id, 'toolu_X');
  assert.deepEqual(done.response.usage.input_tokens_details, { cached_tokens: 40 });
  assert.ok(data.some((d) => d.type === 'response.reasoning_summary_text.delta' && d.delta === 'I should list '));
  assert.ok(data.some((d) => d.type === 'response.function_call_arguments.delta' && d.delta === '{"comm'));
});

test('stream: stop reasons map (length → max_tokens → incomplete/max_output_tokens)', () => {
  const chat = chatStream().replace('"finish_reason":"tool_calls"', '"finish_reason":"length"');
  assert.equal(decodeAgentStream('anthropic', translate('chat', 'anthropic', chat, 2)).stop, 'max_tokens');
  assert.match(translate('chat', 'anthropic', chat, 2), /"stop_reason":"max_tokens"/);
  const resp = translate('chat', 'responses', chat, 2);
  assert.match(resp, /event: response\.incomplete\n/);
  assert.match(resp, /"incomplete_details":\{"reason":"max_output_tokens"\}/);
  const ant = anthropicStream().replace('"stop_reason":"tool_use"', '"stop_reason":"end_turn"');
  assert.match(translate('anthropic', 'chat', ant, 2), /"finish_reason":"stop"/);
});

test('stream: a Responses custom (free-text) tool call reaches Codex as custom_tool_call with its raw input', () => {
  const patch = '*** Begin Patch\n*** Add File: a.txt\n+"quoted" \\ back\n*** End Patch';
  const ant = anthropicStream().replace('"name":"Bash"', '"name":"apply_patch"').replace('{\\"comm', JSON.stringify('{"input":' + JSON.stringify(patch).slice(0, 20)).slice(1, -1)).replace('and\\":\\"ls\\"}', JSON.stringify(JSON.stringify(patch).slice(20) + '}').slice(1, -1));
  const t = new StreamTranslator('anthropic', 'responses', { freeformTools: ['apply_patch'] });
  const out = t.push(ant) + t.end();
  const p = new SseParser();
  const data = [...p.push(out), ...p.end()].map((e) => JSON.parse(e.data) as Record<string, any>);
  const item = data[data.length - 1].response.output[2];
  assert.deepEqual(item, { type: 'custom_tool_call', id: item.id, call_id: 'toolu_X', name: 'apply_patch', input: patch, status: 'completed' });
  // and back: a Responses upstream's custom call reaches an Anthropic agent as {"input": …}
  const back = decodeAgentStream('anthropic', translate('responses', 'anthropic', out, 4));
  const call = back.parts.find((x) => x.type === 'tool_call') as { args: string };
  assert.deepEqual(JSON.parse(call.args), { input: patch });
});

test('stream chat decoder: calls all sent at index 0 with different ids are separate calls', () => {
  const c = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'x', model: 'g', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const input = c({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"a":1}' } }] }) + c({ tool_calls: [{ index: 0, id: 'c2', function: { name: 'g', arguments: '{"b":2}' } }] }) + c({}, 'tool_calls') + 'data: [DONE]\n\n';
  const r = decodeAgentStream('anthropic', translate('chat', 'anthropic', input, 3));
  assert.deepEqual(r.parts.map((p) => (p.type === 'tool_call' ? [p.id, p.name, p.args] : p.type)), [['c1', 'f', '{"a":1}'], ['c2', 'g', '{"b":2}']]);
});
