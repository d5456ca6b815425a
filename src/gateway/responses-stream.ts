/**
 * OpenAI Responses streams. Upstream: output items are blocks (a message's content parts are
 * text blocks); custom (free-text) tool input is re-encoded as the JSON `{"input": …}` other
 * protocols carry. Towards a Responses agent: the event sequence Codex reads — response.created,
 * output_item.added/done around each item, text/summary/arguments deltas, response.completed
 * (or .incomplete / .failed) with the full output and usage; every event has a sequence_number.
 */
import type { AgentContext } from './context';
import { kindOfType, responsesErrorCode, responsesFailureMessage } from './errors';
import type { IrEvent, IrPart } from './ir';
import { stopFromResponses, stopToResponses, usageFromResponses, usageToResponses } from './mapping';
import { rememberThoughtSignature, visibleText } from './anthropic-response';
import { reasoningItem } from './responses-request';
import { callItem, itemId, partsOfItem } from './responses-response';
import { sseFrame, type SseEvent } from './sse';
import { jsonData, type StreamDecoder, type StreamEncoder } from './stream-types';

export class ResponsesStreamDecoder implements StreamDecoder {
  private open: 'text' | 'reasoning' | 'tool' | 'custom' | undefined;
  private sawToolCall = false;
  private done = false;

  push(ev: SseEvent): IrEvent[] {
    const d = jsonData(ev);
    if (!d || this.done) return [];
    const item = (d.item ?? {}) as Record<string, unknown>;
    switch (d.type) {
      case 'response.created': {
        const r = (d.response ?? {}) as Record<string, unknown>;
        return [{ type: 'start', id: String(r.id ?? ''), model: String(r.model ?? '') }];
      }
      case 'response.output_item.added':
        if (item.type === 'reasoning') return this.openBlock('reasoning', { type: 'block_start', block: { kind: 'reasoning', origin: 'responses', ...(typeof item.id === 'string' ? { itemId: item.id } : {}) } });
        if (item.type === 'function_call' || item.type === 'custom_tool_call') {
          this.sawToolCall = true;
          const start = this.openBlock(item.type === 'function_call' ? 'tool' : 'custom', { type: 'block_start', block: { kind: 'tool_call', id: String(item.call_id), name: String(item.name), ...(typeof item.id === 'string' ? { itemId: item.id } : {}) } });
          return item.type === 'custom_tool_call' ? [...start, { type: 'args', json: '{"input":"' }] : start;
        }
        return [];
      case 'response.content_part.added':
        return this.openBlock('text', { type: 'block_start', block: { kind: 'text' } });
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return this.open === 'text' ? [{ type: 'text', text: String(d.delta ?? '') }] : [];
      case 'response.content_part.done':
        return this.close([{ type: 'block_stop' }]);
      case 'response.reasoning_summary_part.added':
        // summary parts are separate paragraphs; a reader of one stream of thinking needs the break
        return this.open === 'reasoning' && Number(d.summary_index) > 0 ? [{ type: 'reasoning', text: '\n\n' }] : [];
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return this.open === 'reasoning' ? [{ type: 'reasoning', text: String(d.delta ?? '') }] : [];
      case 'response.function_call_arguments.delta':
        return this.open === 'tool' ? [{ type: 'args', json: String(d.delta ?? '') }] : [];
      case 'response.custom_tool_call_input.delta':
        return this.open === 'custom' ? [{ type: 'args', json: JSON.stringify(String(d.delta ?? '')).slice(1, -1) }] : [];
      case 'response.output_item.done': {
        const [part] = partsOfItem(item);
        if (this.open === 'reasoning' && part?.type === 'reasoning') return this.close([{ type: 'block_stop', reasoning: part.reasoning }]);
        if ((this.open === 'tool' || this.open === 'custom') && part?.type === 'tool_call') {
          const tail: IrEvent[] = this.open === 'custom' ? [{ type: 'args', json: '"}' }] : [];
          return [...tail, ...this.close([{ type: 'block_stop', toolCall: part }])];
        }
        return [];
      }
      case 'response.completed':
      case 'response.incomplete': {
        const r = (d.response ?? {}) as Record<string, unknown>;
        const reason = ((r.incomplete_details ?? {}) as Record<string, unknown>).reason as string | undefined;
        this.done = true;
        return [...this.close([{ type: 'block_stop' }]), { type: 'finish', stop: stopFromResponses(String(r.status ?? (d.type === 'response.incomplete' ? 'incomplete' : 'completed')), reason, this.sawToolCall), usage: usageFromResponses(r.usage as Record<string, unknown>) }];
      }
      case 'response.failed':
      case 'error': {
        const r = (d.response ?? {}) as Record<string, unknown>;
        const e = ((r.error ?? d.error ?? d) as Record<string, unknown>) ?? {};
        this.done = true;
        return [{ type: 'error', error: { kind: kindOfType(e.code as string) ?? kindOfType(e.type as string) ?? 'server', message: String(e.message ?? 'upstream error') } }];
      }
      default:
        return [];
    }
  }

