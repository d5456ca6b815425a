/**
 * The LLM gateway's protocol translation (issue 13 item 1): Anthropic Messages ⇄ OpenAI Chat
 * Completions ⇄ OpenAI Responses, requests, whole responses, streams and errors. Pure functions
 * and small stateful stream converters; the relay (src/agents/llm-relay.ts) does the HTTP.
 * docs/gateway.md says what is translated, what is carried how, and what cannot be.
 */
import { decodeAnthropicRequest, encodeAnthropicRequest } from './anthropic-request';
import { decodeAnthropicResponse, encodeAnthropicResponse } from './anthropic-response';
import { AnthropicStreamDecoder, AnthropicStreamEncoder } from './anthropic-stream';
import type { GatewayMemory } from './carrier';
import { decodeChatRequest, encodeChatRequest } from './chat-request';
import { decodeChatResponse, encodeChatResponse } from './chat-response';
import { ChatStreamDecoder, ChatStreamEncoder } from './chat-stream';
import { contextFor, type AgentContext } from './context';
import type { IrEvent, IrRequest, IrResponse, IrUsage, Protocol } from './ir';
import { decodeResponsesRequest, encodeResponsesRequest } from './responses-request';
import { decodeResponsesResponse, encodeResponsesResponse } from './responses-response';
import { ResponsesStreamDecoder, ResponsesStreamEncoder } from './responses-stream';
import { SseParser } from './sse';
import { collectEvents, eventsOf, type StreamDecoder, type StreamEncoder } from './stream-types';
import { encodeAgentError } from './errors';

export type { AgentContext } from './context';
export type { IrEvent, IrMessage, IrPart, IrReasoning, IrRequest, IrResponse, IrStop, IrTool, IrUsage, IrError, Protocol } from './ir';
export { GatewayMemory, packCarrier, unpackCarrier } from './carrier';
export { decodeUpstreamError, encodeAgentError, mapUpstreamError, type AgentErrorResponse } from './errors';
export { GatewayInputError } from './input';
export { SseParser, sseFrame, type SseEvent } from './sse';
export { collectEvents, eventsOf, type StreamDecoder, type StreamEncoder } from './stream-types';

export function decodeRequest(p: Protocol, body: unknown, memory?: GatewayMemory): IrRequest {
  return p === 'anthropic' ? decodeAnthropicRequest(body, memory) : p === 'chat' ? decodeChatRequest(body, memory) : decodeResponsesRequest(body, memory);
}

export interface EncodeRequestOptions {
  /** Anthropic requires max_tokens; used when the agent's protocol left it out */
  defaultMaxTokens?: number;
  /** Chat: send max_completion_tokens instead of max_tokens */
  maxCompletionTokens?: boolean;
  /** Chat to Gemini: mark replayed calls without a thought signature as such (see chat-request.ts) */
  geminiSkipSignature?: boolean;
}

export function encodeRequest(p: Protocol, ir: IrRequest, opts: EncodeRequestOptions = {}): Record<string, unknown> {
  if (p === 'anthropic') return encodeAnthropicRequest(ir, opts.defaultMaxTokens);
  if (p === 'chat') return encodeChatRequest(ir, { maxCompletionTokens: opts.maxCompletionTokens, geminiSkipSignature: opts.geminiSkipSignature });
  return encodeResponsesRequest(ir);
}

export interface TranslatedRequest {
  /** the body to send upstream */
  body: Record<string, unknown>;
  request: IrRequest;
  /** what the response translation towards the agent needs (pass it on) */
  context: AgentContext;
}

/** An agent's request body in its protocol → the upstream's body. */
export function translateRequest(agent: Protocol, upstream: Protocol, body: unknown, memory?: GatewayMemory, opts: EncodeRequestOptions = {}): TranslatedRequest {
  const request = decodeRequest(agent, body, memory);
  const includeUsage = agent !== 'chat' || ((body as { stream_options?: { include_usage?: unknown } }).stream_options?.include_usage === true);
  return { body: encodeRequest(upstream, request, opts), request, context: contextFor(request, memory, includeUsage) };
}

