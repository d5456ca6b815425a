/** The two halves of a streaming translation: upstream SSE events → IrEvents → agent SSE text. */
import type { IrError, IrEvent, IrResponse } from './ir';
import type { SseEvent } from './sse';

export interface StreamDecoder {
  /** one upstream SSE event → the IR events it completes */
  push(ev: SseEvent): IrEvent[];
  /** the upstream stream ended (cleanly or not): close what is open */
  end(): IrEvent[];
}

export interface StreamEncoder {
  /** one IR event → SSE text for the agent (possibly empty) */
  push(ev: IrEvent): string;
}

/** JSON of an SSE data line, or undefined for keep-alives and garbage (a stream must not die of one bad line). */
export function jsonData(ev: SseEvent): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(ev.data) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Collects an IR event stream into a whole response (for tests and non-streaming agents behind streaming upstreams). */
export function collectEvents(events: IrEvent[]): IrResponse | { error: IrError } {
  let id = '';
  let model = '';
  const parts: IrResponse['parts'] = [];
  let cur: { kind: string; text: string } | undefined;
  for (const e of events) {
    if (e.type === 'start') ({ id, model } = e);
    else if (e.type === 'block_start') cur = { kind: e.block.kind, text: '' };
    else if (e.type === 'text' || e.type === 'reasoning') {
      if (cur) cur.text += e.text;
    } else if (e.type === 'block_stop') {
      if (e.reasoning) parts.push({ type: 'reasoning', reasoning: e.reasoning });
      else if (e.toolCall) parts.push(e.toolCall);
      else if (cur?.kind === 'text') parts.push({ type: 'text', text: cur.text });
      cur = undefined;
    } else if (e.type === 'finish') return { id, model, parts, stop: e.stop, usage: e.usage };
    else if (e.type === 'error') return { error: e.error };
  }
  return { error: { kind: 'server', message: 'stream ended without a finish' } };
}

/** A whole response as the IR events a stream of it would have given (to stream a JSON answer to a streaming agent). */
export function eventsOf(r: IrResponse): IrEvent[] {
  const out: IrEvent[] = [{ type: 'start', id: r.id, model: r.model }];
  for (const p of r.parts) {
    if (p.type === 'text') out.push({ type: 'block_start', block: { kind: 'text' } }, { type: 'text', text: p.text }, { type: 'block_stop' });
    else if (p.type === 'reasoning') {
      const x = p.reasoning;
      const text = x.text ?? (x.summary ?? []).join('\n\n');
      out.push({ type: 'block_start', block: { kind: 'reasoning', origin: x.origin, ...(x.redacted !== undefined ? { redacted: x.redacted } : {}), ...(x.itemId ? { itemId: x.itemId } : {}) } });
      if (text !== '') out.push({ type: 'reasoning', text });
      out.push({ type: 'block_stop', reasoning: x });
    } else if (p.type === 'tool_call') {
      out.push({ type: 'block_start', block: { kind: 'tool_call', id: p.id, name: p.name, ...(p.thoughtSignature ? { thoughtSignature: p.thoughtSignature } : {}), ...(p.itemId ? { itemId: p.itemId } : {}) } });
      if (p.args !== '') out.push({ type: 'args', json: p.args });
      out.push({ type: 'block_stop', toolCall: p });
    }
  }
  out.push({ type: 'finish', stop: r.stop, usage: r.usage });
  return out;
}
