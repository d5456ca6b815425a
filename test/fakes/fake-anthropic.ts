// A fake Anthropic Messages API (POST /v1/messages, SSE or JSON) that plays a script of shell tool
// calls (Claude Code's Bash, or whichever shell tool a translated agent offers), for the real Claude
// Code CLI and the relay's translation. Listens on 127.0.0.1 only. The step is derived from the
// conversation itself (the number of tool_result blocks so far), so retries and resumes replay
// naturally. Tolerates what Claude Code 2.1.126 / 2.1.332 send besides: HEAD /, HEAD /api/hello,
// GET /v1/models, role:"system" entries inside messages, ?beta=true.
import type http from 'node:http';
import { rateLimited, rid, shellCall, sse, sseHead, startFake, type FakeOptions, type FakeServer, type ModelCall } from './fake-common';

type Block = { type: 'text'; text: string } | { type: 'thinking'; thinking: string; signature: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export async function startFakeAnthropic(opts: FakeOptions): Promise<FakeServer> {
  return startFake(
    opts,
    (m, p) => m === 'POST' && /\/v1\/messages$/.test(p),
    (req) => {
      const k = req.headers['x-api-key'];
      if (typeof k === 'string') return k;
      const a = req.headers.authorization;
      return typeof a === 'string' ? a.replace(/^Bearer\s+/i, '') : undefined;
    },
    (c) => answer(c, opts),
    other,
  );
}

function other(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
  if (req.method === 'HEAD') return void res.writeHead(200).end();
  if (req.method === 'POST' && path.endsWith('/v1/messages/count_tokens')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ input_tokens: 42 }));
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${path}` } }));
}

export function toolResultsSoFar(messages: unknown[]): number {
  let n = 0;
  for (const m of messages) {
    const content = (m as { content?: unknown }).content;
    if (Array.isArray(content)) n += content.filter((b) => (b as { type?: string }).type === 'tool_result').length;
  }
  return n;
}

/** Thinking signatures and redacted_thinking data sent back in the conversation. */
function echoedReasoning(messages: unknown[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    const content = (m as { content?: unknown }).content;
    if (!Array.isArray(content)) continue;
    for (const b of content as { type?: string; signature?: string; data?: string }[]) {
      if (b.type === 'thinking' && b.signature) out.push(b.signature);
      if (b.type === 'redacted_thinking' && b.data) out.push(b.data);
    }
  }
  return out;
}

function answer(c: ModelCall, opts: FakeOptions): void {
  const { res, body, rec, fault } = c;
  if (fault?.kind === 'overloaded') {
    rec.status = 529;
    res.writeHead(529, { 'content-type': 'application/json', 'x-should-retry': 'false' });
    return void res.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const tools = Array.isArray(body.tools) ? (body.tools as { name?: string }[]).map((t) => t.name) : [];
  const step = toolResultsSoFar(messages);
  rec.step = step;
  rec.echoed = echoedReasoning(messages);
  if (fault?.kind === 'rate_limit') return rateLimited(c, fault.retryAfter, 'anthropic');
  const model = typeof body.model === 'string' ? body.model : 'claude-fake';
  let blocks: Block[];
  let stop: 'tool_use' | 'end_turn';
  const call = step < opts.script.commands.length ? shellCall(tools, opts.script.commands[step], step) : undefined;
  const agentTurn = shellCall(tools, '', 0) !== undefined;
  const finalText = opts.script.finalText ?? 'Done: the server is running.';
  if (call) {
    blocks = [
      { type: 'text', text: `Step ${step + 1}: running a command.` },
      { type: 'tool_use', id: rid('toolu_'), name: call.name, input: call.args },
    ];
    stop = 'tool_use';
  } else if (agentTurn && tools.includes('finish')) {
    // OpenHands (LiteLLM anthropic/) ends its run with its finish tool
    blocks = [{ type: 'tool_use', id: rid('toolu_'), name: 'finish', input: { message: finalText } }];
    stop = 'tool_use';
  } else {
    blocks = [{ type: 'text', text: agentTurn ? finalText : 'ok' }];
    stop = 'end_turn';
  }
  if (opts.reasoning) {
    rec.minted = `fake-sig-${step}-${rid('')}`;
    blocks.unshift({ type: 'thinking', thinking: `Step ${step + 1}: deciding what to run.`, signature: rec.minted });
  }
  const usage = { input_tokens: 100 + step, output_tokens: 20 + step, cache_creation_input_tokens: 0, cache_read_input_tokens: 10 };
  const msgId = rid('msg_');
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ id: msgId, type: 'message', role: 'assistant', model, content: blocks, stop_reason: stop, stop_sequence: null, usage }));
  }
  sseHead(res);
  sse(res, 'message_start', { type: 'message_start', message: { id: msgId, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  if (fault?.kind === 'stall') return; // headers and the first event sent; the rest never comes
  blocks.forEach((b, index) => {
    if (b.type === 'thinking') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: b.thinking } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } });
    } else if (b.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
    } else {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}