  private openBlock(kind: NonNullable<ResponsesStreamDecoder['open']>, start: IrEvent): IrEvent[] {
    const prev = this.close([{ type: 'block_stop' }]);
    this.open = kind;
    return [...prev, start];
  }

  private close(stop: IrEvent[]): IrEvent[] {
    if (this.open === undefined) return [];
    this.open = undefined;
    return stop;
  }

  end(): IrEvent[] {
    if (this.done) return [];
    this.done = true;
    // a Responses stream that ends without response.completed was cut off
    return [{ type: 'error', error: { kind: 'server', message: 'upstream stream ended before response.completed' } }];
  }
}

export class ResponsesStreamEncoder implements StreamEncoder {
  private seq = 0;
  private base: Record<string, unknown> = {};
  private output: Record<string, unknown>[] = [];
  private index = -1;
  private cur: { kind: 'text' | 'reasoning' | 'tool_call'; id: string; text: string; summaryOpen: boolean; call?: Extract<IrPart, { type: 'tool_call' }> } | undefined;

  constructor(private readonly ctx: AgentContext = {}) {}

  private ev(type: string, data: Record<string, unknown>): string {
    return sseFrame({ type, sequence_number: this.seq++, ...data }, type);
  }

  push(ev: IrEvent): string {
    switch (ev.type) {
      case 'start':
        this.base = { id: ev.id, object: 'response', created_at: Math.floor(Date.now() / 1000), model: ev.model };
        return this.ev('response.created', { response: { ...this.base, status: 'in_progress', output: [] } }) + this.ev('response.in_progress', { response: { ...this.base, status: 'in_progress', output: [] } });
      case 'block_start': {
        this.index++;
        const b = ev.block;
        const at = { output_index: this.index };
        if (b.kind === 'text') {
          const id = itemId('msg');
          this.cur = { kind: 'text', id, text: '', summaryOpen: false };
          return (
            this.ev('response.output_item.added', { ...at, item: { type: 'message', id, role: 'assistant', status: 'in_progress', content: [] } }) +
            this.ev('response.content_part.added', { ...at, item_id: id, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } })
          );
        }
        if (b.kind === 'reasoning') {
          const id = b.origin === 'responses' && b.itemId ? b.itemId : itemId('rs');
          this.cur = { kind: 'reasoning', id, text: '', summaryOpen: false };
          return this.ev('response.output_item.added', { ...at, item: { type: 'reasoning', id, summary: [] } });
        }
        const id = b.itemId ?? itemId('fc');
        const call = { type: 'tool_call' as const, id: b.id, name: b.name, args: '' };
        this.cur = { kind: 'tool_call', id, text: '', summaryOpen: false, call };
        return this.ev('response.output_item.added', { ...at, item: callItem(call, this.ctx, id, 'in_progress') });
      }
      case 'text':
        if (this.cur?.kind !== 'text') return '';
        this.cur.text += ev.text;
        return this.ev('response.output_text.delta', { output_index: this.index, item_id: this.cur.id, content_index: 0, delta: ev.text });
      case 'reasoning': {
        if (this.cur?.kind !== 'reasoning') return '';
        let s = '';
        if (!this.cur.summaryOpen) {
          this.cur.summaryOpen = true;
          s = this.ev('response.reasoning_summary_part.added', { output_index: this.index, item_id: this.cur.id, summary_index: 0, part: { type: 'summary_text', text: '' } });
        }
        this.cur.text += ev.text;
        return s + this.ev('response.reasoning_summary_text.delta', { output_index: this.index, item_id: this.cur.id, summary_index: 0, delta: ev.text });
      }
      case 'args':
        if (this.cur?.kind !== 'tool_call') return '';
        this.cur.text += ev.json;
        // free-text tools get their input whole at the end (the JSON wrapper cannot be unwrapped piecewise)
        return this.ctx.freeformTools?.includes(this.cur.call?.name ?? '') ? '' : this.ev('response.function_call_arguments.delta', { output_index: this.index, item_id: this.cur.id, delta: ev.json });
      case 'block_stop':
        return this.stopBlock(ev);
      case 'finish': {
        const { status, incomplete_details } = stopToResponses(ev.stop);
        const response = { ...this.base, status, incomplete_details, output: this.output, usage: usageToResponses(ev.usage) };
        return this.ev(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
      }
      case 'error':
        return this.ev('response.failed', { response: { ...this.base, status: 'failed', output: this.output, error: { code: responsesErrorCode(ev.error), message: responsesFailureMessage(ev.error) } } });
    }
  }

