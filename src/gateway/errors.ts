/**
 * Upstream errors as the agent's own protocol would have sent them. Agents decide whether to retry
 * from the status and the error type (Claude Code: 429/529 and overloaded_error; Codex and LiteLLM:
 * 429/5xx, and in a Responses stream the response.failed error code), so a 529 from Anthropic must
 * reach a Codex agent as a 503/server_is_overloaded and an OpenAI 429 must reach Claude Code as a
 * 429 rate_limit_error. Retry-After is kept so their back-off follows the provider's.
 */
import type { IrError, IrErrorKind, Protocol } from './ir';
import { sseFrame } from './sse';

type Headers = Record<string, string | string[] | undefined>;

const header = (h: Headers, name: string): string | undefined => {
  const v = h[name] ?? h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

function kindOfStatus(status: number): IrErrorKind {
  if (status === 429) return 'rate_limit';
  if (status === 529 || status === 503) return 'overloaded';
  if (status === 401) return 'auth';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  if (status === 413) return 'too_large';
  if (status === 504 || status === 408) return 'timeout';
  if (status >= 500) return 'server';
  return 'invalid_request';
}

/** An error's type/code as the providers name it → the neutral kind (undefined: not one we know). */
export function kindOfType(t: string | undefined): IrErrorKind | undefined {
  switch (t) {
    case 'overloaded_error':
    case 'server_is_overloaded':
    case 'slow_down':
      return 'overloaded';
    case 'rate_limit_error':
    case 'rate_limit_exceeded':
    case 'requests':
    case 'tokens':
      return 'rate_limit';
    case 'api_error':
    case 'server_error':
      return 'server';
    case 'timeout_error':
      return 'timeout';
    case 'authentication_error':
    case 'invalid_api_key':
      return 'auth';
    case 'permission_error':
      return 'permission';
    case 'not_found_error':
      return 'not_found';
    case 'request_too_large':
      return 'too_large';
    case 'invalid_request_error':
      return 'invalid_request';
    default:
      return undefined;
  }
}

function retryAfterOf(h: Headers): number | undefined {
  const ms = Number(header(h, 'retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms / 1000;
  const ra = header(h, 'retry-after');
  if (ra === undefined) return undefined;
  const s = Number(ra);
  if (Number.isFinite(s)) return s;
  const at = Date.parse(ra); // the HTTP-date form
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

/** Read an upstream error response (any of the three protocols' shapes, or plain text). */
export function decodeUpstreamError(status: number, headers: Headers, body: string): IrError {
  let message = body.slice(0, 2000);
  let kind = kindOfStatus(status);
  try {
    const j = JSON.parse(body) as { error?: { type?: string; code?: string; message?: string } | string; message?: string };
    const e = typeof j.error === 'object' && j.error !== null ? j.error : undefined;
    if (e?.message) message = e.message;
    else if (typeof j.error === 'string') message = j.error;
    else if (typeof j.message === 'string') message = j.message;
    // the body is more specific than the status (an OpenAI 503 "slow_down", an Anthropic 500 "overloaded_error")
    const byBody = kindOfType(e?.code ?? undefined) ?? kindOfType(e?.type);
    if (byBody && !(byBody === 'invalid_request' && status >= 500)) kind = byBody;
  } catch {
    /* not JSON: keep the text */
  }
  const retryAfter = retryAfterOf(headers);
  return { kind, message, ...(retryAfter !== undefined ? { retryAfter } : {}) };
}

const ANTHROPIC: Record<IrErrorKind, [number, string]> = {
  rate_limit: [429, 'rate_limit_error'],
  overloaded: [529, 'overloaded_error'],
  auth: [401, 'authentication_error'],
  permission: [403, 'permission_error'],
  invalid_request: [400, 'invalid_request_error'],
  not_found: [404, 'not_found_error'],
  too_large: [413, 'request_too_large'],
  server: [500, 'api_error'],
  timeout: [504, 'timeout_error'],
};

const OPENAI: Record<IrErrorKind, [number, string, string | null]> = {
  rate_limit: [429, 'rate_limit_exceeded', 'rate_limit_exceeded'],
  overloaded: [503, 'server_error', 'server_is_overloaded'],
  auth: [401, 'invalid_request_error', 'invalid_api_key'],
  permission: [403, 'permission_error', null],
  invalid_request: [400, 'invalid_request_error', null],
  not_found: [404, 'invalid_request_error', 'model_not_found'],
  too_large: [413, 'invalid_request_error', 'request_too_large'],
  server: [500, 'server_error', null],
  timeout: [504, 'server_error', 'timeout'],
};

/** The error body of a protocol (also what goes into an SSE error event). */
export function errorBody(p: Protocol, e: IrError): Record<string, unknown> {
  if (p === 'anthropic') return { type: 'error', error: { type: ANTHROPIC[e.kind][1], message: e.message } };
  const [, type, code] = OPENAI[e.kind];
  return { error: { message: e.message, type, param: null, code } };
}

export function errorStatus(p: Protocol, e: IrError): number {
  return p === 'anthropic' ? ANTHROPIC[e.kind][0] : OPENAI[e.kind][0];
}

/** Responses streams report failure in-band (response.failed): the code Codex reads to decide on a retry. */
export function responsesErrorCode(e: IrError): string {
  return OPENAI[e.kind][2] ?? OPENAI[e.kind][1];
}

/**
 * The message of an in-band Responses failure. Codex takes the delay of a rate_limit_exceeded
 * failure from the message only (OpenAI's wording "Please try again in 1.5s"), never from a header,
 * so a known Retry-After is appended in those words.
 */
export function responsesFailureMessage(e: IrError): string {
  if (e.kind !== 'rate_limit' || e.retryAfter === undefined || /try again in/i.test(e.message)) return e.message;
  return `${e.message.replace(/\.?\s*$/, '.')} Please try again in ${e.retryAfter}s.`;
}

/**
 * A rate limit for a streaming Responses agent, as OpenAI streams send it: HTTP 200 and an in-band
 * response.failed. Codex (0.128) does not retry an HTTP 429 (its request retry excludes 429 and it
 * ends the turn with "exceeded retry limit"), but retries an in-band rate_limit_exceeded after the
 * delay in the message: with an HTTP 429 a rate-limited translated upstream would end the agent's run.
 */
function inBandFailure(e: IrError): AgentErrorResponse {
  const base = { id: `resp_gw_${Date.now().toString(36)}`, object: 'response', created_at: Math.floor(Date.now() / 1000), model: null };
  const body =
    sseFrame({ type: 'response.created', sequence_number: 0, response: { ...base, status: 'in_progress', output: [] } }, 'response.created') +
    sseFrame({ type: 'response.failed', sequence_number: 1, response: { ...base, status: 'failed', output: [], error: { code: responsesErrorCode(e), message: responsesFailureMessage(e) } } }, 'response.failed');
  return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body };
}

export interface AgentErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** An upstream HTTP error → the response the agent gets (`stream`: the agent asked for a stream). */
export function mapUpstreamError(status: number, headers: Headers, body: string, agent: Protocol, opts: { stream?: boolean } = {}): AgentErrorResponse {
  const e = decodeUpstreamError(status, headers, body);
  return encodeAgentError(e, agent, opts);
}

export function encodeAgentError(e: IrError, agent: Protocol, opts: { stream?: boolean } = {}): AgentErrorResponse {
  if (agent === 'responses' && opts.stream && e.kind === 'rate_limit') return inBandFailure(e);
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (e.retryAfter !== undefined) {
    h['retry-after'] = String(Math.ceil(e.retryAfter));
    h['retry-after-ms'] = String(Math.round(e.retryAfter * 1000));
  }
  return { status: errorStatus(agent, e), headers: h, body: JSON.stringify(errorBody(agent, e)) };
}
