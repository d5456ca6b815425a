// A fake OpenAI API that plays a script of shell commands: POST /v1/responses (SSE, or a whole
// response when `stream` is not true) for the real Codex CLI, and POST /v1/chat/completions (whole or
// stream) for OpenAI-compatible clients (OpenHands/LiteLLM) and for agents of another protocol
// through the relay's translation. The shell tool is whichever the request offers (shellCall in
// fake-common.ts). Also GET /v1/models. Listens on 127.0.0.1 only. The step is the number of tool
// outputs so far.
import type http from 'node:http';
import { rateLimited, rid, shellCall, sse, sseHead, startFake, type FakeOptions, type FakeServer, type ModelCall } from './fake-common';

export async function startFakeOpenAI(opts: FakeOptions): Promise<FakeServer> {
  return startFake(
    opts,
    (m, p) => m === 'POST' && (/\/responses$/.test(p) || /\/chat\/completions$/.test(p)),
    (req) => {
      const a = req.headers.authorization;
      if (typeof a === 'string') return a.replace(/^Bearer\s+/i, '');
      const k = req.headers['api-key'];
      return typeof k === 'string' ? k : undefined;
    },
    (c) => (c.req.url?.split('?')[0].endsWith('/chat/completions') ? chat(c, opts) : responses(c, opts)),
    other,
    'openai',
  );
}

function other(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
  if (req.method === 'GET' && path.endsWith('/models')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-fake', object: 'model', owned_by: 'fake' }] }));
  }
  if (req.method === 'HEAD') return void res.writeHead(200).end();
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } }));
}

function toolCallFor(tools: { name?: string; type?: string }[], command: string, step: number): { name: string; args: Record<string, unknown> } {
  return shellCall(tools.map((t) => t.name ?? t.type), command, step) ?? { name: 'shell', args: { command: ['bash', '-lc', command] } };
}

/** encrypted_content of the reasoning items sent back in `input`. */
function echoedReasoning(input: { type?: string; encrypted_content?: unknown }[]): string[] {
  return input.filter((i) => i.type === 'reasoning' && typeof i.encrypted_content === 'string').map((i) => i.encrypted_content as string);
}

