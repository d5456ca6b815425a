/**
 * The gateway's neutral shape of one model call. Every protocol is decoded into it and encoded out
 * of it, so six translation directions need three decoders and three encoders, and a piece of
 * content that one protocol cannot hold is still present here for the next encoder to carry.
 */

export type Protocol = 'anthropic' | 'chat' | 'responses';

/**
 * Reasoning as the provider produced it. Signatures and encrypted blobs are bound to the provider
 * that minted them, so `origin` says which upstream protocol may receive them back verbatim.
 */
export interface IrReasoning {
  origin: Protocol;
  /** visible thinking text (Anthropic thinking, DeepSeek/Kimi reasoning_content, Responses reasoning_text) */
  text?: string;
  /** Responses summary parts (kept apart: the provider wants them back part by part) */
  summary?: string[];
  /** Anthropic thinking signature */
  signature?: string;
  /** Anthropic redacted_thinking data */
  redacted?: string;
  /** Responses reasoning item id and encrypted_content */
  itemId?: string;
  encrypted?: string;
}

export type IrImage = { type: 'image'; url: string } | { type: 'image'; mediaType: string; data: string };

export type IrPart =
  | { type: 'text'; text: string }
  | IrImage
  | { type: 'reasoning'; reasoning: IrReasoning }
  /** `args` is the JSON text of the arguments, kept as text so partial/odd JSON is not reformatted */
  | { type: 'tool_call'; id: string; name: string; args: string; thoughtSignature?: string; itemId?: string }
  | { type: 'tool_result'; callId: string; content: ({ type: 'text'; text: string } | IrImage)[]; isError?: boolean };

export interface IrMessage {
  role: 'user' | 'assistant';
  parts: IrPart[];
}

export interface IrTool {
  name: string;
  description?: string;
  /** JSON schema of the arguments */
  parameters: Record<string, unknown>;
  /**
   * a Responses "custom" tool (free text input, e.g. Codex apply_patch): elsewhere it is a function
   * with one string argument `input`, and the Responses encoders turn calls back into custom calls
   */
  freeform?: boolean;
}

export type IrToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

export interface IrRequest {
  model: string;
  system: string[];
  messages: IrMessage[];
  tools: IrTool[];
  toolChoice?: IrToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop: string[];
  stream: boolean;
  /** asked-for reasoning: OpenAI effort and/or Anthropic budget (mapped onto each other when only one is given) */
  reasoning?: { effort?: 'minimal' | 'low' | 'medium' | 'high'; budgetTokens?: number };
}

/** One shape for metering: input counts every prompt token, cached ones included. */
export interface IrUsage {
  input: number;
  cachedInput: number;
  output: number;
  reasoning: number;
}

export type IrStop = 'end' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal';

export interface IrResponse {
  id: string;
  model: string;
  parts: IrPart[];
  stop: IrStop;
  usage: IrUsage;
}

/** What a stream decoder yields and a stream encoder consumes; blocks never interleave. */
export type IrBlock =
  | { kind: 'text' }
  | { kind: 'reasoning'; origin: Protocol; redacted?: string; itemId?: string }
  | { kind: 'tool_call'; id: string; name: string; thoughtSignature?: string; itemId?: string };

export type IrEvent =
  | { type: 'start'; id: string; model: string }
  | { type: 'block_start'; block: IrBlock }
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'args'; json: string }
  /** the finished block: the whole reasoning (for signatures/carriers) or tool call */
  | { type: 'block_stop'; reasoning?: IrReasoning; toolCall?: Extract<IrPart, { type: 'tool_call' }> }
  | { type: 'finish'; stop: IrStop; usage: IrUsage }
  | { type: 'error'; error: IrError };

export type IrErrorKind = 'rate_limit' | 'overloaded' | 'auth' | 'permission' | 'invalid_request' | 'not_found' | 'too_large' | 'server' | 'timeout';

export interface IrError {
  kind: IrErrorKind;
  message: string;
  /** seconds, from Retry-After (or retry-after-ms) when the upstream sent one */
  retryAfter?: number;
}

export const ZERO_USAGE: IrUsage = { input: 0, cachedInput: 0, output: 0, reasoning: 0 };
