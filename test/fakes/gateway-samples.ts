// Hand-written wire samples for the gateway tests, in the shapes the providers document (our own
// minimal JSON, not copies): one per protocol and kind, plus helpers to build SSE byte streams
// and split them at arbitrary byte boundaries.
import { sseFrame } from '../../src/gateway';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

export const anthropicRequest = {
  model: 'claude-x',
  system: [{ type: 'text', text: 'You are terse.' }],
  max_tokens: 8000,
  stop_sequences: ['END'],
  stream: true,
  thinking: { type: 'enabled', budget_tokens: 4096 },
  tools: [{ name: 'Bash', description: 'run a shell command', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }],
  tool_choice: { type: 'auto' },
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'What is in these pictures? Grüße, 世界' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }, { type: 'image', source: { type: 'url', url: 'https://example.test/a.png' } }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'ls -la' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'a.png\nb.png' }, { type: 'text', text: 'go on' }] },
  ],
};

export const chatRequest = {
  model: 'gpt-x',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: [{ type: 'text', text: 'Look: 世界' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'execute_bash', arguments: '{"command":"pwd"}' } }, { id: 'call_2', type: 'function', function: { name: 'execute_bash', arguments: '{"command":"id"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '/work' },
    { role: 'tool', tool_call_id: 'call_2', content: 'uid=0' },
    { role: 'assistant', content: 'Both ran.' },
    { role: 'user', content: 'thanks' },
  ],
  tools: [{ type: 'function', function: { name: 'execute_bash', description: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }],
  tool_choice: 'required',
  parallel_tool_calls: true,
  max_tokens: 5000,
  stop: ['STOP'],
  reasoning_effort: 'low',
  stream: true,
  stream_options: { include_usage: true },
};

export const responsesRequest = {
  model: 'gpt-5-codex',
  instructions: 'You are Codex.',
  input: [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'sandbox: none' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'build it' }, { type: 'input_image', image_url: 'https://example.test/x.png' }] },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running.' }] },
    { type: 'function_call', call_id: 'call_9', name: 'exec_command', arguments: '{"cmd":"make"}' },
    { type: 'function_call_output', call_id: 'call_9', output: 'ok' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'continue' }] },
  ],
  tools: [{ type: 'function', name: 'exec_command', description: 'run', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }],
  tool_choice: 'auto',
  parallel_tool_calls: false,
  max_output_tokens: 9000,
  reasoning: { effort: 'medium' },
  stream: true,
};

/** An Anthropic stream with thinking (signature), text and a tool call whose input is split. */
export function anthropicStream(): string {
  const e = (type: string, d: Record<string, unknown>) => sseFrame({ type, ...d }, type);
  return [
    e('message_start', { message: { id: 'msg_A', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, usage: { input_tokens: 100, cache_read_input_tokens: 40, cache_creation_input_tokens: 10, output_tokens: 1 } } }),
    e('ping', {}),
    e('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    e('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'I should list ' } }),
    e('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'files — ünïcode.' } }),
    e('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQBCkgSIG-native-sig==' } }),
    e('content_block_stop', { index: 0 }),
    e('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
    e('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Listing 世界' } }),
    e('content_block_stop', { index: 1 }),
    e('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_X', name: 'Bash', input: {} } }),
    e('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"comm' } }),
    e('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: 'and":"ls"}' } }),
    e('content_block_stop', { index: 2 }),
    e('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 55 } }),
    e('message_stop', {}),
  ].join('');
}

/** A DeepSeek/Gemini-style Chat stream: reasoning_content, content, a tool call split over chunks with a thought signature, usage chunk, [DONE]. */
export function chatStream(): string {
  const c = (delta: Record<string, unknown>, finish: string | null = null) => sseFrame({ id: 'chatcmpl-C', object: 'chat.completion.chunk', created: 1, model: 'deepseek-x', choices: [{ index: 0, delta, finish_reason: finish }] });
  return [
    c({ role: 'assistant', content: '' }),
    c({ reasoning_content: 'I should list ' }),
    c({ reasoning_content: 'files — ünïcode.' }),
    c({ content: 'Listing 世界' }),
    c({ tool_calls: [{ index: 0, id: 'call_X', type: 'function', function: { name: 'Bash', arguments: '' }, extra_content: { google: { thought_signature: 'GEMINI-SIG-1' } } }] }),
    c({ tool_calls: [{ index: 0, function: { arguments: '{"comm' } }] }),
    c({ tool_calls: [{ index: 0, function: { arguments: 'and":"ls"}' } }] }),
    c({}, 'tool_calls'),
    sseFrame({ id: 'chatcmpl-C', object: 'chat.completion.chunk', created: 1, model: 'deepseek-x', choices: [], usage: { prompt_tokens: 150, completion_tokens: 55, total_tokens: 205, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 20 } } }),
    sseFrame('[DONE]'),
  ].join('');
}

