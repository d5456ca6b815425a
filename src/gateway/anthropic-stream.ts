/**
 * Anthropic Messages streams: upstream events → IrEvents, and IrEvents → the events Claude Code
 * reads (message_start, content_block_start/delta/stop, message_delta, message_stop, error).
 * Signatures arrive as signature_delta just before content_block_stop, so the encoder writes the
 * signature (native or a gateway carrier) there, once the whole reasoning is known.
 */
import { packCarrier, unpackCarrier } from './carrier';
import type { AgentContext } from './context';
import { errorBody, kindOfType } from './errors';
import type { IrEvent, IrReasoning, IrStop } from './ir';
import { stopFromAnthropic, stopToAnthropic, usageFromAnthropic, usageToAnthropic } from './mapping';
import { rememberThoughtSignature, visibleText } from './anthropic-response';
import { sseFrame } from './sse';
import { jsonData, type StreamDecoder, type StreamEncoder } from './stream-types';
import type { SseEvent } from './sse';

type Open =
  | { kind: 'text' }
  | { kind: 'reasoning'; text: string; signature: string; redacted?: string }
  | { kind: 'tool_call'; id: string; name: string; args: string }
  | { kind: 'skip' };

export class AnthropicStreamDecoder implements StreamDecoder {
  private open: Open | undefined;
  private usage: Record<string, unknown> = {};
  private stop: IrStop = 'end';
  private done = false;

  push(ev: SseEvent): IrEvent[] {
    const d = jsonData(ev);
    if (!d || this.done) return [];
    const out: IrEvent[] = [];
    switch (d.type) {
      case 'message_start': {
        const m = (d.message ?? {}) as Record<string, unknown>;
        this.usage = { ...((m.usage as Record<string, unknown>) ?? {}) };
        out.push({ type: 'start', id: String(m.id ?? ''), model: String(m.model ?? '') });
        break;
      }
      case 'content_block_start': {
        const b = (d.content_block ?? {}) as Record<string, unknown>;
        if (b.type === 'text') {
          this.open = { kind: 'text' };
          out.push({ type: 'block_start', block: { kind: 'text' } });
          if (typeof b.text === 'string' && b.text !== '') out.push({ type: 'text', text: b.text });
        } else if (b.type === 'thinking' || b.type === 'redacted_thinking') {
          const redacted = b.type === 'redacted_thinking' ? String(b.data ?? '') : undefined;
          this.open = { kind: 'reasoning', text: '', signature: '', ...(redacted !== undefined ? { redacted } : {}) };
          out.push({ type: 'block_start', block: { kind: 'reasoning', origin: 'anthropic', ...(redacted !== undefined ? { redacted } : {}) } });
        } else if (b.type === 'tool_use') {
          this.open = { kind: 'tool_call', id: String(b.id), name: String(b.name), args: '' };
          out.push({ type: 'block_start', block: { kind: 'tool_call', id: String(b.id), name: String(b.name) } });
        } else this.open = { kind: 'skip' }; // server tools and their results stay at Anthropic
        break;
      }
      case 'content_block_delta': {
        const x = (d.delta ?? {}) as Record<string, unknown>;
        const o = this.open;
        if (!o || o.kind === 'skip') break;
        if (x.type === 'text_delta' && o.kind === 'text') out.push({ type: 'text', text: String(x.text ?? '') });
        else if (x.type === 'thinking_delta' && o.kind === 'reasoning') {
          o.text += String(x.thinking ?? '');
          out.push({ type: 'reasoning', text: String(x.thinking ?? '') });
        } else if (x.type === 'signature_delta' && o.kind === 'reasoning') o.signature += String(x.signature ?? '');
        else if (x.type === 'input_json_delta' && o.kind === 'tool_call') {
          o.args += String(x.partial_json ?? '');
          out.push({ type: 'args', json: String(x.partial_json ?? '') });
        }
        break;
      }
      case 'content_block_stop':
        out.push(...this.closeBlock());
        break;
      case 'message_delta': {
        const x = (d.delta ?? {}) as Record<string, unknown>;
        if (typeof x.stop_reason === 'string') this.stop = stopFromAnthropic(x.stop_reason);
        // message_delta usage is cumulative; fields it omits keep their message_start values
        for (const [k, v] of Object.entries((d.usage as Record<string, unknown>) ?? {})) if (v !== null && v !== undefined) this.usage[k] = v;
        break;
      }
      case 'message_stop':
        out.push(...this.end());
        break;
      case 'error': {
        const e = (d.error ?? {}) as Record<string, unknown>;
        this.done = true;
        out.push({ type: 'error', error: { kind: kindOfType(e.type as string) ?? 'server', message: String(e.message ?? 'upstream error') } });
        break;
      }
    }
    return out;
  }

