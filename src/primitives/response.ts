import type { PrimitiveContext } from './types';

/**
 * What a body-inspecting primitive (P06/P07) looks at: its own `body` input when the key is given
 * (even null), else the chain's last response body. `undefined` = nothing to inspect.
 */
export function subjectBody(input: { body?: unknown }, ctx: PrimitiveContext): { body: unknown; source: 'input' | 'last_response' } | undefined {
  if (Object.prototype.hasOwnProperty.call(input, 'body') && input.body !== undefined) return { body: input.body, source: 'input' };
  if (ctx.state.last) return { body: ctx.state.last.body, source: 'last_response' };
  return undefined;
}

export const NO_RESPONSE = 'no HTTP response to check (no earlier P04 or P08 in this chain) and no body input';
