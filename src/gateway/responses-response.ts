/**
 * OpenAI Responses responses (non-streaming) ⇄ IrResponse, and the output-item form shared with
 * the stream encoder.
 */
import { z } from 'zod';
import { unpackCarrier } from './carrier';
import type { AgentContext } from './context';
import type { IrPart, IrResponse } from './ir';
import { argsObject, readWith } from './input';
import { stopFromResponses, stopToResponses, usageFromResponses, usageToResponses } from './mapping';
import { rememberThoughtSignature } from './anthropic-response';
import { reasoningItem } from './responses-request';

export const ResponsesResponseSchema = z.looseObject({
  id: z.string(),
  model: z.string(),
  status: z.string().optional(),
  output: z.array(z.looseObject({ type: z.string() })),
  incomplete_details: z.looseObject({ reason: z.string().optional() }).nullable().optional(),
  usage: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** One output item as IR parts (a message may hold several text parts). */
export function partsOfItem(it: Record<string, unknown>): IrPart[] {
  if (it.type === 'message') {
    return ((it.content as Record<string, unknown>[] | undefined) ?? []).flatMap((c) =>
      typeof c.text === 'string' ? [{ type: 'text' as const, text: c.text }] : typeof c.refusal === 'string' ? [{ type: 'text' as const, text: c.refusal }] : [],
    );
  }
  if (it.type === 'function_call') return [{ type: 'tool_call', id: String(it.call_id), name: String(it.name), args: String(it.arguments ?? ''), ...(typeof it.id === 'string' ? { itemId: it.id } : {}) }];
  if (it.type === 'custom_tool_call') return [{ type: 'tool_call', id: String(it.call_id), name: String(it.name), args: JSON.stringify({ input: it.input ?? '' }), ...(typeof it.id === 'string' ? { itemId: it.id } : {}) }];
  if (it.type === 'reasoning') {
    const carried = unpackCarrier(it.encrypted_content as string | undefined);
    if (carried) return [{ type: 'reasoning', reasoning: carried }];
    const summary = ((it.summary as { text: string }[] | undefined) ?? []).map((s) => s.text);
    const text = ((it.content as { text: string }[] | null | undefined) ?? []).map((s) => s.text).join('');
    return [{ type: 'reasoning', reasoning: { origin: 'responses', ...(typeof it.id === 'string' ? { itemId: it.id } : {}), summary, ...(text ? { text } : {}), ...(typeof it.encrypted_content === 'string' ? { encrypted: it.encrypted_content } : {}) } }];
  }
  return [];
}

export function decodeResponsesResponse(body: unknown): IrResponse {
  const r = readWith(ResponsesResponseSchema, body, 'Responses response');
  const parts = (r.output as Record<string, unknown>[]).flatMap(partsOfItem);
  const stop = stopFromResponses(r.status, r.incomplete_details?.reason, parts.some((p) => p.type === 'tool_call'));
  return { id: r.id, model: r.model, parts, stop, usage: usageFromResponses(r.usage) };
}

let counter = 0;
/** Item ids for items the upstream did not name (ids only have to be unique within the conversation). */
export const itemId = (prefix: string): string => `${prefix}_sbgw${Date.now().toString(36)}${(counter++).toString(36)}`;

/** A tool call as a Responses output item (custom tools as custom_tool_call with their raw input). */
export function callItem(p: Extract<IrPart, { type: 'tool_call' }>, ctx: AgentContext, id: string, status = 'completed'): Record<string, unknown> {
  if (ctx.freeformTools?.includes(p.name)) {
    const a = argsObject(p.args);
    return { type: 'custom_tool_call', id, call_id: p.id, name: p.name, input: typeof a.input === 'string' ? a.input : p.args, status };
  }
  return { type: 'function_call', id, call_id: p.id, name: p.name, arguments: p.args, status };
}

export function encodeResponsesOutput(parts: IrPart[], ctx: AgentContext): Record<string, unknown>[] {
  const output: Record<string, unknown>[] = [];
  for (const p of parts) {
    if (p.type === 'text') output.push({ type: 'message', id: itemId('msg'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: p.text, annotations: [] }] });
    else if (p.type === 'reasoning') output.push(reasoningItem(p.reasoning, itemId('rs')));
    else if (p.type === 'tool_call') {
      rememberThoughtSignature(ctx, p.id, p.thoughtSignature);
      output.push(callItem(p, ctx, p.itemId ?? itemId('fc')));
    }
  }
  return output;
}

export function encodeResponsesResponse(ir: IrResponse, ctx: AgentContext = {}): Record<string, unknown> {
  const { status, incomplete_details } = stopToResponses(ir.stop);
  return { id: ir.id, object: 'response', created_at: Math.floor(Date.now() / 1000), status, incomplete_details, model: ir.model, output: encodeResponsesOutput(ir.parts, ctx), usage: usageToResponses(ir.usage) };
}
