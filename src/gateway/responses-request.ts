/**
 * OpenAI Responses requests ⇄ IrRequest. Reasoning items hold provider blobs in
 * `encrypted_content`; a gateway carrier there (see carrier.ts) is unpacked to the reasoning of
 * the provider that really produced it. When a Responses upstream is stateless (store:false) it
 * returns encrypted reasoning only if asked: the encoder asks (`include`).
 */
import { z } from 'zod';
import { GatewayMemory, packCarrier, unpackCarrier } from './carrier';
import type { IrMessage, IrPart, IrReasoning, IrRequest, IrTool, IrToolChoice } from './ir';
import { argsObject, imageUrl, otherType, parseDataUrl, readWith } from './input';
import { budgetForEffort, effortForBudget } from './mapping';

const InText = z.looseObject({ type: z.enum(['input_text', 'output_text', 'text', 'refusal']), text: z.string().optional(), refusal: z.string().optional() });
const InImage = z.looseObject({ type: z.literal('input_image'), image_url: z.string().nullable().optional() });
const ContentList = z.array(z.union([InText, InImage, otherType(['input_text', 'output_text', 'text', 'refusal', 'input_image'])]));
const Item = z.union([
  z.looseObject({ type: z.literal('message').optional(), role: z.enum(['user', 'assistant', 'system', 'developer']), content: z.union([z.string(), ContentList]) }),
  z.looseObject({ type: z.literal('function_call'), id: z.string().optional(), call_id: z.string(), name: z.string(), arguments: z.string() }),
  z.looseObject({ type: z.literal('custom_tool_call'), id: z.string().optional(), call_id: z.string(), name: z.string(), input: z.string() }),
  z.looseObject({ type: z.enum(['function_call_output', 'custom_tool_call_output']), call_id: z.string(), output: z.union([z.string(), ContentList]) }),
  z.looseObject({
    type: z.literal('reasoning'),
    id: z.string().optional(),
    summary: z.array(z.looseObject({ text: z.string() })).optional(),
    content: z.array(z.looseObject({ text: z.string() })).nullable().optional(),
    encrypted_content: z.string().nullable().optional(),
  }),
  otherType(['message', 'function_call', 'custom_tool_call', 'function_call_output', 'custom_tool_call_output', 'reasoning']), // web_search_call, item_reference, …: nothing to translate
]);
export const ResponsesRequestSchema = z.looseObject({
  model: z.string(),
  instructions: z.string().nullable().optional(),
  input: z.union([z.string(), z.array(Item)]),
  tools: z.array(z.looseObject({ type: z.string(), name: z.string().optional(), description: z.string().nullable().optional(), parameters: z.record(z.string(), z.unknown()).nullable().optional() })).optional(),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.string(), name: z.string().optional() })]).optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().nullable().optional(),
  top_p: z.number().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  reasoning: z.looseObject({ effort: z.enum(['minimal', 'low', 'medium', 'high']).nullable().optional() }).nullable().optional(),
});

type Content = z.infer<typeof ContentList>;

function contentParts(c: string | Content): Extract<IrPart, { type: 'text' | 'image' }>[] {
  if (typeof c === 'string') return [{ type: 'text', text: c }];
  const out: Extract<IrPart, { type: 'text' | 'image' }>[] = [];
  for (const p of c as Record<string, unknown>[]) {
    if (p.type === 'input_image' && typeof p.image_url === 'string') {
      const d = parseDataUrl(p.image_url);
      out.push(d ? { type: 'image', ...d } : { type: 'image', url: p.image_url });
    } else if (typeof p.text === 'string') out.push({ type: 'text', text: p.text });
    else if (typeof p.refusal === 'string') out.push({ type: 'text', text: p.refusal });
  }
  return out;
}

const FREEFORM_PARAMS = { type: 'object', properties: { input: { type: 'string', description: 'the raw tool input' } }, required: ['input'] };

