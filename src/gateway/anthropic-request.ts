/**
 * Anthropic Messages requests ⇄ IrRequest. Thinking blocks whose signature is a gateway carrier
 * are unpacked to the reasoning they carry; on the way out only Anthropic-born reasoning is sent
 * (Anthropic verifies signatures, so anything else would be rejected).
 */
import { z } from 'zod';
import { GatewayMemory, unpackCarrier } from './carrier';
import type { IrImage, IrMessage, IrPart, IrRequest, IrTool, IrToolChoice } from './ir';
import { argsObject, otherType, readWith } from './input';
import { budgetForEffort, effortForBudget } from './mapping';

const Source = z.union([
  z.object({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.object({ type: z.literal('url'), url: z.string() }),
]);
const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageBlock = z.looseObject({ type: z.literal('image'), source: Source });
const Block = z.union([
  TextBlock,
  ImageBlock,
  z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
  z.looseObject({
    type: z.literal('tool_result'),
    tool_use_id: z.string(),
    content: z.union([z.string(), z.array(z.union([TextBlock, ImageBlock, otherType(['text', 'image'])]))]).optional(),
    is_error: z.boolean().optional(),
  }),
  z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() }),
  z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() }),
  // documents, server tool results, …: no counterpart in the OpenAI protocols; dropped on decode
  otherType(['text', 'image', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']),
]);
const Message = z.looseObject({ role: z.enum(['user', 'assistant', 'system']), content: z.union([z.string(), z.array(Block)]) });
export const AnthropicRequestSchema = z.looseObject({
  model: z.string(),
  system: z.union([z.string(), z.array(TextBlock)]).optional(),
  messages: z.array(Message),
  tools: z.array(z.looseObject({ name: z.string(), description: z.string().optional(), input_schema: z.record(z.string(), z.unknown()).optional(), type: z.string().optional() })).optional(),
  tool_choice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']), name: z.string().optional(), disable_parallel_tool_use: z.boolean().optional() }).optional(),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  thinking: z.looseObject({ type: z.string(), budget_tokens: z.number().optional() }).optional(),
});

type Img = z.infer<typeof ImageBlock>;
const image = (b: Img): IrImage => (b.source.type === 'base64' ? { type: 'image', mediaType: b.source.media_type, data: b.source.data } : { type: 'image', url: b.source.url });

export function decodeAnthropicRequest(body: unknown, memory?: GatewayMemory): IrRequest {
  const r = readWith(AnthropicRequestSchema, body, 'Anthropic Messages request');
  const system = typeof r.system === 'string' ? [r.system] : (r.system ?? []).map((b) => b.text);
  const messages: IrMessage[] = [];
  for (const m of r.messages) {
    const blocks = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
    if (m.role === 'system') {
      // Claude Code sometimes puts role:"system" entries inside messages; they are system text
      for (const b of blocks) if (b.type === 'text') system.push((b as { text: string }).text);
      continue;
    }
    const parts: IrPart[] = [];
    for (const raw of blocks) {
      const b = raw as Record<string, unknown> & { type: string };
      if (b.type === 'text') parts.push({ type: 'text', text: b.text as string });
      else if (b.type === 'image') parts.push(image(b as unknown as Img));
      else if (b.type === 'tool_use') {
        const id = b.id as string;
        const sig = memory?.recall(GatewayMemory.keyOf([id], ''))?.thoughtSignatures[id];
        parts.push({ type: 'tool_call', id, name: b.name as string, args: JSON.stringify(b.input ?? {}), ...(sig ? { thoughtSignature: sig } : {}) });
      } else if (b.type === 'tool_result') {
        const c = b.content as string | (z.infer<typeof TextBlock> | Img)[] | undefined;
        const content = typeof c === 'string' ? [{ type: 'text' as const, text: c }] : (c ?? []).flatMap((x): ({ type: 'text'; text: string } | IrImage)[] => (x.type === 'text' ? [{ type: 'text', text: (x as { text: string }).text }] : x.type === 'image' ? [image(x as Img)] : []));
        parts.push({ type: 'tool_result', callId: b.tool_use_id as string, content, ...(b.is_error === true ? { isError: true } : {}) });
      } else if (b.type === 'thinking') {
        const carried = unpackCarrier(b.signature as string | undefined);
        parts.push({ type: 'reasoning', reasoning: carried ?? { origin: 'anthropic', text: b.thinking as string, signature: b.signature as string | undefined } });
      } else if (b.type === 'redacted_thinking') parts.push({ type: 'reasoning', reasoning: { origin: 'anthropic', redacted: b.data as string } });
    }
    const last = messages[messages.length - 1];
    if (last && last.role === m.role) last.parts.push(...parts);
    else messages.push({ role: m.role, parts });
  }
  const tools: IrTool[] = (r.tools ?? [])
    .filter((t) => t.type === undefined || t.type === 'custom') // server tools (web_search_…) run at Anthropic only
    .map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema ?? { type: 'object', properties: {} } }));
  const tc = r.tool_choice;
  const toolChoice: IrToolChoice | undefined = tc === undefined ? undefined : tc.type === 'any' ? { type: 'required' } : tc.type === 'tool' ? { type: 'tool', name: tc.name ?? '' } : { type: tc.type };
  const budget = r.thinking?.type === 'enabled' ? r.thinking.budget_tokens : undefined;
  return {
    model: r.model,
    system,
    messages,
    tools,
    ...(toolChoice ? { toolChoice } : {}),
    ...(tc?.disable_parallel_tool_use !== undefined ? { parallelToolCalls: !tc.disable_parallel_tool_use } : {}),
    ...(r.max_tokens !== undefined ? { maxTokens: r.max_tokens } : {}),
    ...(r.temperature !== undefined ? { temperature: r.temperature } : {}),
    ...(r.top_p !== undefined ? { topP: r.top_p } : {}),
    stop: r.stop_sequences ?? [],
    stream: r.stream === true,
    ...(budget !== undefined ? { reasoning: { budgetTokens: budget, effort: effortForBudget(budget) } } : r.thinking?.type === 'adaptive' ? { reasoning: { effort: 'medium' } } : {}),
  };
}

