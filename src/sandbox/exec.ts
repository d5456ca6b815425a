// Command execution inside containers: a bounded, attached `exec` (and `execBytes`). Processes that
// must outlive the call are exec-detached.ts's.
import { constants as bufferConstants } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { PassThrough, type Duplex } from 'node:stream';
import { ExecResult } from '../model/sandbox';
import { docker } from './client';
import { SandboxInfraError, SandboxInputError, infra, isNotFound } from './errors';

export interface ExecOptions {
  workdir?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  stdin?: string | Buffer;
  user?: string;
  /** Per-stream cap; the rest is dropped and a marker appended. Default 32 MiB. */
  maxOutputBytes?: number;
}

export { ExecResult };

const envList = (env?: Record<string, string>) => Object.entries(env ?? {}).map(([k, v]) => `${k}=${v}`);

class Collector {
  private chunks: Buffer[] = [];
  private size = 0;
  dropped = false;
  constructor(private readonly max: number) {}
  push(b: Buffer): void {
    if (this.size >= this.max) {
      this.dropped = true;
      return;
    }
    const take = b.subarray(0, this.max - this.size);
    this.chunks.push(take);
    this.size += take.length;
    if (take.length < b.length) this.dropped = true;
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
  text(): string {
    return this.bytes().toString('utf8') + (this.dropped ? '\n[saasbench: output truncated]\n' : '');
  }
}

/**
 * Runs `cmd` and collects its output. With `timeoutMs`, the command runs under a tiny `sh`
 * wrapper that records its pid: a docker exec is its own session leader, so killing that
 * process group on timeout takes its children down too (the Docker API has no exec kill).
 */
export async function exec(container: string, cmd: string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const r = await run(container, cmd, opts, opts.maxOutputBytes ?? 32 * 1024 * 1024);
  return { exitCode: r.exitCode, stdout: r.out.text(), stderr: r.err.text(), timedOut: r.timedOut };
}

/**
 * Like exec, with stdout as bytes, never truncated (an archive streamed out of the container: one
 * exec instead of write-to-/tmp, read the file, remove it — each a Docker round trip).
 */
export async function execBytes(container: string, cmd: string[], opts: ExecOptions = {}): Promise<ExecBytesResult> {
  const max = opts.maxOutputBytes ?? bufferConstants.MAX_LENGTH;
  const r = await run(container, cmd, opts, max);
  if (r.out.dropped) throw new SandboxInfraError(`exec in ${container}: output larger than ${max} bytes`);
  return { exitCode: r.exitCode, stdout: r.out.bytes(), stderr: r.err.text(), timedOut: r.timedOut };
}

export interface ExecBytesResult {
  exitCode: number;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
}

/** Create and start an attached exec: its hijacked stream (multiplexed stdout/stderr) and the exec. */
export async function openExec(container: string, Cmd: string[], opts: Pick<ExecOptions, 'workdir' | 'env' | 'user'>, withStdin: boolean) {
  try {
    const execObj = await docker().getContainer(container).exec({
      Cmd,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: withStdin,
      Tty: false,
      WorkingDir: opts.workdir,
      Env: envList(opts.env),
      User: opts.user,
    });
    const stream = (await execObj.start({ hijack: true, stdin: withStdin })) as Duplex;
    return { stream, execObj };
  } catch (err) {
    if (isNotFound(err)) throw new SandboxInfraError(`exec: container ${container} not found`, { cause: err });
    throw infra(`exec in ${container}`, err);
  }
}

async function run(container: string, cmd: string[], opts: ExecOptions, max: number): Promise<{ exitCode: number; out: Collector; err: Collector; timedOut: boolean }> {
  if (cmd.length === 0) throw new SandboxInputError('exec: empty command');
  const pidFile = opts.timeoutMs !== undefined ? `/tmp/.saasbench-exec-${randomBytes(6).toString('hex')}.pid` : undefined;
  const Cmd = pidFile ? ['sh', '-c', 'echo $$ > "$0"; "$@"; rc=$?; rm -f "$0"; exit $rc', pidFile, ...cmd] : cmd;
  const withStdin = opts.stdin !== undefined;
  const { stream, execObj } = await openExec(container, Cmd, opts, withStdin);

  const out = new Collector(max);
  const errOut = new Collector(max);
  const outPT = new PassThrough().on('data', (b: Buffer) => out.push(b));
  const errPT = new PassThrough().on('data', (b: Buffer) => errOut.push(b));
  docker().modem.demuxStream(stream, outPT, errPT);
  const ended = new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  if (withStdin) stream.end(opts.stdin);

  let timedOut = false;
  if (opts.timeoutMs !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), opts.timeoutMs)));
    const first = await Promise.race([ended.then(() => 'done' as const), expired]);
    clearTimeout(timer);
    if (first === 'timeout') {
      timedOut = true;
      await killGroup(container, pidFile!);
      // Give the stream a moment to drain what the killed process wrote, then cut it.
      await Promise.race([ended, sleep(3000)]);
      stream.destroy();
    }
  } else {
    await ended;
  }

  const info = await execObj.inspect().catch((err: unknown) => {
    throw infra(`exec inspect in ${container}`, err);
  });
  const exitCode = typeof info.ExitCode === 'number' && !info.Running ? info.ExitCode : timedOut ? 137 : -1;
  return { exitCode, out, err: errOut, timedOut };
}

async function killGroup(container: string, pidFile: string): Promise<void> {
  try {
    const e = await docker()
      .getContainer(container)
      .exec({ Cmd: ['sh', '-c', 'p=$(cat "$0" 2>/dev/null) && [ -n "$p" ] && { kill -9 -"$p" 2>/dev/null || kill -9 "$p"; }; rm -f "$0"', pidFile], AttachStdout: true, AttachStderr: true });
    const s = (await e.start({ hijack: true, stdin: false })) as Duplex;
    s.resume();
    await new Promise<void>((r) => {
      s.once('end', r);
      s.once('close', r);
      s.once('error', () => r());
    });
  } catch {
    // best effort: the container may already be gone
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