export function decodeResponsesRequest(body: unknown, memory?: GatewayMemory): IrRequest {
  const r = readWith(ResponsesRequestSchema, body, 'Responses request');
  const system = r.instructions ? [r.instructions] : [];
  const messages: IrMessage[] = [];
  const push = (role: IrMessage['role'], parts: IrPart[]) => {
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else messages.push({ role, parts });
  };
  const items = typeof r.input === 'string' ? [{ role: 'user' as const, content: r.input }] : r.input;
  for (const raw of items) {
    const it = raw as Record<string, unknown>;
    const type = (it.type as string | undefined) ?? 'message';
    if (type === 'message') {
      const role = it.role as string;
      const parts = contentParts(it.content as string | Content);
      if (role === 'system' || role === 'developer') system.push(parts.map((p) => (p.type === 'text' ? p.text : '')).join(''));
      else push(role as IrMessage['role'], parts);
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const callId = it.call_id as string;
      const sig = memory?.recall(GatewayMemory.keyOf([callId], ''))?.thoughtSignatures[callId];
      const args = type === 'function_call' ? (it.arguments as string) : JSON.stringify({ input: it.input });
      push('assistant', [{ type: 'tool_call', id: callId, name: it.name as string, args, ...(typeof it.id === 'string' ? { itemId: it.id } : {}), ...(sig ? { thoughtSignature: sig } : {}) }]);
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      push('user', [{ type: 'tool_result', callId: it.call_id as string, content: contentParts(it.output as string | Content) }]);
    } else if (type === 'reasoning') {
      const carried = unpackCarrier(it.encrypted_content as string | undefined);
      const summary = ((it.summary as { text: string }[] | undefined) ?? []).map((s) => s.text);
      const text = ((it.content as { text: string }[] | null | undefined) ?? []).map((s) => s.text).join('');
      const native: IrReasoning = { origin: 'responses', ...(typeof it.id === 'string' ? { itemId: it.id } : {}), summary, ...(text ? { text } : {}), ...(typeof it.encrypted_content === 'string' ? { encrypted: it.encrypted_content } : {}) };
      push('assistant', [{ type: 'reasoning', reasoning: carried ?? native }]);
    }
  }
  const tools: IrTool[] = [];
  for (const t of r.tools ?? []) {
    if (t.type === 'function' && t.name) tools.push({ name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters ?? { type: 'object', properties: {} } });
    else if (t.type === 'custom' && t.name) tools.push({ name: t.name, ...(t.description ? { description: t.description } : {}), parameters: FREEFORM_PARAMS, freeform: true });
    // hosted tools (web_search, file_search, …) run at OpenAI only
  }
  const tc = r.tool_choice;
  const toolChoice: IrToolChoice | undefined = tc === undefined ? undefined : typeof tc === 'string' ? { type: tc } : tc.name ? { type: 'tool', name: tc.name } : { type: 'auto' };
  const effort = r.reasoning?.effort ?? undefined;
  return {
    model: r.model,
    system,
    messages,
    tools,
    ...(toolChoice ? { toolChoice } : {}),
    ...(r.parallel_tool_calls != null ? { parallelToolCalls: r.parallel_tool_calls } : {}),
    ...(r.max_output_tokens != null ? { maxTokens: r.max_output_tokens } : {}),
    ...(r.temperature != null ? { temperature: r.temperature } : {}),
    ...(r.top_p != null ? { topP: r.top_p } : {}),
    stop: [],
    stream: r.stream === true,
    ...(effort ? { reasoning: { effort, budgetTokens: budgetForEffort(effort) } } : {}),
  };
}

