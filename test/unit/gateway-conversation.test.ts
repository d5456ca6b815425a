// Two-turn tool-call conversations with reasoning, through the gateway both ways: what the
// upstream produced on turn 1 (signatures, encrypted reasoning, Gemini thought signatures,
// DeepSeek reasoning_content) is what it gets back on turn 2, although the agent's protocol had
// no field for it. The agent side is reconstructed the way the agents' SDKs do, not with our decoders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayMemory, SseParser, StreamTranslator, translateRequest, translateResponse, type Protocol } from '../../src/gateway';
import { anthropicStream, chatStream, responsesStream } from '../fakes/gateway-samples';

const THOUGHT = 'I should list files — ünïcode.';

function events(text: string): Record<string, any>[] {
  const p = new SseParser();
  return [...p.push(text), ...p.end()].filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data) as Record<string, any>);
}

/** An Anthropic SDK's accumulation of a message stream into content blocks. */
function anthropicContent(text: string): Record<string, any>[] {
  const blocks: Record<string, any>[] = [];
  const json: string[] = [];
  for (const e of events(text)) {
    if (e.type === 'content_block_start') {
      blocks[e.index] = { ...e.content_block };
      json[e.index] = '';
    } else if (e.type === 'content_block_delta') {
      const b = blocks[e.index];
      if (e.delta.type === 'text_delta') b.text += e.delta.text;
      if (e.delta.type === 'thinking_delta') b.thinking += e.delta.thinking;
      if (e.delta.type === 'signature_delta') b.signature += e.delta.signature;
      if (e.delta.type === 'input_json_delta') json[e.index] += e.delta.partial_json;
    } else if (e.type === 'content_block_stop' && blocks[e.index].type === 'tool_use') blocks[e.index].input = JSON.parse(json[e.index] || '{}');
  }
  return blocks;
}

/** An OpenAI SDK's accumulation of chat chunks into the assistant message. */
function chatMessage(text: string): Record<string, any> {
  const m: Record<string, any> = { role: 'assistant', content: '', reasoning_content: '', tool_calls: [] };
  for (const e of events(text)) {
    const d = e.choices[0]?.delta;
    if (!d) continue;
    if (d.content) m.content += d.content;
    if (d.reasoning_content) m.reasoning_content += d.reasoning_content;
    for (const tc of d.tool_calls ?? []) {
      const cur = (m.tool_calls[tc.index] ??= { id: tc.id, type: 'function', function: { name: '', arguments: '' } });
      if (tc.function?.name) cur.function.name = tc.function.name;
      if (tc.function?.arguments) cur.function.arguments += tc.function.arguments;
      if (tc.extra_content) cur.extra_content = tc.extra_content;
    }
  }
  return m;
}

function stream(up: Protocol, agent: Protocol, sample: string, ctx: object): string {
  const t = new StreamTranslator(up, agent, ctx);
  let out = '';
  for (let i = 0; i < sample.length; i += 13) out += t.push(Buffer.from(sample.slice(i, i + 13)));
  return out + t.end();
}

const firstUser = { role: 'user', content: 'list the files' };

