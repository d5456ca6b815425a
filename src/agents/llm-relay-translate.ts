/**
 * The relay as the LLM gateway (issue 13 item 1): when the agent's protocol (from the request path)
 * differs from the upstream's (models.json provider api), the request is translated with
 * src/gateway, sent to the upstream's own endpoint with the upstream's auth headers, and the answer
 * (stream, whole response or error) translated back. Same protocol never comes here: it passes
 * through unbuffered (llm-relay.ts). Usage of every translated answer is added to the relay stats.
 * Nothing here logs headers or bodies.
 */
import http from 'node:http';
import https from 'node:https';
import {
  createStreamDecoder,
  decodeRequest,
  decodeResponse,
  encodeAgentError,
  encodeResponse,
  GatewayInputError,
  mapUpstreamError,
  responseFromStream,
  SseParser,
  StreamTranslator,
  streamFromResponse,
  translateRequest,
  type AgentContext,
  type GatewayMemory,
  type IrError,
  type IrUsage,
  type Protocol,
} from '../gateway';
import type { Upstream } from './models';
import { settleRequest, type SettingsModel, type SettingsStats } from './gateway-settings';
import { costOf, type Price } from './metering';
import { noteGatewayRequest } from './gateway-log';

export interface UsageTotals extends IrUsage {
  /** model answers whose usage was counted */
  requests: number;
}

export interface GatewayState {
  upstream: Upstream & { protocol: Protocol };
  memory: GatewayMemory;
  usage: UsageTotals;
  /** the rollout's snapshot id: the model of every translated request, and what a local GET /v1/models reports */
  model?: string;
  bodyOverrides?: Record<string, unknown>;
  /** the registry's settings of the rollout's model, applied to every model request (gateway-settings.ts) */
  settings?: { model: SettingsModel; stats: SettingsStats };
  onStatus(code: number): void;
  /** a successful model answer whose usage could not be read (the cost is then a lower bound) */
  onUnmetered?(): void;
  /** after every metered answer (the relay keeps its stats on disk: a crashed worker's successor resumes the count) */
  onMetered?(): void;
  /** the model's dated price: each answer's cost goes to its gateway-log line */
  price?: Price;
  onUpstreamError(): void;
}

/** The agent's protocol from its request path (with or without the /v1 prefix; query ignored). */
export function agentProtocolOf(method: string | undefined, url: string): Protocol | undefined {
  if (method !== 'POST') return undefined;
  const path = url.split('?')[0].replace(/\/+$/, '');
  if (/\/messages$/.test(path)) return 'anthropic';
  if (/\/chat\/completions$/.test(path)) return 'chat';
  if (/\/responses$/.test(path)) return 'responses';
  return undefined;
}

/**
 * Where each protocol lives under a provider's base URL, following the registry's defaults:
 * Anthropic bases stop before /v1 (https://api.anthropic.com), OpenAI-style bases include their
 * version prefix (https://api.openai.com/v1, …/v1beta/openai) — as the agents' own clients expect.
 */
const UPSTREAM_PATH: Record<Protocol, string> = { anthropic: '/v1/messages', chat: '/chat/completions', responses: '/responses' };

/**
 * Side endpoints Claude Code calls that only an Anthropic upstream has. Answered locally when the
 * upstream is not Anthropic: true when handled.
 */
