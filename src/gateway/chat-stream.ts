/**
 * Chat Completions streams. Chat chunks have no block boundaries: the decoder opens a block when
 * the kind of delta changes (reasoning_content → content → tool_calls[i]) and closes it on the next
 * change, so the IR (and an Anthropic agent) sees well-formed blocks. Usage arrives in a last chunk
 * with empty choices (stream_options.include_usage), after finish_reason, so the finish is emitted
 * on `data: [DONE]` (or at the end of the stream when a server omits it).
 */
import type { AgentContext } from './context';
import { errorBody, kindOfType } from './errors';
import type { IrEvent, IrPart, IrStop } from './ir';
import { stopFromChat, stopToChat, usageFromChat, usageToChat } from './mapping';
import { rememberChatTurn } from './chat-response';
import { visibleText } from './anthropic-response';
import { sseFrame, type SseEvent } from './sse';
import { jsonData, type StreamDecoder, type StreamEncoder } from './stream-types';

type Open = { kind: 'text' } | { kind: 'reasoning'; text: string } | { kind: 'tool_call'; index: number; id: string; name: string; args: string; sig?: string };

export class ChatStreamDecoder implements StreamDecoder {
  private started = false;
  private open: Open | undefined;
  /** tool-call index → its id: a new id on a known index is a new call (some servers send every call at index 0) */
  private seenTools = new Map<number, string>();
  private usage: Record<string, unknown> | undefined;
  private stop: IrStop = 'end';
  private done = false;

  push(ev: SseEvent): IrEvent[] {
    if (this.done) return [];
    if (ev.data.trim() === '[DONE]') return this.end();
    const d = jsonData(ev);
    if (!d) return [];
    const out: IrEvent[] = [];
    if (d.error && typeof d.error === 'object') {
      const e = d.error as Record<string, unknown>;
      this.done = true;
      return [{ type: 'error', error: { kind: kindOfType(e.code as string) ?? kindOfType(e.type as string) ?? 'server', message: String(e.message ?? 'upstream error') } }];
    }
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: String(d.id ?? ''), model: String(d.model ?? '') });
    }
    if (d.usage && typeof d.usage === 'object') this.usage = d.usage as Record<string, unknown>;
    const choice = (Array.isArray(d.choices) ? d.choices[0] : undefined) as Record<string, unknown> | undefined;
    if (!choice) return out;
    const delta = (choice.delta ?? {}) as Record<string, unknown>;
    // DeepSeek/Kimi say reasoning_content; vLLM and OpenRouter say reasoning
    const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
    if (reasoning !== '') {
      if (this.open?.kind !== 'reasoning') out.push(...this.close(), ...this.openBlock({ kind: 'reasoning', text: '' }));
      (this.open as { text: string }).text += reasoning;
      out.push({ type: 'reasoning', text: reasoning });
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      if (this.open?.kind !== 'text') out.push(...this.close(), ...this.openBlock({ kind: 'text' }));
      out.push({ type: 'text', text: delta.content });
    }
    for (const raw of Array.isArray(delta.tool_calls) ? (delta.tool_calls as Record<string, unknown>[]) : []) {
      const index = typeof raw.index === 'number' ? raw.index : 0;
      const fn = (raw.function ?? {}) as Record<string, unknown>;
      const sig = ((raw.extra_content as Record<string, Record<string, unknown>> | undefined)?.google?.thought_signature as string | undefined) ?? undefined;
      const known = this.seenTools.get(index);
      if (known === undefined || (typeof raw.id === 'string' && raw.id !== '' && raw.id !== known)) {
        const id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : `call_${index}`;
        this.seenTools.set(index, id);
        out.push(...this.close(), ...this.openBlock({ kind: 'tool_call', index, id, name: String(fn.name ?? ''), args: '', ...(sig ? { sig } : {}) }));
      }
      const o = this.open;
      // arguments of a call whose block is closed (interleaved calls) cannot be placed in a sequential stream
      if (o?.kind !== 'tool_call' || o.index !== index) continue;
      if (sig) o.sig = sig;
      if (typeof fn.arguments === 'string' && fn.arguments !== '') {
        o.args += fn.arguments;
        out.push({ type: 'args', json: fn.arguments });
      }
    }
    if (typeof choice.finish_reason === 'string') this.stop = stopFromChat(choice.finish_reason);
    return out;
  }

  private openBlock(o: Open): IrEvent[] {
    this.open = o;
    if (o.kind === 'tool_call') return [{ type: 'block_start', block: { kind: 'tool_call', id: o.id, name: o.name, ...(o.sig ? { thoughtSignature: o.sig } : {}) } }];
    return [{ type: 'block_start', block: o.kind === 'text' ? { kind: 'text' } : { kind: 'reasoning', origin: 'chat' } }];
  }

  private close(): IrEvent[] {
    const o = this.open;
    this.open = undefined;
    if (!o) return [];
    if (o.kind === 'reasoning') return [{ type: 'block_stop', reasoning: { origin: 'chat', text: o.text } }];
    if (o.kind === 'tool_call') return [{ type: 'block_stop', toolCall: { type: 'tool_call', id: o.id, name: o.name, args: o.args, ...(o.sig ? { thoughtSignature: o.sig } : {}) } }];
    return [{ type: 'block_stop' }];
  }

  end(): IrEvent[] {
    if (this.done) return [];
    this.done = true;
    const start: IrEvent[] = this.started ? [] : [{ type: 'start', id: '', model: '' }];
    return [...start, ...this.close(), { type: 'finish', stop: this.stop, usage: usageFromChat(this.usage) }];
  }
}

