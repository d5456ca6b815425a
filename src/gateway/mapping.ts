/**
 * Stop reasons and usage of the three protocols onto the neutral ones and back, and the
 * reasoning-effort ⇄ thinking-budget correspondence. Kept together: they are small tables.
 */
import type { IrStop, IrUsage } from './ir';

const n = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

export function stopFromAnthropic(s: string | null | undefined): IrStop {
  switch (s) {
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'refusal':
      return 'refusal';
    default:
      return 'end'; // end_turn, pause_turn
  }
}

export function stopToAnthropic(s: IrStop): string {
  return { end: 'end_turn', tool_use: 'tool_use', max_tokens: 'max_tokens', stop_sequence: 'stop_sequence', refusal: 'refusal' }[s];
}

export function stopFromChat(s: string | null | undefined): IrStop {
  switch (s) {
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end';
  }
}

/** Chat has no "stop sequence" reason: a matched stop sequence is reported as `stop` there. */
export function stopToChat(s: IrStop): string {
  return { end: 'stop', tool_use: 'tool_calls', max_tokens: 'length', stop_sequence: 'stop', refusal: 'content_filter' }[s];
}

/** Responses: status + incomplete_details; a function_call in the output means the model wants a tool. */
export function stopFromResponses(status: string | undefined, incompleteReason: string | undefined, hasToolCall: boolean): IrStop {
  if (status === 'incomplete') return incompleteReason === 'content_filter' ? 'refusal' : 'max_tokens';
  return hasToolCall ? 'tool_use' : 'end';
}

export function stopToResponses(s: IrStop): { status: 'completed' | 'incomplete'; incomplete_details: { reason: string } | null } {
  if (s === 'max_tokens') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (s === 'refusal') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** Anthropic input_tokens excludes cache reads and writes; the neutral `input` includes them. */
export function usageFromAnthropic(u: Record<string, unknown> | undefined | null): IrUsage {
  const read = n(u?.cache_read_input_tokens);
  return { input: n(u?.input_tokens) + read + n(u?.cache_creation_input_tokens), cachedInput: read, output: n(u?.output_tokens), reasoning: 0 };
}

export function usageToAnthropic(u: IrUsage): Record<string, number> {
  return { input_tokens: u.input - u.cachedInput, cache_creation_input_tokens: 0, cache_read_input_tokens: u.cachedInput, output_tokens: u.output };
}

export function usageFromChat(u: Record<string, unknown> | undefined | null): IrUsage {
  const pd = (u?.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const cd = (u?.completion_tokens_details ?? {}) as Record<string, unknown>;
  // DeepSeek reports cache hits as prompt_cache_hit_tokens instead of prompt_tokens_details
  return { input: n(u?.prompt_tokens), cachedInput: n(pd.cached_tokens) || n(u?.prompt_cache_hit_tokens), output: n(u?.completion_tokens), reasoning: n(cd.reasoning_tokens) };
}

export function usageToChat(u: IrUsage): Record<string, unknown> {
  return { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output, prompt_tokens_details: { cached_tokens: u.cachedInput }, completion_tokens_details: { reasoning_tokens: u.reasoning } };
}

export function usageFromResponses(u: Record<string, unknown> | undefined | null): IrUsage {
  const idt = (u?.input_tokens_details ?? {}) as Record<string, unknown>;
  const odt = (u?.output_tokens_details ?? {}) as Record<string, unknown>;
  return { input: n(u?.input_tokens), cachedInput: n(idt.cached_tokens), output: n(u?.output_tokens), reasoning: n(odt.reasoning_tokens) };
}

export function usageToResponses(u: IrUsage): Record<string, unknown> {
  return { input_tokens: u.input, input_tokens_details: { cached_tokens: u.cachedInput }, output_tokens: u.output, output_tokens_details: { reasoning_tokens: u.reasoning }, total_tokens: u.input + u.output };
}

/** Budgets chosen so effort → budget → effort returns the same effort. */
const BUDGET = { minimal: 1024, low: 4096, medium: 12288, high: 32768 } as const;
export type Effort = keyof typeof BUDGET;

export function budgetForEffort(e: Effort): number {
  return BUDGET[e];
}

export function effortForBudget(b: number): Effort {
  if (b <= BUDGET.minimal) return 'minimal';
  if (b <= BUDGET.low) return 'low';
  if (b <= BUDGET.medium) return 'medium';
  return 'high';
}