function encodeImage(p: IrImage): Record<string, unknown> {
  return { type: 'image', source: 'url' in p ? { type: 'url', url: p.url } : { type: 'base64', media_type: p.mediaType, data: p.data } };
}

function encodePart(p: IrPart): Record<string, unknown> | undefined {
  switch (p.type) {
    case 'text':
      return { type: 'text', text: p.text };
    case 'image':
      return encodeImage(p);
    case 'tool_call':
      return { type: 'tool_use', id: p.id, name: p.name, input: argsObject(p.args) };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: p.callId,
        content: p.content.map((c) => (c.type === 'text' ? { type: 'text', text: c.text } : encodeImage(c))),
        ...(p.isError ? { is_error: true } : {}),
      };
    case 'reasoning': {
      const r = p.reasoning;
      if (r.origin !== 'anthropic') return undefined; // another provider's reasoning cannot be verified here
      if (r.redacted !== undefined) return { type: 'redacted_thinking', data: r.redacted };
      return { type: 'thinking', thinking: r.text ?? '', signature: r.signature ?? '' };
    }
  }
}

/** IrRequest → an Anthropic Messages body. `defaultMaxTokens` fills the field Anthropic requires. */
export function encodeAnthropicRequest(ir: IrRequest, defaultMaxTokens = 32000): Record<string, unknown> {
  const messages = ir.messages
    .map((m) => ({ role: m.role, content: m.parts.map(encodePart).filter((b): b is Record<string, unknown> => b !== undefined) }))
    .filter((m) => m.content.length > 0);
  const tc = ir.toolChoice;
  // Anthropic says "parallel" only inside tool_choice; an agent's parallel flag without a choice means auto
  const tcx = tc ?? (ir.parallelToolCalls !== undefined && ir.tools.length > 0 ? { type: 'auto' as const } : undefined);
  const choice =
    tcx === undefined
      ? undefined
      : { type: tcx.type === 'required' ? 'any' : tcx.type, ...(tcx.type === 'tool' ? { name: tcx.name } : {}), ...(ir.parallelToolCalls !== undefined && tcx.type !== 'none' ? { disable_parallel_tool_use: !ir.parallelToolCalls } : {}) };
  const asked = ir.reasoning?.budgetTokens ?? (ir.reasoning?.effort ? budgetForEffort(ir.reasoning.effort) : undefined);
  // With thinking on, Anthropic requires the last assistant turn of a tool loop to open with its
  // thinking block; when that was lost (another provider's turn, a gateway restart) thinking is
  // switched off for this request rather than have it rejected.
  const last = messages[messages.length - 1];
  const prev = messages[messages.length - 2];
  const inToolLoop = last?.role === 'user' && last.content.every((b) => b.type === 'tool_result') && prev?.role === 'assistant';
  const lostThinking = inToolLoop && prev.content.some((b) => b.type === 'tool_use') && !['thinking', 'redacted_thinking'].includes(String(prev.content[0]?.type));
  const budget = lostThinking ? undefined : asked;
  const maxTokens = ir.maxTokens ?? defaultMaxTokens;
  return {
    model: ir.model,
    ...(ir.system.length > 0 ? { system: ir.system.map((text) => ({ type: 'text', text })) } : {}),
    messages,
    ...(ir.tools.length > 0 ? { tools: ir.tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: t.parameters })) } : {}),
    ...(choice ? { tool_choice: choice } : {}),
    // Anthropic requires budget < max_tokens; keep the agent's max_tokens and shrink the budget
    max_tokens: maxTokens,
    ...(budget !== undefined ? { thinking: { type: 'enabled', budget_tokens: Math.max(1024, Math.min(budget, maxTokens - 1)) } } : {}),
    ...(ir.temperature !== undefined && budget === undefined ? { temperature: ir.temperature } : {}),
    ...(ir.topP !== undefined ? { top_p: ir.topP } : {}),
    ...(ir.stop.length > 0 ? { stop_sequences: ir.stop } : {}),
    ...(ir.stream ? { stream: true } : {}),
  };
}
