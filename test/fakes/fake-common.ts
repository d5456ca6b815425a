// Shared plumbing of the fake LLM servers: an HTTP server on 127.0.0.1 that records every request,
// checks the credential the relay injected, applies scripted faults, and writes SSE frames.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the agent is scripted to do: shell commands in order (one per model turn), then a final text. */
export interface FakeScript {
  commands: string[];
  finalText?: string;
}

/**
 * A fault applied to the Nth model request (1-based, counting only model calls):
 * overloaded: the provider's "overloaded" answer (Anthropic: HTTP 529 overloaded_error; OpenAI: a
 *   response.failed event with `code`, default server_is_overloaded) · stall: open the stream, send the first
 *   event, then never finish · delay: answer normally after `ms` · rate_limit: HTTP 429 in the
 *   provider's own error shape with a Retry-After header of `retryAfter` seconds.
 */
export type Fault = { kind: 'overloaded'; code?: string } | { kind: 'stall' } | { kind: 'delay'; ms: number } | { kind: 'rate_limit'; retryAfter: number };

export interface FakeOptions {
  script: FakeScript;
  faults?: Record<number, Fault>;
  /** hold a model request this many ms before answering (0: answer at once), decided from its body */
  delayFor?: (body: Record<string, unknown>) => number;
  /** the credential the upstream expects (what the relay must inject); requests without it get 401 */
  requireKey?: string;
  port?: number;
  /**
   * a thinking model: every answer opens with reasoning carrying a fresh opaque blob (Anthropic
   * thinking signature, Responses encrypted_content), recorded as `minted`; the blobs a request
   * sends back are recorded as `echoed`, so a test can see them round-trip unchanged
   */
  reasoning?: boolean;
  /**
   * a provider's concurrent-stream limit: a model request arriving while this many are still being
   * answered (from arrival to the answer's end, holds included) gets 429 + Retry-After
   * (`limitRetryAfter`, default 1 s) in the provider's shape; `maxOpen()` tells the peak
   */
  maxConcurrent?: number;
  limitRetryAfter?: number;
}

export interface RecordedRequest {
  n: number;
  method: string;
  path: string;
  at: number;
  /** 'ok' when the expected key arrived, 'missing' or 'wrong' otherwise (the value is never recorded) */
  auth: 'ok' | 'missing' | 'wrong' | 'unchecked';
  /** the credential the request carried, if it is NOT the expected key (e.g. a relay token leaking through) */
  foreignCredential?: string;
  model?: string;
  stream?: boolean;
  /** 1-based number among model calls, when this was one */
  modelCall?: number;
  step?: number;
  fault?: Fault['kind'] | 'concurrency_limit';
  status: number;
  userAgent?: string;
  body?: unknown;
  /** the reasoning blob this answer carried (reasoning fakes) */
  minted?: string;
  /** the reasoning blobs the request carried back */
  echoed?: string[];
}

export interface FakeServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  modelCalls(): RecordedRequest[];
  /** the most model requests that were being answered at once (see FakeOptions.maxConcurrent) */
  maxOpen(): number;
  /** switch to another script/faults; model-call numbering starts again at 1, the request log is cleared */
  configure(next: Pick<FakeOptions, 'script' | 'faults'> & { reasoning?: boolean }): void;
  close(): Promise<void>;
}

export interface ModelCall {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  body: Record<string, unknown>;
  rec: RecordedRequest;
  fault: Fault | undefined;
}

