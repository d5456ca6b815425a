// A fake LLM judge on 127.0.0.1: the Anthropic Messages API (POST /v1/messages, JSON, not
// streamed — what the judge's messages.create sends) and an OpenAI-compatible
// POST /v1/chat/completions. Each answer comes from a handler the test sets; every request is
// recorded (body, headers) and the peak number of requests in flight is tracked.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface JudgeCall {
  n: number;
  api: 'anthropic' | 'openai';
  body: {
    model?: string;
    temperature?: number;
    system?: string;
    max_tokens?: number;
    messages?: { role: string; content: unknown }[];
  };
  /** the user text (rubric + evidence) of the request */
  text: string;
  /** images attached (base64 lengths) */
  images: number;
  apiKey?: string;
}

export interface JudgeAnswer {
  /** HTTP status (default 200); a non-200 answers the provider's error JSON */
  status?: number;
  /** the model's reply text */
  text?: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

export type JudgeHandler = (call: JudgeCall) => JudgeAnswer | Promise<JudgeAnswer>;

export interface FakeJudgeServer {
  url: string;
  calls: JudgeCall[];
  /** most requests that were in flight at once */
  peakInFlight: number;
  setHandler(h: JudgeHandler): void;
  reset(): void;
  close(): Promise<void>;
}

function userText(api: 'anthropic' | 'openai', messages: { role: string; content: unknown }[] | undefined): { text: string; images: number } {
  let text = '';
  let images = 0;
  for (const m of messages ?? []) {
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') text += m.content;
    else if (Array.isArray(m.content)) {
      for (const b of m.content as { type: string; text?: string }[]) {
        if (b.type === 'text') text += b.text ?? '';
        if ((api === 'anthropic' && b.type === 'image') || (api === 'openai' && b.type === 'image_url')) images++;
      }
    }
  }
  return { text, images };
}

export async function startFakeJudge(handler: JudgeHandler = () => ({ text: '{"score": 1, "reasoning": "ok"}' })): Promise<FakeJudgeServer> {
  let h = handler;
  let n = 0;
  let inFlight = 0;
  const sockets = new Set<Socket>();
  const state: FakeJudgeServer = {
    url: '',
    calls: [],
    peakInFlight: 0,
    setHandler(x) {
      h = x;
    },
    reset() {
      state.calls.length = 0;
      state.peakInFlight = 0;
      n = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = (req.url ?? '').split('?')[0];
      const api = req.method === 'POST' && path.endsWith('/v1/messages') ? 'anthropic' : req.method === 'POST' && path.endsWith('/chat/completions') ? 'openai' : undefined;
      if (!api) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end('{"error":"no route"}');
      }
      inFlight++;
      state.peakInFlight = Math.max(state.peakInFlight, inFlight);
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as JudgeCall['body'];
        const key = (req.headers['x-api-key'] as string | undefined) ?? (req.headers.authorization ? String(req.headers.authorization).replace(/^Bearer\s+/i, '') : undefined);
        const call: JudgeCall = { n: ++n, api, body, ...userText(api, body.messages), apiKey: key };
        state.calls.push(call);
        const a = await h(call);
        if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
        const status = a.status ?? 200;
        const headers = { 'content-type': 'application/json', ...(a.headers ?? {}) };
        res.writeHead(status, headers);
        if (status !== 200) {
          const type = status === 529 ? 'overloaded_error' : status === 429 ? 'rate_limit_error' : status === 401 ? 'authentication_error' : 'api_error';
          return void res.end(JSON.stringify(api === 'anthropic' ? { type: 'error', error: { type, message: `fake ${status}` } } : { error: { type, message: `fake ${status}` } }));
        }
        const text = a.text ?? '';
        if (api === 'anthropic') {
          res.end(JSON.stringify({ id: `msg_${call.n}`, type: 'message', role: 'assistant', model: body.model ?? 'fake', content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 10 } }));
        } else {
          res.end(JSON.stringify({ id: `chatcmpl_${call.n}`, object: 'chat.completion', model: body.model ?? 'fake', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] }));
        }
      } finally {
        inFlight--;
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