function responses(c: ModelCall, opts: FakeOptions): void {
  const { res, body, rec, fault } = c;
  const input = Array.isArray(body.input) ? (body.input as { type?: string }[]) : [];
  const step = input.filter((i) => typeof i.type === 'string' && i.type.endsWith('_output')).length;
  rec.step = step;
  rec.echoed = echoedReasoning(input);
  if (fault?.kind === 'rate_limit') return rateLimited(c, fault.retryAfter, 'openai');
  const model = typeof body.model === 'string' ? body.model : 'gpt-fake';
  const tools = Array.isArray(body.tools) ? (body.tools as { name?: string; type?: string }[]) : [];
  const respId = rid('resp_');
  const base = { id: respId, object: 'response', created_at: Math.floor(Date.now() / 1000), model };
  const usage = { input_tokens: 200 + step, input_tokens_details: { cached_tokens: 50 }, output_tokens: 30 + step, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 230 + 2 * step };
  const items: Record<string, unknown>[] = [];
  if (opts.reasoning) {
    // encrypted_content only when asked for (include), as the real API does for store:false
    const include = Array.isArray(body.include) ? body.include : [];
    const enc = include.includes('reasoning.encrypted_content') ? `fake-enc-${step}-${rid('')}` : undefined;
    if (enc) rec.minted = enc;
    items.push({ type: 'reasoning', id: rid('rs_'), summary: [{ type: 'summary_text', text: `Step ${step + 1}: deciding what to run.` }], ...(enc ? { encrypted_content: enc } : {}) });
  }
  if (step < opts.script.commands.length) {
    const call = toolCallFor(tools, opts.script.commands[step], step);
    items.push({ type: 'function_call', id: rid('fc_'), call_id: rid('call_'), name: call.name, arguments: JSON.stringify(call.args), status: 'completed' });
  } else if (tools.some((t) => t.name === 'finish')) {
    // OpenHands (through the relay's translation) ends its run with its finish tool
    items.push({ type: 'function_call', id: rid('fc_'), call_id: rid('call_'), name: 'finish', arguments: JSON.stringify({ message: opts.script.finalText ?? 'Done.' }), status: 'completed' });
  } else {
    const text = opts.script.finalText ?? 'Done: the server is running.';
    items.push({ type: 'message', id: rid('msg_'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
  }
  if (body.stream !== true && !fault) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ ...base, status: 'completed', output: items, usage }));
  }
  sseHead(res);
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => sse(res, type, { type, sequence_number: seq++, ...data });
  ev('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  if (fault?.kind === 'stall') return;
  if (fault?.kind === 'overloaded') {
    rec.status = 200;
    ev('response.failed', { response: { ...base, status: 'failed', output: [], error: { code: fault.code ?? 'server_is_overloaded', message: 'The server is overloaded. Please try again later.' } } });
    return void res.end();
  }
  items.forEach((item, output_index) => {
    const at = { output_index, item_id: item.id };
    if (item.type === 'reasoning') {
      const part = (item.summary as { text: string }[])[0];
      ev('response.output_item.added', { output_index, item: { type: 'reasoning', id: item.id, summary: [] } });
      ev('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: { type: 'summary_text', text: '' } });
      ev('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: part.text });
      ev('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: part.text });
      ev('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: part.text } });
    } else if (item.type === 'function_call') {
      const args = item.arguments as string;
      ev('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      ev('response.function_call_arguments.delta', { ...at, delta: args });
      ev('response.function_call_arguments.done', { ...at, arguments: args });
    } else {
      const part = (item.content as { text: string }[])[0];
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      ev('response.content_part.added', { ...at, content_index: 0, part: { ...part, text: '' } });
      ev('response.output_text.delta', { ...at, content_index: 0, delta: part.text });
      ev('response.output_text.done', { ...at, content_index: 0, text: part.text });
      ev('response.content_part.done', { ...at, content_index: 0, part });
    }
    ev('response.output_item.done', { output_index, item });
  });
  ev('response.completed', { response: { ...base, status: 'completed', output: items, usage } });
  res.end();
}

/** Chat Completions (OpenHands through LiteLLM): tool role messages count as outputs. */
function chat(c: ModelCall, opts: FakeOptions): void {
  const { res, body, rec, fault } = c;
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: string }[]) : [];
  const step = messages.filter((m) => m.role === 'tool').length;
  rec.step = step;
  if (fault?.kind === 'rate_limit') return rateLimited(c, fault.retryAfter, 'openai');
  const model = typeof body.model === 'string' ? body.model : 'gpt-fake';
  const tools = Array.isArray(body.tools) ? (body.tools as { function?: { name?: string } }[]).map((t) => t.function?.name) : [];
  if (fault?.kind === 'overloaded') {
    rec.status = 503;
    res.writeHead(503, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ error: { message: 'The server is overloaded or not ready yet.', type: 'server_error', code: 'server_is_overloaded' } }));
  }
  let message: Record<string, unknown>;
  let finish: string;
  if (step < opts.script.commands.length) {
    const command = opts.script.commands[step];
    // OpenHands' CodeActAgent shell tool is execute_bash (or terminal in later versions); Claude Code's
    // (through the relay's gateway) is Bash
    const { name, args } = shellCall(tools, command, step) ?? { name: tools[0] ?? 'execute_bash', args: { command } };
    message = { role: 'assistant', content: `Step ${step + 1}`, tool_calls: [{ id: rid('call_'), type: 'function', function: { name, arguments: JSON.stringify(args) } }] };
    finish = 'tool_calls';
  } else {
    const finishTool = tools.includes('finish') ? 'finish' : undefined;
    message = finishTool
      ? { role: 'assistant', content: opts.script.finalText ?? 'Done.', tool_calls: [{ id: rid('call_'), type: 'function', function: { name: 'finish', arguments: JSON.stringify({ message: opts.script.finalText ?? 'Done.' }) } }] }
      : { role: 'assistant', content: opts.script.finalText ?? 'Done.' };
    finish = finishTool ? 'tool_calls' : 'stop';
  }
  const usage = { prompt_tokens: 300 + step, completion_tokens: 40 + step, total_tokens: 340 + 2 * step };
  const id = rid('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: Record<string, unknown>, fr: string | null, extra: Record<string, unknown> = {}) =>
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: fr }], ...extra })}\n\n`);
  chunk({ role: 'assistant', content: '' }, null);
  if (fault?.kind === 'stall') return;
  if (message.content) chunk({ content: message.content }, null);
  const calls = (message.tool_calls as Record<string, unknown>[] | undefined) ?? [];
  calls.forEach((tc, index) => chunk({ tool_calls: [{ index, ...tc }] }, null));
  chunk({}, finish, { usage });
  res.write('data: [DONE]\n\n');
  res.end();
}