test('conversation A→C→A: DeepSeek reasoning_content and Gemini thought signature come back on turn 2', () => {
  const memory = new GatewayMemory();
  const body1 = { model: 'm', max_tokens: 4000, stream: true, messages: [firstUser], tools: [{ name: 'Bash', input_schema: { type: 'object' } }] };
  const t1 = translateRequest('anthropic', 'chat', body1, memory);
  const content = anthropicContent(stream('chat', 'anthropic', chatStream(), t1.context));
  assert.deepEqual(content.map((b) => b.type), ['thinking', 'text', 'tool_use']);
  assert.equal(content[0].thinking, THOUGHT);
  const body2 = { ...body1, messages: [firstUser, { role: 'assistant', content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_X', content: 'a.txt' }] }] };
  const up2 = translateRequest('anthropic', 'chat', body2, memory).body as Record<string, any>;
  assert.deepEqual(up2.messages[1], {
    role: 'assistant',
    content: 'Listing 世界',
    reasoning_content: THOUGHT,
    tool_calls: [{ id: 'call_X', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' }, extra_content: { google: { thought_signature: 'GEMINI-SIG-1' } } }],
  });
  assert.deepEqual(up2.messages[2], { role: 'tool', tool_call_id: 'call_X', content: 'a.txt' });
});

test('conversation A→R→A: the reasoning item (id, summary, encrypted_content) is replayed exactly on turn 2', () => {
  const body1 = { model: 'm', max_tokens: 4000, stream: true, messages: [firstUser], tools: [{ name: 'Bash', input_schema: { type: 'object' } }] };
  const t1 = translateRequest('anthropic', 'responses', body1);
  const content = anthropicContent(stream('responses', 'anthropic', responsesStream(), t1.context));
  assert.deepEqual(content.map((b) => b.type), ['thinking', 'text', 'tool_use']);
  assert.match(content[0].signature, /^sbgw1\./);
  const body2 = { ...body1, messages: [firstUser, { role: 'assistant', content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_X', content: 'a.txt' }] }] };
  const up2 = translateRequest('anthropic', 'responses', body2).body as Record<string, any>;
  assert.deepEqual(up2.input.slice(1), [
    { type: 'reasoning', id: 'rs_R1', summary: [{ type: 'summary_text', text: 'I should list ' }, { type: 'summary_text', text: 'files — ünïcode.' }], encrypted_content: 'gAAAA-encrypted-blob' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Listing 世界' }] },
    { type: 'function_call', call_id: 'call_X', name: 'Bash', arguments: '{"command":"ls"}' },
    { type: 'function_call_output', call_id: 'call_X', output: 'a.txt' },
  ]);
});

test('conversation C→A→C: an Anthropic thinking signature survives a Chat agent (kept in the gateway memory)', () => {
  const memory = new GatewayMemory();
  const body1 = { model: 'm', stream: true, stream_options: { include_usage: true }, messages: [firstUser], tools: [{ type: 'function', function: { name: 'Bash', parameters: { type: 'object' } } }] };
  const t1 = translateRequest('chat', 'anthropic', body1, memory);
  const msg = chatMessage(stream('anthropic', 'chat', anthropicStream(), t1.context));
  assert.equal(msg.reasoning_content, THOUGHT);
  const body2 = { ...body1, messages: [firstUser, msg, { role: 'tool', tool_call_id: 'toolu_X', content: 'a.txt' }] };
  const up2 = translateRequest('chat', 'anthropic', body2, memory).body as Record<string, any>;
  assert.deepEqual(up2.messages[1].content, [
    { type: 'thinking', thinking: THOUGHT, signature: 'EqQBCkgSIG-native-sig==' },
    { type: 'text', text: 'Listing 世界' },
    { type: 'tool_use', id: 'toolu_X', name: 'Bash', input: { command: 'ls' } },
  ]);
  // without the memory (a gateway restart) the turn still goes through, only without the thinking
  const cold = translateRequest('chat', 'anthropic', body2, new GatewayMemory()).body as Record<string, any>;
  assert.deepEqual(cold.messages[1].content.map((b: any) => b.type), ['text', 'tool_use']);
});

test('conversation R→A→R (Codex on Claude): the thinking comes back from the encrypted_content carrier', () => {
  const body1 = { model: 'm', stream: true, input: [{ role: 'user', content: 'list the files' }], tools: [{ type: 'function', name: 'Bash', parameters: { type: 'object' } }] };
  const t1 = translateRequest('responses', 'anthropic', body1);
  const out = events(stream('anthropic', 'responses', anthropicStream(), t1.context));
  const output = out[out.length - 1].response.output as Record<string, any>[];
  const body2 = { ...body1, input: [...body1.input, ...output, { type: 'function_call_output', call_id: 'toolu_X', output: 'a.txt' }] };
  const up2 = translateRequest('responses', 'anthropic', body2).body as Record<string, any>;
  assert.deepEqual(up2.messages[1].content[0], { type: 'thinking', thinking: THOUGHT, signature: 'EqQBCkgSIG-native-sig==' });
  assert.deepEqual(up2.messages[2].content, [{ type: 'tool_result', tool_use_id: 'toolu_X', content: [{ type: 'text', text: 'a.txt' }] }]);
});

test('conversation non-streaming C→A: redacted thinking and the Gemini signature round-trip through JSON responses', () => {
  const memory = new GatewayMemory();
  const upstream = { id: 'msg_1', type: 'message', model: 'claude-x', stop_reason: 'tool_use', usage: { input_tokens: 5, output_tokens: 3 }, content: [{ type: 'redacted_thinking', data: 'REDACTED-BLOB' }, { type: 'tool_use', id: 'toolu_9', name: 'Bash', input: { command: 'pwd' } }] };
  const agentMsg = (translateResponse('anthropic', 'chat', upstream, { memory }) as any).choices[0].message;
  assert.equal(agentMsg.reasoning_content, undefined); // nothing readable to show; the blob waits in the memory
  const up2 = translateRequest('chat', 'anthropic', { model: 'm', messages: [firstUser, agentMsg, { role: 'tool', tool_call_id: 'toolu_9', content: '/' }] }, memory).body as Record<string, any>;
  assert.deepEqual(up2.messages[1].content[0], { type: 'redacted_thinking', data: 'REDACTED-BLOB' });
  const gem = { id: 'c', model: 'gemini', choices: [{ message: { content: null, tool_calls: [{ id: 'g1', type: 'function', function: { name: 'Bash', arguments: '{}' }, extra_content: { google: { thought_signature: 'SIG-G' } } }] }, finish_reason: 'tool_calls' }] };
  const asAnthropic = translateResponse('chat', 'anthropic', gem, { memory }) as any;
  assert.equal(asAnthropic.stop_reason, 'tool_use');
  const back = translateRequest('anthropic', 'chat', { model: 'm', max_tokens: 10, messages: [firstUser, { role: 'assistant', content: asAnthropic.content }] }, memory).body as Record<string, any>;
  assert.equal(back.messages[1].tool_calls[0].extra_content.google.thought_signature, 'SIG-G');
});
