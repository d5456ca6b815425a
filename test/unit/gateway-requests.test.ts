// Request translation: every direction round-trips (X → Y → X gives back what X said, minus what
// docs/gateway.md lists as not representable), and the details each protocol spells differently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayInputError, decodeRequest, translateRequest, type IrRequest, type Protocol } from '../../src/gateway';
import { anthropicRequest, chatRequest, responsesRequest } from '../fakes/gateway-samples';

const P: Protocol[] = ['anthropic', 'chat', 'responses'];
const SAMPLE: Record<Protocol, unknown> = { anthropic: anthropicRequest, chat: chatRequest, responses: responsesRequest };

/** What a trip through `via` cannot keep: Responses has no stop sequences; thinking budgets are clamped to max_tokens. */
function comparable(ir: IrRequest, via: Protocol): IrRequest {
  const c = structuredClone(ir);
  if (via === 'responses') c.stop = [];
  if (c.reasoning) delete c.reasoning.budgetTokens;
  return c;
}

for (const from of P) {
  for (const via of P) {
    if (from === via) continue;
    test(`request round trip ${from} → ${via} → ${from}`, () => {
      const original = decodeRequest(from, SAMPLE[from]);
      const there = translateRequest(from, via, SAMPLE[from]).body;
      const back = translateRequest(via, from, there).body;
      assert.deepEqual(comparable(decodeRequest(from, back), via), comparable(original, via));
    });
  }
}

test('request anthropic → chat: system, data-URL images, tool calls/results by id, tool_choice, effort, stream_options', () => {
  const b = translateRequest('anthropic', 'chat', anthropicRequest).body as Record<string, any>;
  assert.deepEqual(b.messages[0], { role: 'system', content: 'You are terse.' });
  assert.match(b.messages[1].content[1].image_url.url, /^data:image\/png;base64,iVBOR/);
  assert.equal(b.messages[1].content[2].image_url.url, 'https://example.test/a.png');
  assert.deepEqual(b.messages[2], { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls -la"}' } }] });
  assert.deepEqual(b.messages[3], { role: 'tool', tool_call_id: 'toolu_01', content: 'a.png\nb.png' });
  assert.deepEqual(b.messages[4], { role: 'user', content: 'go on' });
  assert.deepEqual(b.tools[0].function.parameters, anthropicRequest.tools[0].input_schema);
  assert.equal(b.tool_choice, 'auto');
  assert.equal(b.reasoning_effort, 'low');
  assert.deepEqual(b.stop, ['END']);
  assert.deepEqual(b.stream_options, { include_usage: true });
});

test('request chat → anthropic: tool messages become one user turn of tool_results; required → any; max_tokens kept', () => {
  const b = translateRequest('chat', 'anthropic', chatRequest).body as Record<string, any>;
  assert.deepEqual(b.system, [{ type: 'text', text: 'You are terse.' }]);
  assert.deepEqual(b.messages[1].content.map((c: any) => c.type), ['tool_use', 'tool_use']);
  assert.deepEqual(b.messages[2].content, [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: '/work' }] }, { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: 'uid=0' }] }]);
  assert.deepEqual(b.tool_choice, { type: 'any', disable_parallel_tool_use: false });
  assert.equal(b.max_tokens, 5000);
  assert.deepEqual(b.thinking, { type: 'enabled', budget_tokens: 4096 });
  assert.deepEqual(b.messages[0].content[1], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: (chatRequest.messages[1].content as any)[1].image_url.url.split(',')[1] } });
});

test('request responses → anthropic/chat: instructions and developer text are system; stateless Responses encoding asks for encrypted reasoning', () => {
  const a = translateRequest('responses', 'anthropic', responsesRequest).body as Record<string, any>;
  assert.deepEqual(a.system, [{ type: 'text', text: 'You are Codex.' }, { type: 'text', text: 'sandbox: none' }]);
  assert.deepEqual(a.tool_choice, { type: 'auto', disable_parallel_tool_use: true });
  assert.equal(a.max_tokens, 9000);
  assert.equal(a.thinking.budget_tokens, 8999); // budget must stay below max_tokens
  const r = translateRequest('anthropic', 'responses', anthropicRequest).body as Record<string, any>;
  assert.equal(r.store, false);
  assert.deepEqual(r.include, ['reasoning.encrypted_content']);
  assert.equal(r.max_output_tokens, 8000);
  assert.deepEqual(r.reasoning, { effort: 'low', summary: 'auto' });
  assert.deepEqual(r.input.map((i: any) => i.type), ['message', 'message', 'function_call', 'function_call_output', 'message']);
});

