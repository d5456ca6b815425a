import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { shQuote } from './shell';

/**
 * Short host commands (iptables, twice per rollout start and stop) run through ONE long-lived `sh`
 * child instead of a spawn each. A spawn forks this process, and the fork of a worker holding a
 * Temporal runtime and hundreds of MB blocks its event loop for ~10–40 ms: the CPU profile of
 * bench/sweep-overhead.ts had ChildProcess.spawn as the worker's largest cost. The shell is small,
 * so its forks are cheap. Requests run one at a time; a timeout kills the shell (the next request
 * starts another one). The shell never keeps this process alive on its own (unref'd when idle).
 */
export interface CoResult {
  ok: boolean;
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Pending {
  marker: string;
  resolve(r: CoResult): void;
  timer: NodeJS.Timeout;
}

class CoProcess {
  private child: ChildProcessWithoutNullStreams | null = null;
  private buf = Buffer.alloc(0);
  private pending: Pending | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private dir = `/tmp/.saasbench-co-${process.pid}-${randomBytes(4).toString('hex')}`;

  constructor() {
    // once per process, not per shell: a timeout starts another shell in the same folder
    process.once('exit', () => rmSync(this.dir, { recursive: true, force: true }));
  }

  run(bin: string, args: string[], input: string | undefined, timeoutMs: number): Promise<CoResult> {
    const next = this.queue.then(() => this.one(bin, args, input, timeoutMs));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private start(): ChildProcessWithoutNullStreams {
    const child = spawn('sh', ['-c', `umask 077; mkdir -p ${shQuote(this.dir)} && exec sh`], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.on('data', (b: Buffer) => (this.child === child ? this.onData(b) : undefined));
    child.stderr.resume();
    child.stdin.on('error', () => undefined);
    child.on('exit', () => {
      // a shell given up on (timeout) has been replaced already: its exit answers nothing
      if (this.child !== child) return;
      this.child = null;
      this.finish({ ok: false, code: null, stdout: '', stderr: 'command shell exited' });
    });
    this.child = child;
    this.idle(true);
    return child;
  }

  /** Only a request in flight keeps the event loop alive. */
  private idle(on: boolean): void {
    const c = this.child;
    if (!c) return;
    for (const h of [c, c.stdin, c.stdout, c.stderr] as { ref(): void; unref(): void }[]) {
      if (on) h.unref();
      else h.ref();
    }
  }

  private one(bin: string, args: string[], input: string | undefined, timeoutMs: number): Promise<CoResult> {
    const child = this.child ?? this.start();
    const id = randomBytes(8).toString('hex');
    const marker = `__saasbench_done_${id}`;
    const eof = `__saasbench_eof_${id}`;
    const d = shQuote(this.dir);
    // stdout and stderr go to files, then come back length-prefixed after the marker line
    const script =
      `${[bin, ...args].map(shQuote).join(' ')} > ${d}/out 2> ${d}/err <<'${eof}'\n${input ?? ''}${input && !input.endsWith('\n') ? '\n' : ''}${eof}\n` +
      `printf '%s %s %s %s\\n' ${marker} $? $(wc -c < ${d}/out) $(wc -c < ${d}/err); cat ${d}/out ${d}/err\n`;
    return new Promise<CoResult>((resolve) => {
      const timer = setTimeout(() => {
        this.child = null;
        child.kill('SIGKILL');
        this.finish({ ok: false, code: null, stdout: '', stderr: `${bin}: timed out after ${timeoutMs} ms` });
      }, timeoutMs);
      this.pending = { marker, resolve, timer };
      this.idle(false);
      child.stdin.write(script);
    });
  }

  private onData(b: Buffer): void {
    this.buf = Buffer.concat([this.buf, b]);
    const p = this.pending;
    if (!p) return;
    const at = this.buf.indexOf(p.marker);
    if (at < 0) return;
    const nl = this.buf.indexOf('\n', at);
    if (nl < 0) return;
    const [, code, outLen, errLen] = this.buf.subarray(at, nl).toString('utf8').split(' ').map(Number);
    const body = this.buf.subarray(nl + 1);
    if (body.length < outLen + errLen) return;
    this.buf = body.subarray(outLen + errLen);
    this.finish({ ok: code === 0, code, stdout: body.subarray(0, outLen).toString('utf8'), stderr: body.subarray(outLen, outLen + errLen).toString('utf8') });
  }

  private finish(r: CoResult): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    this.buf = Buffer.alloc(0);
    this.idle(true);
    p.resolve(r);
  }
}

let shared: CoProcess | undefined;

/** Run `bin args` (stdin: `input`) through the shared command shell. Never throws. */
export function coRun(bin: string, args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<CoResult> {
  shared ??= new CoProcess();
  return shared.run(bin, args, opts.input, opts.timeoutMs ?? 30_000);
}
