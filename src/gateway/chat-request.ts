/**
 * OpenAI Chat Completions requests ⇄ IrRequest. Chat holds reasoning only as plain
 * `reasoning_content` text (DeepSeek, Kimi) and Gemini's thought signature on a tool call
 * (`extra_content.google.thought_signature`); signatures and encrypted reasoning of other providers
 * are restored from the GatewayMemory by the turn's first tool-call id (see carrier.ts).
 */
import { z } from 'zod';
import { GatewayMemory } from './carrier';
import type { IrMessage, IrPart, IrRequest, IrToolChoice } from './ir';
import { imageUrl, otherType, parseDataUrl, readWith } from './input';
import { budgetForEffort, effortForBudget } from './mapping';

const TextPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImagePart = z.looseObject({ type: z.literal('image_url'), image_url: z.union([z.string(), z.looseObject({ url: z.string() })]) });
const Content = z.union([z.string(), z.null(), z.array(z.union([TextPart, ImagePart, otherType(['text', 'image_url'])]))]);
const ToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string().optional() }),
  extra_content: z.looseObject({ google: z.looseObject({ thought_signature: z.string().optional() }).optional() }).optional(),
});
const Message = z.union([
  z.looseObject({ role: z.enum(['system', 'developer']), content: Content }),
  z.looseObject({ role: z.literal('user'), content: Content }),
  z.looseObject({ role: z.literal('assistant'), content: Content.optional(), reasoning_content: z.string().nullable().optional(), tool_calls: z.array(ToolCall).nullable().optional() }),
  z.looseObject({ role: z.literal('tool'), tool_call_id: z.string(), content: Content }),
]);
export const ChatRequestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(Message),
  tools: z.array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string(), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }) })).optional(),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) })]).optional(),
  parallel_tool_calls: z.boolean().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().nullable().optional(),
  top_p: z.number().nullable().optional(),
  stop: z.union([z.string(), z.array(z.string())]).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  reasoning_effort: z.enum(['minimal', 'low', 'medium', 'high']).nullable().optional(),
});

type ContentT = z.infer<typeof Content>;

function contentParts(c: ContentT | undefined): IrPart[] {
  if (c === null || c === undefined) return [];
  if (typeof c === 'string') return c === '' ? [] : [{ type: 'text', text: c }];
  const out: IrPart[] = [];
  for (const p of c as Record<string, unknown>[]) {
    if (p.type === 'text') out.push({ type: 'text', text: p.text as string });
    else if (p.type === 'image_url') {
      const url = typeof p.image_url === 'string' ? p.image_url : (p.image_url as { url: string }).url;
      const d = parseDataUrl(url);
      out.push(d ? { type: 'image', ...d } : { type: 'image', url });
    }
  }
  return out;
}

const textOf = (parts: IrPart[]): string => parts.map((p) => (p.type === 'text' ? p.text : '')).join('');

export function decodeChatRequest(body: unknown, memory?: GatewayMemory): IrRequest {
  const r = readWith(ChatRequestSchema, body, 'Chat Completions request');
  const system: string[] = [];
  const messages: IrMessage[] = [];
  const push = (role: IrMessage['role'], parts: IrPart[]) => {
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else messages.push({ role, parts });
  };
  for (const m of r.messages) {
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(contentParts(m.content)));
    else if (m.role === 'user') push('user', contentParts(m.content));
    else if (m.role === 'tool') {
      const content = contentParts(m.content).filter((p): p is Extract<IrPart, { type: 'text' | 'image' }> => p.type === 'text' || p.type === 'image');
      push('user', [{ type: 'tool_result', callId: (m as { tool_call_id: string }).tool_call_id, content }]);
    } else {
      const a = m as { content?: ContentT; reasoning_content?: string | null; tool_calls?: z.infer<typeof ToolCall>[] | null };
      const text = contentParts(a.content);
      const calls = a.tool_calls ?? [];
      const carried = memory?.recall(GatewayMemory.keyOf(calls.map((c) => c.id), textOf(text)));
      const parts: IrPart[] = [];
      // what the memory holds is the turn's full reasoning, the plain reasoning_content included
      if (carried && carried.reasoning.length > 0) parts.push(...carried.reasoning.map((reasoning) => ({ type: 'reasoning' as const, reasoning })));
      else if (a.reasoning_content) parts.push({ type: 'reasoning', reasoning: { origin: 'chat', text: a.reasoning_content } });
      parts.push(...text);
      for (const c of calls) {
        const sig = c.extra_content?.google?.thought_signature ?? carried?.thoughtSignatures[c.id];
        parts.push({ type: 'tool_call', id: c.id, name: c.function.name, args: c.function.arguments ?? '', ...(sig ? { thoughtSignature: sig } : {}) });
      }
      push('assistant', parts);
    }
  }
  const tc = r.tool_choice;
  const toolChoice: IrToolChoice | undefined = tc === undefined ? undefined : typeof tc === 'string' ? { type: tc } : { type: 'tool', name: tc.function.name };
  const maxTokens = r.max_completion_tokens ?? r.max_tokens ?? undefined;
  return {
    model: r.model,
    system,
    messages,
    tools: (r.tools ?? []).filter((t) => t.type === 'function').map((t) => ({ name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), parameters: t.function.parameters ?? { type: 'object', properties: {} } })),
    ...(toolChoice ? { toolChoice } : {}),
    ...(r.parallel_tool_calls != null ? { parallelToolCalls: r.parallel_tool_calls } : {}),
    ...(maxTokens != null ? { maxTokens } : {}),
    ...(r.temperature != null ? { temperature: r.temperature } : {}),
    ...(r.top_p != null ? { topP: r.top_p } : {}),
    stop: r.stop == null ? [] : typeof r.stop === 'string' ? [r.stop] : r.stop,
    stream: r.stream === true,
    ...(r.reasoning_effort ? { reasoning: { effort: r.reasoning_effort, budgetTokens: budgetForEffort(r.reasoning_effort) } } : {}),
  };
}