test('request: temperature, top_p and tool-result errors and images where the target has no field', () => {
  const body = { model: 'm', max_tokens: 100, temperature: 0.2, top_p: 0.9, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'shot', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', is_error: true, content: [{ type: 'text', text: 'boom' }, { type: 'image', source: { type: 'url', url: 'https://e.test/s.png' } }] }] }] };
  const c = translateRequest('anthropic', 'chat', body).body as Record<string, any>;
  assert.equal(c.temperature, 0.2);
  assert.equal(c.top_p, 0.9);
  assert.deepEqual(c.messages[2], { role: 'tool', tool_call_id: 't1', content: 'Error: boom' });
  // Chat tool messages hold text only: the screenshot follows as a user message
  assert.deepEqual(c.messages[3], { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://e.test/s.png' } }] });
  const r = translateRequest('anthropic', 'responses', body).body as Record<string, any>;
  assert.deepEqual(r.input[2].output[1], { type: 'input_image', image_url: 'https://e.test/s.png' });
  // Anthropic wants temperature unset when thinking is on
  const a = translateRequest('chat', 'anthropic', { model: 'm', temperature: 0.3, reasoning_effort: 'high', messages: [{ role: 'user', content: 'x' }] }).body as Record<string, any>;
  assert.equal(a.temperature, undefined);
  assert.equal(a.max_tokens, 32000);
});

test('request: Responses custom tools become one-string-argument functions elsewhere and come back as custom', () => {
  const body = { model: 'm', input: [{ type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch' }, { type: 'custom_tool_call_output', call_id: 'c1', output: 'done' }], tools: [{ type: 'custom', name: 'apply_patch', description: 'patch' }] };
  const a = translateRequest('responses', 'anthropic', body).body as Record<string, any>;
  assert.deepEqual(a.messages[0].content[0], { type: 'tool_use', id: 'c1', name: 'apply_patch', input: { input: '*** Begin Patch' } });
  assert.equal(a.tools[0].input_schema.properties.input.type, 'string');
  const ir = decodeRequest('responses', body);
  assert.equal(ir.tools[0].freeform, true);
  const back = translateRequest('responses', 'responses', body).body as Record<string, any>;
  assert.deepEqual(back.input[0], { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch' });
  assert.deepEqual(back.tools[0], { type: 'custom', name: 'apply_patch', description: 'patch' });
});

test('request: bad input is one GatewayInputError naming the protocol and the JSON path', () => {
  assert.throws(
    () => decodeRequest('anthropic', { model: 'm', messages: [{ role: 'user', content: [{ type: 'tool_use', id: 1, name: 'x', input: {} }] }] }),
    (e: unknown) => e instanceof GatewayInputError && /Anthropic Messages request: at \$\.messages\[0\]\.content/.test(e.message),
  );
  assert.throws(() => decodeRequest('chat', { model: 'm', messages: 'hi' }), (e: unknown) => e instanceof GatewayInputError && e.path === '$.messages');
  assert.throws(() => decodeRequest('responses', { input: [] }), (e: unknown) => e instanceof GatewayInputError && e.path === '$.model');
});

test('request → anthropic: thinking is switched off when the last tool turn lost its thinking block (Anthropic would reject it)', () => {
  const turn = (withThinking: boolean) => ({
    model: 'm', max_tokens: 9000, thinking: { type: 'enabled', budget_tokens: 4096 },
    messages: [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: [...(withThinking ? [{ type: 'thinking', thinking: 't', signature: 'S' }] : []), { type: 'tool_use', id: 't1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'r' }, { type: 'document', source: { type: 'text', data: 'd' } }] }] },
    ],
  });
  const kept = translateRequest('anthropic', 'anthropic', turn(true)).body as Record<string, any>;
  assert.deepEqual(kept.thinking, { type: 'enabled', budget_tokens: 4096 });
  assert.deepEqual(kept.messages[2].content[0].content, [{ type: 'text', text: 'r' }]); // the document block has no counterpart
  const lost = translateRequest('anthropic', 'anthropic', turn(false)).body as Record<string, any>;
  assert.equal(lost.thinking, undefined);
});

test('request chat → Gemini: a replayed first call without a thought signature gets the documented skip value', () => {
  const body = { model: 'g', messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }, { type: 'tool_use', id: 'b', name: 'f', input: {} }] }] };
  const b = translateRequest('anthropic', 'chat', body, undefined, { geminiSkipSignature: true }).body as Record<string, any>;
  assert.deepEqual(b.messages[1].tool_calls.map((c: any) => c.extra_content?.google?.thought_signature), ['skip_thought_signature_validator', undefined]);
  const plain = translateRequest('anthropic', 'chat', body).body as Record<string, any>;
  assert.equal(plain.messages[1].tool_calls[0].extra_content, undefined);
});

test('request → responses: sampling parameters only without reasoning; reasoning items without id are not replayed', () => {
  const withEffort = translateRequest('chat', 'responses', { model: 'm', temperature: 0.5, top_p: 0.8, reasoning_effort: 'high', messages: [{ role: 'user', content: 'x' }] }).body as Record<string, any>;
  assert.equal(withEffort.temperature, undefined);
  assert.equal(withEffort.top_p, undefined);
  assert.deepEqual(withEffort.reasoning, { effort: 'high', summary: 'auto' });
  const plain = translateRequest('chat', 'responses', { model: 'm', temperature: 0.5, messages: [{ role: 'user', content: 'x' }] }).body as Record<string, any>;
  assert.equal(plain.temperature, 0.5);
  const body = { model: 'm', input: [{ type: 'reasoning', summary: [], encrypted_content: 'E' }, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'F' }, { role: 'user', content: 'x' }] };
  const r = translateRequest('responses', 'responses', body).body as Record<string, any>;
  assert.deepEqual(r.input.filter((i: any) => i.type === 'reasoning'), [{ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'F' }]);
});