/** A Responses stream: a reasoning item (two summary parts, encrypted content), a message, a function call. */
export function responsesStream(): string {
  let seq = 0;
  const e = (type: string, d: Record<string, unknown>) => sseFrame({ type, sequence_number: seq++, ...d }, type);
  const base = { id: 'resp_R', object: 'response', created_at: 1, model: 'gpt-5-codex' };
  const rs = { type: 'reasoning', id: 'rs_R1', summary: [{ type: 'summary_text', text: 'I should list ' }, { type: 'summary_text', text: 'files — ünïcode.' }], encrypted_content: 'gAAAA-encrypted-blob' };
  const msg = { type: 'message', id: 'msg_R2', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Listing 世界', annotations: [] }] };
  const fc = { type: 'function_call', id: 'fc_R3', call_id: 'call_X', name: 'Bash', arguments: '{"command":"ls"}', status: 'completed' };
  return [
    e('response.created', { response: { ...base, status: 'in_progress', output: [] } }),
    e('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } }),
    e('response.output_item.added', { output_index: 0, item: { type: 'reasoning', id: 'rs_R1', summary: [] } }),
    e('response.reasoning_summary_part.added', { output_index: 0, item_id: 'rs_R1', summary_index: 0, part: { type: 'summary_text', text: '' } }),
    e('response.reasoning_summary_text.delta', { output_index: 0, item_id: 'rs_R1', summary_index: 0, delta: 'I should list ' }),
    e('response.reasoning_summary_part.done', { output_index: 0, item_id: 'rs_R1', summary_index: 0, part: rs.summary[0] }),
    e('response.reasoning_summary_part.added', { output_index: 0, item_id: 'rs_R1', summary_index: 1, part: { type: 'summary_text', text: '' } }),
    e('response.reasoning_summary_text.delta', { output_index: 0, item_id: 'rs_R1', summary_index: 1, delta: 'files — ünïcode.' }),
    e('response.output_item.done', { output_index: 0, item: rs }),
    e('response.output_item.added', { output_index: 1, item: { ...msg, status: 'in_progress', content: [] } }),
    e('response.content_part.added', { output_index: 1, item_id: 'msg_R2', content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
    e('response.output_text.delta', { output_index: 1, item_id: 'msg_R2', content_index: 0, delta: 'Listing 世界' }),
    e('response.output_text.done', { output_index: 1, item_id: 'msg_R2', content_index: 0, text: 'Listing 世界' }),
    e('response.content_part.done', { output_index: 1, item_id: 'msg_R2', content_index: 0, part: msg.content[0] }),
    e('response.output_item.done', { output_index: 1, item: msg }),
    e('response.output_item.added', { output_index: 2, item: { ...fc, arguments: '', status: 'in_progress' } }),
    e('response.function_call_arguments.delta', { output_index: 2, item_id: 'fc_R3', delta: '{"comm' }),
    e('response.function_call_arguments.delta', { output_index: 2, item_id: 'fc_R3', delta: 'and":"ls"}' }),
    e('response.function_call_arguments.done', { output_index: 2, item_id: 'fc_R3', arguments: fc.arguments }),
    e('response.output_item.done', { output_index: 2, item: fc }),
    e('response.completed', { response: { ...base, status: 'completed', output: [rs, msg, fc], usage: { input_tokens: 150, input_tokens_details: { cached_tokens: 40 }, output_tokens: 55, output_tokens_details: { reasoning_tokens: 20 }, total_tokens: 205 } } }),
  ].join('');
}

/** Deterministic pseudo-random split of bytes into chunks of 1..maxLen bytes (cuts through UTF-8 sequences too). */
export function splitBytes(text: string, seed: number, maxLen = 7): Uint8Array[] {
  const bytes = Buffer.from(text, 'utf8');
  const out: Uint8Array[] = [];
  let s = seed >>> 0 || 1;
  for (let i = 0; i < bytes.length; ) {
    s = (s * 1103515245 + 12345) >>> 0;
    const n = 1 + (s % maxLen);
    out.push(new Uint8Array(bytes.subarray(i, i + n)));
    i += n;
  }
  return out;
}