export interface ChatEncodeOptions {
  /** use max_completion_tokens (OpenAI's current name) rather than max_tokens (what most compatible servers read) */
  maxCompletionTokens?: boolean;
  /**
   * Gemini rejects a replayed function call without its thought signature; for calls whose
   * signature is unknown (another provider's turn, a lost memory) Google documents the value
   * `skip_thought_signature_validator`. Set for Gemini upstreams.
   */
  geminiSkipSignature?: boolean;
}

/** IrRequest → a Chat Completions body (stream_options.include_usage always on when streaming: metering needs it). */
export function encodeChatRequest(ir: IrRequest, opts: ChatEncodeOptions = {}): Record<string, unknown> {
  const messages: Record<string, unknown>[] = ir.system.map((content) => ({ role: 'system', content }));
  for (const m of ir.messages) {
    if (m.role === 'assistant') {
      const text = m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
      // only chat-born reasoning goes back as reasoning_content; others' signatures mean nothing here
      const reasoning = m.parts.flatMap((p) => (p.type === 'reasoning' && p.reasoning.origin === 'chat' && p.reasoning.text ? [p.reasoning.text] : [])).join('');
      const calls = m.parts.flatMap((p) => (p.type === 'tool_call' ? [p] : [])).map((p, i) => {
        // Gemini signs the first call of a turn only
        const sig = p.thoughtSignature ?? (opts.geminiSkipSignature && i === 0 ? 'skip_thought_signature_validator' : undefined);
        return { id: p.id, type: 'function', function: { name: p.name, arguments: p.args }, ...(sig ? { extra_content: { google: { thought_signature: sig } } } : {}) };
      });
      messages.push({ role: 'assistant', content: text === '' && calls.length > 0 ? null : text, ...(reasoning ? { reasoning_content: reasoning } : {}), ...(calls.length > 0 ? { tool_calls: calls } : {}) });
      continue;
    }
    // tool results first (they must follow the assistant turn directly), then the user's own content
    const images: Record<string, unknown>[] = [];
    for (const p of m.parts) {
      if (p.type !== 'tool_result') continue;
      messages.push({ role: 'tool', tool_call_id: p.callId, content: (p.isError ? 'Error: ' : '') + p.content.map((c) => (c.type === 'text' ? c.text : '')).join('') });
      // tool messages carry text only: images a tool returned follow as a user message
      for (const c of p.content) if (c.type === 'image') images.push({ type: 'image_url', image_url: { url: imageUrl(c) } });
    }
    const own = m.parts.flatMap((p): Record<string, unknown>[] => (p.type === 'text' ? [{ type: 'text', text: p.text }] : p.type === 'image' ? [{ type: 'image_url', image_url: { url: imageUrl(p) } }] : []));
    const content = [...images, ...own];
    if (content.length === 0) continue;
    messages.push({ role: 'user', content: content.length === 1 && content[0].type === 'text' ? content[0].text : content });
  }
  const tc = ir.toolChoice;
  const effort = ir.reasoning?.effort ?? (ir.reasoning?.budgetTokens !== undefined ? effortForBudget(ir.reasoning.budgetTokens) : undefined);
  return {
    model: ir.model,
    messages,
    ...(ir.tools.length > 0 ? { tools: ir.tools.map((t) => ({ type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters } })) } : {}),
    ...(tc ? { tool_choice: tc.type === 'tool' ? { type: 'function', function: { name: tc.name } } : tc.type } : {}),
    ...(ir.parallelToolCalls !== undefined && ir.tools.length > 0 ? { parallel_tool_calls: ir.parallelToolCalls } : {}),
    ...(ir.maxTokens !== undefined ? { [opts.maxCompletionTokens ? 'max_completion_tokens' : 'max_tokens']: ir.maxTokens } : {}),
    ...(ir.temperature !== undefined ? { temperature: ir.temperature } : {}),
    ...(ir.topP !== undefined ? { top_p: ir.topP } : {}),
    ...(ir.stop.length > 0 ? { stop: ir.stop } : {}),
    ...(effort ? { reasoning_effort: effort } : {}),
    ...(ir.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}