export async function startFake(
  opts: FakeOptions,
  isModelCall: (method: string, path: string) => boolean,
  credentialOf: (req: http.IncomingMessage) => string | undefined,
  handleModel: (c: ModelCall) => Promise<void> | void,
  handleOther: (req: http.IncomingMessage, res: http.ServerResponse, path: string) => void,
  shape: 'anthropic' | 'openai' = 'anthropic',
): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let modelCalls = 0;
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      const cred = credentialOf(req);
      const auth: RecordedRequest['auth'] = opts.requireKey === undefined ? 'unchecked' : cred === undefined ? 'missing' : cred === opts.requireKey ? 'ok' : 'wrong';
      const rec: RecordedRequest = { n: requests.length + 1, method: req.method ?? 'GET', path, at: Date.now(), auth, status: 200, userAgent: req.headers['user-agent'] };
      if (auth === 'wrong') rec.foreignCredential = cred;
      requests.push(rec);
      if (!isModelCall(rec.method, path)) return handleOther(req, res, path);
      rec.modelCall = ++modelCalls;
      if (auth === 'missing' || auth === 'wrong') {
        rec.status = 401;
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
      }
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        rec.status = 400;
        res.writeHead(400);
        return res.end('bad json');
      }
      rec.model = typeof body.model === 'string' ? body.model : undefined;
      rec.stream = body.stream === true;
      rec.body = body;
      if (opts.maxConcurrent !== undefined && open >= opts.maxConcurrent) {
        rec.fault = 'concurrency_limit';
        return rateLimited({ req, res, body, rec, fault: undefined }, opts.limitRetryAfter ?? 1, shape);
      }
      open++;
      maxOpen = Math.max(maxOpen, open);
      let closed = false;
      const done = () => {
        if (!closed) (closed = true), open--;
      };
      // 'finish' (the whole answer handed to the socket) or 'close' (the client hung up): the stream is over
      res.once('finish', done);
      res.once('close', done);
      const fault = opts.faults?.[rec.modelCall];
      if (fault) rec.fault = fault.kind;
      const holdMs = fault?.kind === 'delay' ? fault.ms : opts.delayFor?.(body) ?? 0;
      const run = async () => {
        if (holdMs > 0) {
          await new Promise<void>((r) => {
            // the listener goes when the hold ends: a keep-alive socket carries many requests
            const gone = () => {
              clearTimeout(t);
              timers.delete(t);
              r();
            };
            const t = setTimeout(() => {
              timers.delete(t);
              req.socket.off('close', gone);
              r();
            }, holdMs);
            timers.add(t);
            req.socket.once('close', gone);
          });
        }
        if (res.destroyed || req.socket.destroyed) return; // the client gave up meanwhile
        await handleModel({ req, res, body, rec, fault });
      };
      run().catch((err: Error) => {
        rec.status = 500;
        if (!res.headersSent) res.writeHead(500);
        res.end(String(err.message));
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    modelCalls: () => requests.filter((r) => r.modelCall !== undefined),
    maxOpen: () => maxOpen,
    configure(next) {
      opts.script = next.script;
      opts.faults = next.faults;
      if (next.reasoning !== undefined) opts.reasoning = next.reasoning;
      modelCalls = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function sseHead(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
}

export function sse(res: http.ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export const rid = (prefix: string) => `${prefix}${Math.random().toString(36).slice(2, 14)}`;

/** A 429 in the provider's shape (Anthropic or OpenAI error JSON) with Retry-After. */
export function rateLimited(c: ModelCall, retryAfter: number, shape: 'anthropic' | 'openai'): void {
  c.rec.status = 429;
  c.res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfter) });
  const message = 'Rate limit reached; please retry after the given time.';
  c.res.end(JSON.stringify(shape === 'anthropic' ? { type: 'error', error: { type: 'rate_limit_error', message } } : { error: { message, type: 'requests', code: 'rate_limit_exceeded', param: null } }));
}

/**
 * The scripted shell command as a call of whichever shell tool the request offers: Claude Code's
 * Bash, Codex's exec_command {cmd} (0.128/0.171), shell_command, shell {command:[...]}, OpenHands'
 * execute_bash/terminal. Undefined when none is offered (a side call, e.g. a title request).
 */
export function shellCall(tools: (string | undefined)[], command: string, step: number): { name: string; args: Record<string, unknown> } | undefined {
  if (tools.includes('Bash')) return { name: 'Bash', args: { command, description: `scripted step ${step + 1}` } };
  if (tools.includes('exec_command')) return { name: 'exec_command', args: { cmd: command } };
  if (tools.includes('shell_command')) return { name: 'shell_command', args: { command } };
  if (tools.includes('shell')) return { name: 'shell', args: { command: ['bash', '-lc', command] } };
  for (const n of ['execute_bash', 'terminal']) if (tools.includes(n)) return { name: n, args: { command, is_input: 'false', timeout: 120, security_risk: 'LOW' } };
  return undefined;
}