  private closeBlock(): IrEvent[] {
    const o = this.open;
    this.open = undefined;
    if (!o || o.kind === 'skip') return [];
    if (o.kind === 'reasoning') {
      const r: IrReasoning = o.redacted !== undefined ? { origin: 'anthropic', redacted: o.redacted } : (unpackCarrier(o.signature) ?? { origin: 'anthropic', text: o.text, signature: o.signature });
      return [{ type: 'block_stop', reasoning: r }];
    }
    if (o.kind === 'tool_call') return [{ type: 'block_stop', toolCall: { type: 'tool_call', id: o.id, name: o.name, args: o.args } }];
    return [{ type: 'block_stop' }];
  }

  end(): IrEvent[] {
    if (this.done) return [];
    this.done = true;
    return [...this.closeBlock(), { type: 'finish', stop: this.stop, usage: usageFromAnthropic(this.usage) }];
  }
}

export class AnthropicStreamEncoder implements StreamEncoder {
  private index = -1;
  private open: 'text' | 'reasoning' | 'redacted' | 'tool_call' | undefined;
  private sawReasoning = false;

  constructor(private readonly ctx: AgentContext = {}) {}

  push(ev: IrEvent): string {
    const f = (type: string, data: Record<string, unknown>) => sseFrame({ type, ...data }, type);
    switch (ev.type) {
      case 'start':
        return f('message_start', { message: { id: ev.id, type: 'message', role: 'assistant', model: ev.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } } });
      case 'block_start': {
        this.index++;
        const b = ev.block;
        let block: Record<string, unknown>;
        if (b.kind === 'text') block = { type: 'text', text: '' };
        else if (b.kind === 'tool_call') block = { type: 'tool_use', id: b.id, name: b.name, input: {} };
        else if (b.origin === 'anthropic' && b.redacted !== undefined) block = { type: 'redacted_thinking', data: b.redacted };
        else block = { type: 'thinking', thinking: '', signature: '' };
        this.open = block.type === 'redacted_thinking' ? 'redacted' : b.kind;
        this.sawReasoning = false;
        return f('content_block_start', { index: this.index, content_block: block });
      }
      case 'text':
        return f('content_block_delta', { index: this.index, delta: { type: 'text_delta', text: ev.text } });
      case 'reasoning':
        this.sawReasoning = true;
        return this.open === 'reasoning' ? f('content_block_delta', { index: this.index, delta: { type: 'thinking_delta', thinking: ev.text } }) : '';
      case 'args':
        return f('content_block_delta', { index: this.index, delta: { type: 'input_json_delta', partial_json: ev.json } });
      case 'block_stop': {
        let pre = '';
        const r = ev.reasoning;
        if (this.open === 'reasoning' && r) {
          const signature = r.origin === 'anthropic' ? (r.signature ?? '') : packCarrier(r);
          // reasoning that arrived whole (a Responses item whose summary was not streamed) is shown before its signature
          const text = visibleText(r);
          if (!this.sawReasoning && r.origin !== 'anthropic' && text !== '') pre = f('content_block_delta', { index: this.index, delta: { type: 'thinking_delta', thinking: text } });
          pre += f('content_block_delta', { index: this.index, delta: { type: 'signature_delta', signature } });
        }
        if (ev.toolCall) rememberThoughtSignature(this.ctx, ev.toolCall.id, ev.toolCall.thoughtSignature);
        this.open = undefined;
        return pre + f('content_block_stop', { index: this.index });
      }
      case 'finish':
        return (
          f('message_delta', { delta: { stop_reason: stopToAnthropic(ev.stop), stop_sequence: null }, usage: usageToAnthropic(ev.usage) }) + f('message_stop', {})
        );
      case 'error':
        return f('error', errorBody('anthropic', ev.error));
    }
  }
}