  private stopBlock(ev: Extract<IrEvent, { type: 'block_stop' }>): string {
    const c = this.cur;
    this.cur = undefined;
    if (!c) return '';
    const at = { output_index: this.index, item_id: c.id };
    if (c.kind === 'text') {
      const part = { type: 'output_text', text: c.text, annotations: [] };
      const item = { type: 'message', id: c.id, role: 'assistant', status: 'completed', content: [part] };
      this.output.push(item);
      return this.ev('response.output_text.done', { ...at, content_index: 0, text: c.text }) + this.ev('response.content_part.done', { ...at, content_index: 0, part }) + this.ev('response.output_item.done', { output_index: this.index, item });
    }
    if (c.kind === 'reasoning') {
      const r = ev.reasoning ?? { origin: 'responses' as const, summary: c.text ? [c.text] : [] };
      const item = reasoningItem(r, c.id);
      item.id = c.id;
      this.output.push(item);
      let s = '';
      const text = c.summaryOpen ? c.text : visibleText(r);
      if (!c.summaryOpen && text !== '') {
        s += this.ev('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: { type: 'summary_text', text: '' } });
        s += this.ev('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: text });
      }
      if (text !== '') s += this.ev('response.reasoning_summary_text.done', { ...at, summary_index: 0, text }) + this.ev('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text } });
      return s + this.ev('response.output_item.done', { output_index: this.index, item });
    }
    const call = ev.toolCall ?? { ...c.call!, args: c.text };
    rememberThoughtSignature(this.ctx, call.id, call.thoughtSignature);
    const item = callItem(call, this.ctx, c.id);
    this.output.push(item);
    const done =
      item.type === 'custom_tool_call'
        ? this.ev('response.custom_tool_call_input.delta', { ...at, delta: item.input }) + this.ev('response.custom_tool_call_input.done', { ...at, input: item.input })
        : this.ev('response.function_call_arguments.done', { ...at, arguments: call.args });
    return done + this.ev('response.output_item.done', { output_index: this.index, item });
  }
}