/** The Responses form of reasoning: native when Responses-born, else a carrier in encrypted_content. */
export function reasoningItem(r: IrReasoning, fallbackId: string): Record<string, unknown> {
  if (r.origin === 'responses') {
    return { type: 'reasoning', id: r.itemId ?? fallbackId, summary: (r.summary ?? []).map((text) => ({ type: 'summary_text', text })), ...(r.encrypted ? { encrypted_content: r.encrypted } : {}) };
  }
  const text = r.text ?? (r.redacted !== undefined ? '[redacted thinking]' : '');
  return { type: 'reasoning', id: fallbackId, summary: text ? [{ type: 'summary_text', text }] : [], encrypted_content: packCarrier(r) };
}

/** IrRequest → a Responses body, stateless (store:false) with encrypted reasoning returned for the next turn. */
export function encodeResponsesRequest(ir: IrRequest): Record<string, unknown> {
  const freeform = new Set(ir.tools.filter((t) => t.freeform).map((t) => t.name));
  // the first system text is the instructions; later ones stay separate developer messages
  const input: Record<string, unknown>[] = ir.system.slice(1).map((text) => ({ type: 'message', role: 'developer', content: [{ type: 'input_text', text }] }));
  for (const m of ir.messages) {
    const content: Record<string, unknown>[] = [];
    const flush = () => {
      if (content.length > 0) input.push({ type: 'message', role: m.role, content: content.splice(0) });
    };
    for (const p of m.parts) {
      if (p.type === 'text') content.push({ type: m.role === 'user' ? 'input_text' : 'output_text', text: p.text });
      else if (p.type === 'image') content.push({ type: 'input_image', image_url: imageUrl(p) });
      else {
        flush(); // items keep their order: text, then the call it introduced
        if (p.type === 'tool_call') {
          if (freeform.has(p.name)) {
            const a = argsObject(p.args);
            input.push({ type: 'custom_tool_call', call_id: p.id, name: p.name, input: typeof a.input === 'string' ? a.input : p.args });
          } else input.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: p.args });
        } else if (p.type === 'tool_result') {
          const asText = p.content.every((c) => c.type === 'text');
          const output = asText ? p.content.map((c) => (c.type === 'text' ? c.text : '')).join('') : p.content.map((c) => (c.type === 'text' ? { type: 'input_text', text: c.text } : { type: 'input_image', image_url: imageUrl(c) }));
          input.push({ type: 'function_call_output', call_id: p.callId, output });
        } else if (p.reasoning.origin === 'responses' && p.reasoning.itemId) input.push(reasoningItem(p.reasoning, p.reasoning.itemId));
        // other providers' reasoning cannot be replayed into OpenAI's encrypted state, and an item without id cannot be referenced: dropped
      }
    }
    flush();
  }
  const tc = ir.toolChoice;
  const effort = ir.reasoning?.effort ?? (ir.reasoning?.budgetTokens !== undefined ? effortForBudget(ir.reasoning.budgetTokens) : undefined);
  return {
    model: ir.model,
    ...(ir.system.length > 0 ? { instructions: ir.system[0] } : {}),
    input,
    ...(ir.tools.length > 0
      ? { tools: ir.tools.map((t) => (t.freeform ? { type: 'custom', name: t.name, ...(t.description ? { description: t.description } : {}) } : { type: 'function', name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters })) }
      : {}),
    ...(tc ? { tool_choice: tc.type === 'tool' ? { type: freeform.has(tc.name) ? 'custom' : 'function', name: tc.name } : tc.type } : {}),
    ...(ir.parallelToolCalls !== undefined ? { parallel_tool_calls: ir.parallelToolCalls } : {}),
    ...(ir.maxTokens !== undefined ? { max_output_tokens: ir.maxTokens } : {}),
    // OpenAI's reasoning models reject sampling parameters; an agent asking for reasoning gets none sent
    ...(ir.temperature !== undefined && !effort ? { temperature: ir.temperature } : {}),
    ...(ir.topP !== undefined && !effort ? { top_p: ir.topP } : {}),
    ...(effort ? { reasoning: { effort, summary: 'auto' } } : {}),
    store: false,
    include: ['reasoning.encrypted_content'],
    ...(ir.stream ? { stream: true } : {}),
  };
}
