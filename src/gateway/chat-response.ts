/**
 * Chat Completions responses (non-streaming) ⇄ IrResponse. Towards a Chat agent, reasoning of
 * another provider is shown as reasoning_content and its signature/blob kept in the GatewayMemory
 * under the turn's key (first tool-call id, else the text's hash), see carrier.ts.
 */
import { z } from 'zod';
import { GatewayMemory } from './carrier';
import type { AgentContext } from './context';
import type { IrPart, IrResponse } from './ir';
import { readWith } from './input';
import { stopFromChat, stopToChat, usageFromChat, usageToChat } from './mapping';
import { visibleText } from './anthropic-response';

const ToolCall = z.looseObject({
  id: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.string().optional() }),
  extra_content: z.looseObject({ google: z.looseObject({ thought_signature: z.string().optional() }).optional() }).optional(),
});
export const ChatResponseSchema = z.looseObject({
  id: z.string(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      message: z.looseObject({ content: z.string().nullable().optional(), reasoning_content: z.string().nullable().optional(), tool_calls: z.array(ToolCall).nullable().optional() }),
      finish_reason: z.string().nullable().optional(),
    }),
  ).min(1),
  usage: z.record(z.string(), z.unknown()).nullable().optional(),
});

export function decodeChatResponse(body: unknown): IrResponse {
  const r = readWith(ChatResponseSchema, body, 'Chat Completions response');
  const c = r.choices[0];
  const parts: IrPart[] = [];
  if (c.message.reasoning_content) parts.push({ type: 'reasoning', reasoning: { origin: 'chat', text: c.message.reasoning_content } });
  if (c.message.content) parts.push({ type: 'text', text: c.message.content });
  for (const t of c.message.tool_calls ?? []) {
    const sig = t.extra_content?.google?.thought_signature;
    parts.push({ type: 'tool_call', id: t.id, name: t.function.name, args: t.function.arguments ?? '', ...(sig ? { thoughtSignature: sig } : {}) });
  }
  return { id: r.id, model: r.model, parts, stop: stopFromChat(c.finish_reason), usage: usageFromChat(r.usage) };
}

/** Keep a Chat agent's turn's foreign reasoning for when the agent sends the turn back. */
export function rememberChatTurn(ctx: AgentContext, parts: IrPart[]): void {
  if (!ctx.memory) return;
  const reasoning = parts.flatMap((p) => (p.type === 'reasoning' ? [p.reasoning] : []));
  const ids = parts.flatMap((p) => (p.type === 'tool_call' ? [p.id] : []));
  const text = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  if (!reasoning.some((r) => r.origin !== 'chat')) return; // reasoning_content alone round-trips by itself
  ctx.memory.remember(GatewayMemory.keyOf(ids, text), { reasoning, thoughtSignatures: {} });
}

export function encodeChatResponse(ir: IrResponse, ctx: AgentContext = {}): Record<string, unknown> {
  rememberChatTurn(ctx, ir.parts);
  const text = ir.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  const reasoning = ir.parts.flatMap((p) => (p.type === 'reasoning' ? [visibleText(p.reasoning)] : [])).join('');
  const calls = ir.parts.flatMap((p) =>
    p.type === 'tool_call' ? [{ id: p.id, type: 'function', function: { name: p.name, arguments: p.args }, ...(p.thoughtSignature ? { extra_content: { google: { thought_signature: p.thoughtSignature } } } : {}) }] : [],
  );
  const message = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text, ...(reasoning ? { reasoning_content: reasoning } : {}), ...(calls.length > 0 ? { tool_calls: calls } : {}) };
  return { id: ir.id, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: ir.model, choices: [{ index: 0, message, finish_reason: stopToChat(ir.stop) }], usage: usageToChat(ir.usage) };
}