export function decodeResponse(p: Protocol, body: unknown): IrResponse {
  return p === 'anthropic' ? decodeAnthropicResponse(body) : p === 'chat' ? decodeChatResponse(body) : decodeResponsesResponse(body);
}

export function encodeResponse(p: Protocol, ir: IrResponse, ctx: AgentContext = {}): Record<string, unknown> {
  return p === 'anthropic' ? encodeAnthropicResponse(ir, ctx) : p === 'chat' ? encodeChatResponse(ir, ctx) : encodeResponsesResponse(ir, ctx);
}

/** A whole (non-streaming) upstream response body → the agent's. */
export function translateResponse(upstream: Protocol, agent: Protocol, body: unknown, ctx: AgentContext = {}): Record<string, unknown> {
  return encodeResponse(agent, decodeResponse(upstream, body), ctx);
}

export function createStreamDecoder(p: Protocol): StreamDecoder {
  return p === 'anthropic' ? new AnthropicStreamDecoder() : p === 'chat' ? new ChatStreamDecoder() : new ResponsesStreamDecoder();
}

export function createStreamEncoder(p: Protocol, ctx: AgentContext = {}): StreamEncoder {
  return p === 'anthropic' ? new AnthropicStreamEncoder(ctx) : p === 'chat' ? new ChatStreamEncoder(ctx) : new ResponsesStreamEncoder(ctx);
}

/**
 * Upstream SSE bytes in, agent SSE text out, incrementally: feed every chunk as it arrives
 * (split anywhere) and write what comes back at once, so the agent sees tokens as they come.
 */
export class StreamTranslator {
  private parser = new SseParser();
  private decoder: StreamDecoder;
  private encoder: StreamEncoder;
  private ended = false;
  /** the usage the upstream reported at the finish (for metering); undefined until then */
  usage: IrUsage | undefined;

  constructor(upstream: Protocol, agent: Protocol, ctx: AgentContext = {}) {
    this.decoder = createStreamDecoder(upstream);
    this.encoder = createStreamEncoder(agent, ctx);
  }

  push(chunk: Uint8Array | string): string {
    let out = '';
    for (const ev of this.parser.push(chunk)) for (const ir of this.decoder.push(ev)) out += this.encode(ir);
    return out;
  }

  /** The upstream closed: flush; a stream cut short ends as the agent protocol's error or finish. */
  end(): string {
    if (this.ended) return '';
    this.ended = true;
    let out = '';
    for (const ev of this.parser.end()) for (const ir of this.decoder.push(ev)) out += this.encode(ir);
    for (const ir of this.decoder.end()) out += this.encode(ir);
    return out;
  }

  private encode(ir: IrEvent): string {
    if (ir.type === 'finish') this.usage = ir.usage;
    return this.encoder.push(ir);
  }
}

/** The agent asked for a whole response but the upstream streamed: the complete upstream SSE text → the agent's JSON (or error). */
export function responseFromStream(upstream: Protocol, agent: Protocol, sse: string | Uint8Array, ctx: AgentContext = {}): { status: number; body: Record<string, unknown> } {
  const parser = new SseParser();
  const decoder = createStreamDecoder(upstream);
  const evs = [...parser.push(sse), ...parser.end()].flatMap((e) => decoder.push(e));
  const r = collectEvents([...evs, ...decoder.end()]);
  if ('error' in r) {
    const e = encodeAgentError(r.error, agent);
    return { status: e.status, body: JSON.parse(e.body) as Record<string, unknown> };
  }
  return { status: 200, body: encodeResponse(agent, r, ctx) };
}

/** The agent streams but the upstream answered whole: the upstream JSON → the agent's SSE text. */
export function streamFromResponse(upstream: Protocol, agent: Protocol, body: unknown, ctx: AgentContext = {}): string {
  const encoder = createStreamEncoder(agent, ctx);
  return eventsOf(decodeResponse(upstream, body)).map((e) => encoder.push(e)).join('');
}
