// A fake OpenAI Responses API (POST /v1/responses, SSE) that plays a script of shell commands for
// the real Codex CLI, through whichever shell tool the request offers (exec_command {cmd} in 0.128
// and 0.171, shell_command {command}, shell {command:[...]}). Also answers POST /v1/chat/completions
// (non-stream and stream) with the same script for OpenAI-compatible clients (OpenHands/LiteLLM,
// Claude Code through the relay's translation),
// and GET /v1/models. Listens on 127.0.0.1 only. The step is the number of tool outputs so far.
import type http from 'node:http';
import { rid, sse, sseHead, startFake, type FakeOptions, type FakeServer, type ModelCall } from './fake-common';

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

function toolCallFor(tools: { name?: string; type?: string }[], command: string): { name: string; args: Record<string, unknown> } {
  const names = tools.map((t) => t.name ?? t.type);
  if (names.includes('exec_command')) return { name: 'exec_command', args: { cmd: command } };
  if (names.includes('shell_command')) return { name: 'shell_command', args: { command } };
  return { name: 'shell', args: { command: ['bash', '-lc', command] } };
}

function responses(c: ModelCall, opts: FakeOptions): void {
  const { res, body, rec, fault } = c;
  const input = Array.isArray(body.input) ? (body.input as { type?: string }[]) : [];
  const step = input.filter((i) => typeof i.type === 'string' && i.type.endsWith('_output')).length;
  rec.step = step;
  const model = typeof body.model === 'string' ? body.model : 'gpt-fake';
  const tools = Array.isArray(body.tools) ? (body.tools as { name?: string; type?: string }[]) : [];
  const respId = rid('resp_');
  const base = { id: respId, object: 'response', created_at: Math.floor(Date.now() / 1000), model };
  const usage = { input_tokens: 200 + step, input_tokens_details: { cached_tokens: 50 }, output_tokens: 30 + step, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 230 + 2 * step };
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
  let item: Record<string, unknown>;
  if (step < opts.script.commands.length) {
    const call = toolCallFor(tools, opts.script.commands[step]);
    const args = JSON.stringify(call.args);
    item = { type: 'function_call', id: rid('fc_'), call_id: rid('call_'), name: call.name, arguments: args, status: 'completed' };
    ev('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } });
    ev('response.function_call_arguments.delta', { output_index: 0, item_id: item.id, delta: args });
    ev('response.function_call_arguments.done', { output_index: 0, item_id: item.id, arguments: args });
  } else {
    const text = opts.script.finalText ?? 'Done: the server is running.';
    const part = { type: 'output_text', text, annotations: [] };
    item = { type: 'message', id: rid('msg_'), role: 'assistant', status: 'completed', content: [part] };
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    ev('response.content_part.added', { output_index: 0, item_id: item.id, content_index: 0, part: { ...part, text: '' } });
    ev('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: text });
    ev('response.output_text.done', { output_index: 0, item_id: item.id, content_index: 0, text });
    ev('response.content_part.done', { output_index: 0, item_id: item.id, content_index: 0, part });
  }
  ev('response.output_item.done', { output_index: 0, item });
  ev('response.completed', { response: { ...base, status: 'completed', output: [item], usage } });
  res.end();
}

/** Chat Completions (OpenHands through LiteLLM): tool role messages count as outputs. */
function chat(c: ModelCall, opts: FakeOptions): void {
  const { res, body, rec, fault } = c;
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: string }[]) : [];
  const step = messages.filter((m) => m.role === 'tool').length;
  rec.step = step;
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
    const name = tools.includes('execute_bash') ? 'execute_bash' : tools.includes('terminal') ? 'terminal' : tools.includes('Bash') ? 'Bash' : tools[0] ?? 'execute_bash';
    const args = name === 'execute_bash' || name === 'terminal' ? { command, is_input: 'false', timeout: 120, security_risk: 'LOW' } : name === 'Bash' ? { command, description: `scripted step ${step + 1}` } : { command };
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