export function answerSideEndpoint(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, g: GatewayState): boolean {
  if (g.upstream.protocol === 'anthropic') return false;
  const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
  if (req.method === 'POST' && /\/messages\/count_tokens$/.test(path)) {
    // A local estimate (about 4 characters per token of the request's text); Claude Code uses it
    // only to decide when to compact, and no Chat/Responses provider offers an exact count.
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
      decodeRequest('anthropic', { max_tokens: 1, ...(json as object) });
    } catch (err) {
      return sendError(res, 'anthropic', { kind: 'invalid_request', message: `saasbench relay: ${(err as Error).message}` }), true;
    }
    const o = json as { system?: unknown; messages?: unknown; tools?: unknown };
    const chars = JSON.stringify([o.system ?? '', o.messages ?? [], o.tools ?? []]).length;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ input_tokens: Math.ceil(chars / 4) }));
    return true;
  }
  if (req.method === 'GET' && /\/models$/.test(path) && req.headers['anthropic-version'] !== undefined) {
    const id = g.model ?? 'unknown';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [{ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' }], has_more: false, first_id: id, last_id: id }));
    return true;
  }
  return false;
}

function sendError(res: http.ServerResponse, agent: Protocol, e: IrError): void {
  const out = encodeAgentError(e, agent);
  if (res.headersSent) return void res.destroy();
  res.writeHead(out.status, out.headers);
  res.end(out.body);
}

/** The registry settings applied to a model request already in the upstream's protocol (none configured: unchanged). */
export function withSettings(g: GatewayState, body: Record<string, unknown>): Record<string, unknown> {
  return g.settings ? settleRequest(g.settings.stats, g.upstream.protocol, body, g.settings.model) : body;
}

export function addUsage(g: GatewayState, u: IrUsage | undefined, res?: http.ServerResponse): void {
  if (u && res && g.price) {
    const usd = costOf({ requests: 1, ...u }, g.price, g.model ?? '').usd;
    if (usd !== null) noteGatewayRequest(res, { costUsd: usd });
  }
  if (!u) {
    g.onUnmetered?.();
    return g.onMetered?.();
  }
  g.usage.requests++;
  g.usage.input += u.input;
  g.usage.cachedInput += u.cachedInput;
  g.usage.output += u.output;
  g.usage.reasoning += u.reasoning;
  g.onMetered?.();
}

/** Translate one agent request of protocol `agent` to the upstream and its answer back. */
export function forwardTranslated(req: http.IncomingMessage, res: http.ServerResponse, rawBody: Buffer, agent: Protocol, g: GatewayState): void {
  const up = g.upstream;
  let agentBody: Record<string, unknown>;
  let upBody: Record<string, unknown>;
  let ctx: AgentContext;
  try {
    agentBody = JSON.parse(rawBody.toString('utf8')) as Record<string, unknown>;
    const t = translateRequest(agent, up.protocol, agentBody, g.memory);
    // the upstream serves the rollout's snapshot only: Claude Code's background calls name its own
    // small model (claude-haiku-…), which a foreign provider does not have
    upBody = withSettings(g, { ...t.body, ...(g.model ? { model: g.model } : {}), ...(g.settings ? {} : g.bodyOverrides) });
    ctx = t.context;
  } catch (err) {
    const message = err instanceof GatewayInputError ? err.message : `request body is not JSON (${(err as Error).message})`;
    return sendError(res, agent, { kind: 'invalid_request', message: `saasbench relay: ${message}` });
  }
  const agentStreams = agentBody.stream === true;
  const payload = Buffer.from(JSON.stringify(upBody));
  const target = new URL(up.baseUrl.replace(/\/+$/, '') + UPSTREAM_PATH[up.protocol]);
  const headers: http.OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'content-length': String(payload.length),
    'accept-encoding': 'identity',
    accept: upBody.stream === true ? 'text/event-stream' : 'application/json',
  };
  const ua = req.headers['user-agent'];
  if (typeof ua === 'string') headers['user-agent'] = ua;
  if (up.auth === 'x-api-key') headers['x-api-key'] = up.key;
  else headers.authorization = `Bearer ${up.key}`;
  if (up.protocol === 'anthropic') headers['anthropic-version'] = '2023-06-01';
  const mod = target.protocol === 'https:' ? https : http;
  const call = mod.request(target, { method: 'POST', headers }, (upRes) => {
    const code = upRes.statusCode ?? 502;
    g.onStatus(code);
    const isSse = /text\/event-stream/i.test(String(upRes.headers['content-type'] ?? ''));
    if (code >= 200 && code < 300 && isSse && agentStreams) {
      // token by token: each upstream chunk is translated and written at once
      const tr = new StreamTranslator(up.protocol, agent, ctx);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      res.socket?.setNoDelay(true);
      upRes.on('data', (c: Buffer) => {
        const out = tr.push(c);
        if (out) res.write(out);
      });
      upRes.on('end', () => {
        res.end(tr.end());
        addUsage(g, tr.usage, res);
      });
      upRes.on('error', () => res.destroy());
      return;
    }
    const chunks: Buffer[] = [];
    upRes.on('data', (c: Buffer) => chunks.push(c));
    upRes.on('error', () => res.destroy());
    upRes.on('end', () => {
      const text = Buffer.concat(chunks);
      if (code < 200 || code >= 300) {
        // rate limits and overloads reach the agent as its own protocol's, Retry-After kept
        const e = mapUpstreamError(code, upRes.headers, text.toString('utf8'), agent);
        res.writeHead(e.status, e.headers);
        return void res.end(e.body);
      }
      try {
        if (isSse) {
          const r = responseFromStream(up.protocol, agent, text, ctx);
          if (r.status === 200) addUsage(g, decodeResponse(agent, r.body).usage, res);
          res.writeHead(r.status, { 'content-type': 'application/json' });
          return void res.end(JSON.stringify(r.body));
        }
        const json: unknown = JSON.parse(text.toString('utf8'));
        const ir = decodeResponse(up.protocol, json);
        addUsage(g, ir.usage, res);
        if (agentStreams) {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          return void res.end(streamFromResponse(up.protocol, agent, json, ctx));
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(encodeResponse(agent, ir, ctx)));
      } catch (err) {
        sendError(res, agent, { kind: 'server', message: `saasbench relay: unreadable upstream answer (${(err as Error).message})` });
      }
    });
  });
  call.on('error', (err) => {
    g.onUpstreamError();
    sendError(res, agent, { kind: 'server', message: `saasbench relay: upstream unreachable (${(err as NodeJS.ErrnoException).code ?? err.message})` });
  });
  // the agent went away: stop talking to the upstream too
  res.on('close', () => {
    if (!res.writableFinished) call.destroy();
  });
  call.end(payload);
}

