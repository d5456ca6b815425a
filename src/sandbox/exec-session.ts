// A command channel into a container over ONE open Docker exec: later commands cost a write and a
// read instead of a new exec (~0.07–0.1 s each here: runc starts, bench/sweep-overhead.ts).
// execDetached opens one when asked (the agent's launch exec stays open); session-backend.ts routes
// an agent phase's later execs (probes, the final capture) through it.
import type { Duplex } from 'node:stream';
import { PassThrough } from 'node:stream';
import { docker } from './client';

export interface SessionResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
}

/**
 * The channel is gone (the shell was killed, the container removed, the stream closed): the
 * caller takes a plain exec. Never leaves this folder (session-backend.ts catches it).
 */
class SessionClosedError extends Error {}

export const isSessionClosed = (err: unknown): boolean => err instanceof SessionClosedError;

/**
 * The container side: read NUL-terminated commands from stdin, run each, answer
 * "<exit code> <stdout bytes> <stderr bytes>\n" and the two outputs. Outputs go through a file
 * so their sizes are known before they are sent.
 */
export const SESSION_LOOP = [
  'o=/tmp/.saasbench-session-$$',
  'while IFS= read -r -d "" cmd; do',
  '  bash -c "$cmd" > "$o.out" 2> "$o.err" < /dev/null; rc=$?',
  '  echo "$rc" $(stat -c %s "$o.out" "$o.err")',
  '  cat "$o.out" "$o.err"; rm -f "$o.out" "$o.err"',
  'done',
].join('\n');

export class ExecSession {
  private buf: Buffer = Buffer.alloc(0);
  /** the start of what the shell wrote on stderr (a launch that failed says why there) */
  stderrText = '';
  private ended = false;
  private wake: (() => void) | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly stream: Duplex) {
    const out = new PassThrough();
    const err = new PassThrough();
    out.on('data', (b: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, b]) : b;
      this.notify();
    });
    err.on('data', (b: Buffer) => {
      if (this.stderrText.length < 4096) this.stderrText += b.toString('utf8');
    });
    docker().modem.demuxStream(stream, out, err);
    const end = () => {
      this.ended = true;
      this.notify();
    };
    stream.once('end', end);
    stream.once('close', end);
    stream.once('error', end);
    stream.on('error', () => undefined);
  }

  get open(): boolean {
    return !this.ended;
  }

  /** The first line the launch wrote (its status), before the loop took over. */
  async readLine(timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl >= 0) {
        const line = this.buf.subarray(0, nl).toString('utf8');
        this.buf = this.buf.subarray(nl + 1);
        return line;
      }
      if (this.ended) throw new SessionClosedError(`exec session ended before a line: ${this.buf.toString('utf8').slice(0, 200)}`);
      if (!(await this.waitData(deadline - Date.now()))) throw new SessionClosedError('exec session: no answer in time');
    }
  }

  /** Run `command` (a bash command line) in the container; one at a time. */
  run(command: string, timeoutMs = 0): Promise<SessionResult> {
    if (command.includes('\0')) throw new SessionClosedError('exec session: a command cannot contain NUL');
    const next = this.queue.then(() => this.one(command, timeoutMs));
    this.queue = next.catch(() => undefined);
    return next;
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.stream.end();
    // the loop ends at EOF; nothing here waits for it
    setTimeout(() => this.stream.destroy(), 5_000).unref();
  }

  private async one(command: string, timeoutMs: number): Promise<SessionResult> {
    if (this.ended) throw new SessionClosedError('exec session closed');
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
    this.stream.write(`${command}\0`);
    const head = await this.readLineUntil(deadline);
    if (head === null) return this.timedOut();
    const [code, outBytes, errBytes] = head.trim().split(/\s+/).map(Number);
    if (![code, outBytes, errBytes].every(Number.isInteger)) {
      this.close();
      throw new SessionClosedError(`exec session: unexpected answer ${JSON.stringify(head.slice(0, 200))}`);
    }
    const body = await this.readBytes(outBytes + errBytes, deadline);
    if (body === null) return this.timedOut();
    return { exitCode: code, stdout: body.subarray(0, outBytes), stderr: body.subarray(outBytes), timedOut: false };
  }

  /** A command that outran its time: the channel is given up (the command may still be running). */
  private timedOut(): SessionResult {
    this.close();
    this.stream.destroy();
    return { exitCode: 137, stdout: Buffer.alloc(0), stderr: Buffer.from('exec session: timed out'), timedOut: true };
  }

  private async readLineUntil(deadline: number): Promise<string | null> {
    try {
      return await this.readLine(deadline - Date.now());
    } catch (err) {
      if (!this.ended && Date.now() >= deadline) return null;
      throw err;
    }
  }

  private async readBytes(n: number, deadline: number): Promise<Buffer | null> {
    while (this.buf.length < n) {
      if (this.ended) throw new SessionClosedError('exec session ended mid-answer');
      if (!(await this.waitData(deadline - Date.now()))) return null;
    }
    const b = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return b;
  }

  private waitData(ms: number): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const t = ms === Infinity ? undefined : setTimeout(() => {
        this.wake = null;
        resolve(false);
      }, ms);
      this.wake = () => {
        if (t) clearTimeout(t);
        this.wake = null;
        resolve(true);
      };
    });
  }

  private notify(): void {
    this.wake?.();
  }
}
