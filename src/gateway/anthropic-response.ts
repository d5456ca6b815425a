/**
 * Anthropic Messages responses (non-streaming) ⇄ IrResponse, and the block form shared with the
 * stream encoder: reasoning from another provider becomes a thinking block whose signature is a
 * gateway carrier, which Claude Code keeps and sends back verbatim.
 */
import { z } from 'zod';
import { GatewayMemory, packCarrier, unpackCarrier } from './carrier';
import type { AgentContext } from './context';
import type { IrPart, IrReasoning, IrResponse } from './ir';
import { argsObject, readWith } from './input';
import { stopFromAnthropic, stopToAnthropic, usageFromAnthropic, usageToAnthropic } from './mapping';

export const AnthropicResponseSchema = z.looseObject({
  id: z.string(),
  model: z.string(),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullable().optional(),
  usage: z.record(z.string(), z.unknown()).optional(),
});

export function decodeAnthropicResponse(body: unknown): IrResponse {
  const r = readWith(AnthropicResponseSchema, body, 'Anthropic Messages response');
  const parts: IrPart[] = [];
  for (const b of r.content as Record<string, unknown>[]) {
    if (b.type === 'text') parts.push({ type: 'text', text: String(b.text ?? '') });
    else if (b.type === 'tool_use') parts.push({ type: 'tool_call', id: String(b.id), name: String(b.name), args: JSON.stringify(b.input ?? {}) });
    else if (b.type === 'thinking') parts.push({ type: 'reasoning', reasoning: unpackCarrier(b.signature as string) ?? { origin: 'anthropic', text: String(b.thinking ?? ''), signature: String(b.signature ?? '') } });
    else if (b.type === 'redacted_thinking') parts.push({ type: 'reasoning', reasoning: { origin: 'anthropic', redacted: String(b.data ?? '') } });
  }
  return { id: r.id, model: r.model, parts, stop: stopFromAnthropic(r.stop_reason), usage: usageFromAnthropic(r.usage) };
}

/** The thinking block an agent on Anthropic gets for a piece of reasoning. */
export function thinkingBlock(r: IrReasoning): Record<string, unknown> {
  if (r.origin === 'anthropic') return r.redacted !== undefined ? { type: 'redacted_thinking', data: r.redacted } : { type: 'thinking', thinking: r.text ?? '', signature: r.signature ?? '' };
  return { type: 'thinking', thinking: visibleText(r), signature: packCarrier(r) };
}

/** What a human (or the agent's transcript) can read of some reasoning. */
export function visibleText(r: IrReasoning): string {
  return r.text ?? (r.summary ?? []).join('\n\n');
}

/** Tool calls' Gemini thought signatures have no place in Anthropic/Responses tool calls: remembered by id. */
export function rememberThoughtSignature(ctx: AgentContext, id: string, sig: string | undefined): void {
  if (sig && ctx.memory) ctx.memory.remember(GatewayMemory.keyOf([id], ''), { reasoning: [], thoughtSignatures: { [id]: sig } });
}

export function encodeAnthropicResponse(ir: IrResponse, ctx: AgentContext = {}): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  for (const p of ir.parts) {
    if (p.type === 'text') content.push({ type: 'text', text: p.text });
    else if (p.type === 'reasoning') content.push(thinkingBlock(p.reasoning));
    else if (p.type === 'tool_call') {
      rememberThoughtSignature(ctx, p.id, p.thoughtSignature);
      content.push({ type: 'tool_use', id: p.id, name: p.name, input: argsObject(p.args) });
    }
  }
  return { id: ir.id, type: 'message', role: 'assistant', model: ir.model, content, stop_reason: stopToAnthropic(ir.stop), stop_sequence: null, usage: usageToAnthropic(ir.usage) };
}