/**
 * Reads the usage of an answer passed through untranslated, beside the bytes going to the agent
 * (which it never changes): an SSE stream is decoded as it passes, a JSON answer at its end. A
 * shape it cannot read is simply not metered.
 */
export class UsageMeter {
  private parser = new SseParser();
  private decoder;
  private chunks: Buffer[] = [];
  private size = 0;
  private broken = false;
  private usage: IrUsage | undefined;

  constructor(
    private readonly protocol: Protocol,
    private readonly sse: boolean,
  ) {
    this.decoder = createStreamDecoder(protocol);
  }

  push(c: Buffer): void {
    if (this.broken) return;
    try {
      if (this.sse) {
        for (const ev of this.parser.push(c)) for (const ir of this.decoder.push(ev)) if (ir.type === 'finish') this.usage = ir.usage;
      } else {
        this.size += c.length;
        // whole answers are small; a huge one is not worth holding twice
        if (this.size > 16 * 1024 * 1024) this.broken = true;
        else this.chunks.push(c);
      }
    } catch {
      this.broken = true;
    }
  }

  end(): IrUsage | undefined {
    if (this.broken) return undefined;
    try {
      if (this.sse) {
        for (const ev of this.parser.end()) for (const ir of this.decoder.push(ev)) if (ir.type === 'finish') this.usage = ir.usage;
        return this.usage;
      }
      return decodeResponse(this.protocol, JSON.parse(Buffer.concat(this.chunks).toString('utf8'))).usage;
    } catch {
      return undefined;
    }
  }
}
