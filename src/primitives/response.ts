import type { LastResponse, PrimitiveContext } from './types';

/**
 * What a body-inspecting primitive (P06/P07) looks at: its own `body` input when the key is given
 * (even null), else the chain's last response body. `undefined` = nothing to inspect.
 */
export function subjectBody(input: { body?: unknown }, ctx: PrimitiveContext): { body: unknown; source: 'input' | 'last_response' } | undefined {
  if (Object.prototype.hasOwnProperty.call(input, 'body') && input.body !== undefined) return { body: input.body, source: 'input' };
  if (ctx.state.last) return { body: ctx.state.last.body, source: 'last_response' };
  return undefined;
}

/** The chain's response `back` steps before the last one (0 = the last), from the chain's recorded responses. */
export function responseAt(state: { last?: LastResponse; responses?: LastResponse[] }, back: number): LastResponse | undefined {
  if (back === 0) return state.last;
  const h = state.responses ?? [];
  return h[h.length - 1 - back];
}

export const NO_RESPONSE = 'no HTTP response to check (no earlier P04 or P08 in this chain) and no body input';

/**
 * The parts of the last response an assertion can address (`source`): the parsed `body`, the
 * `status` code, the `headers` (names lower-cased), the body as `text`, its `first_line`, the
 * `media_type` (Content-Type without parameters, lower-cased; '' when absent) and the body's
 * `envelope`: `data` (an object with a non-list `data` member), `data[]` (… a list `data`),
 * `root` (any other object, or a number/boolean/null), `root[]` (a list), `root:string` (text);
 * the body's `size` in bytes (UTF-8 of the text) and the response time `elapsed_ms`.
 */
export const SOURCES = ['body', 'status', 'headers', 'text', 'first_line', 'media_type', 'envelope', 'size', 'elapsed_ms'] as const;
export type Source = (typeof SOURCES)[number];

/** The body as text: a string body as it is, anything else as JSON; no body → undefined. */
export function bodyText(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  return typeof body === 'string' ? body : JSON.stringify(body);
}

/** The value a non-body source designates, or a reason why there is none. */
export function sourceValue(source: Exclude<Source, 'body'>, last: LastResponse | undefined): { value: unknown } | { missing: string } {
  if (!last) return { missing: `no HTTP response in this chain for source "${source}"` };
  switch (source) {
    case 'status': return { value: last.status };
    case 'headers': {
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(last.headers)) h[k.toLowerCase()] = v;
      return { value: h };
    }
    case 'text': return { value: bodyText(last.body) ?? '' };
    case 'first_line': return { value: (bodyText(last.body) ?? '').split(/\r?\n/)[0] };
    case 'media_type': {
      const ct = Object.entries(last.headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
      return { value: ct.split(';')[0].trim().toLowerCase() };
    }
    case 'envelope': return { value: envelope(last.body) };
    case 'size': return { value: Buffer.byteLength(bodyText(last.body) ?? '', 'utf8') };
    case 'elapsed_ms': return { value: last.elapsedMs };
  }
}

export function envelope(body: unknown): string {
  if (typeof body === 'string') return 'root:string';
  if (Array.isArray(body)) return 'root[]';
  if (body !== null && typeof body === 'object') {
    if (!Object.prototype.hasOwnProperty.call(body, 'data')) return 'root';
    return Array.isArray((body as Record<string, unknown>).data) ? 'data[]' : 'data';
  }
  return 'root';
}

/** Is the response body raw text (not JSON)? A string body counts as JSON only when the response said so. */
export function isRawText(body: unknown, last: LastResponse | undefined): boolean {
  if (typeof body !== 'string') return false;
  const ct = last ? Object.entries(last.headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '' : '';
  return !/json/i.test(ct);
}

/** Is the body empty (no body, null, or blank text)? */
export function isEmptyBody(body: unknown): boolean {
  return body === undefined || body === null || (typeof body === 'string' && body.trim() === '');
}