export class ChatStreamEncoder implements StreamEncoder {
  private id = '';
  private model = '';
  private created = Math.floor(Date.now() / 1000);
  private toolIndex = -1;
  private sigSent = false;
  private parts: IrPart[] = [];
  private text = '';
  private sawReasoning = false;

  constructor(private readonly ctx: AgentContext = {}) {}

  private chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return sseFrame({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  }

  push(ev: IrEvent): string {
    switch (ev.type) {
      case 'start':
        this.id = ev.id;
        this.model = ev.model;
        return this.chunk({ role: 'assistant', content: '' });
      case 'block_start': {
        this.sawReasoning = false;
        if (ev.block.kind !== 'tool_call') return '';
        this.toolIndex++;
        const b = ev.block;
        this.sigSent = b.thoughtSignature !== undefined;
        return this.chunk({ tool_calls: [{ index: this.toolIndex, id: b.id, type: 'function', function: { name: b.name, arguments: '' }, ...(b.thoughtSignature ? { extra_content: { google: { thought_signature: b.thoughtSignature } } } : {}) }] });
      }
      case 'text':
        this.text += ev.text;
        return this.chunk({ content: ev.text });
      case 'reasoning':
        this.sawReasoning = true;
        return this.chunk({ reasoning_content: ev.text });
      case 'args':
        return this.chunk({ tool_calls: [{ index: this.toolIndex, function: { arguments: ev.json } }] });
      case 'block_stop': {
        if (ev.reasoning) {
          this.parts.push({ type: 'reasoning', reasoning: ev.reasoning });
          const t = visibleText(ev.reasoning);
          if (!this.sawReasoning && t !== '') return this.chunk({ reasoning_content: t });
        }
        if (ev.toolCall) {
          this.parts.push(ev.toolCall);
          // a thought signature that came after the call's first chunk is sent on its own
          if (ev.toolCall.thoughtSignature && !this.sigSent) return this.chunk({ tool_calls: [{ index: this.toolIndex, extra_content: { google: { thought_signature: ev.toolCall.thoughtSignature } } }] });
        }
        return '';
      }
      case 'finish': {
        rememberChatTurn(this.ctx, [...this.parts, { type: 'text', text: this.text }]);
        let s = this.chunk({}, stopToChat(ev.stop));
        if (this.ctx.includeUsage !== false) s += sseFrame({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: usageToChat(ev.usage) });
        return s + sseFrame('[DONE]');
      }
      case 'error':
        return sseFrame(errorBody('chat', ev.error));
    }
  }
}
