/**
 * Server-sent events, both ways. The parser is incremental and byte-safe: upstream TCP chunks split
 * frames, lines and even UTF-8 sequences anywhere, so bytes go through a streaming TextDecoder and
 * only complete lines are interpreted (WHATWG "event stream interpretation": CR, LF or CRLF line
 * ends, `:` comments, multi-line data joined with \n, an optional space after the colon).
 * Written here rather than taken from npm: it is ~60 lines and the gateway needs no more.
 */

export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
}

export class SseParser {
  private decoder = new TextDecoder('utf-8');
  private buf = '';
  /** a CR ended the last chunk: a LF starting the next one belongs to it */
  private pendingCr = false;
  private event: string | undefined;
  private data: string[] = [];
  private id: string | undefined;

  /** Feed bytes (or text); returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buf += text;
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(this.buf.slice(start, i), out);
      if (c === '\r') {
        if (i + 1 < this.buf.length) {
          if (this.buf[i + 1] === '\n') i++;
        } else this.pendingCr = true;
      }
      start = i + 1;
    }
    this.buf = this.buf.slice(start);
    return out;
  }

  /** End of stream: a final event without its blank line is dispatched, as browsers do not but servers expect. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.decoder.decode() + this.buf;
    this.buf = '';
    if (rest.length > 0) this.line(rest, out);
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0 || this.event !== undefined) {
        const ev: SseEvent = { data: this.data.join('\n') };
        if (this.event !== undefined) ev.event = this.event;
        if (this.id !== undefined) ev.id = this.id;
        out.push(ev);
      }
      this.event = undefined;
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id') this.id = value;
  }
}

/** One SSE frame. `data` is serialized as JSON unless it is already a string (e.g. `[DONE]`). */
export function sseFrame(data: unknown, event?: string): string {
  const body = typeof data === 'string' ? data : JSON.stringify(data);
  const lines = body.split('\n').map((l) => `data: ${l}`).join('\n');
  return `${event === undefined ? '' : `event: ${event}\n`}${lines}\n\n`;
}
