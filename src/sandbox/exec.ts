// Command execution inside containers: a bounded, attached `exec`, and `execDetached` for
// processes (agents, servers) that must outlive the exec call and the worker that made it.
import { shQuote } from '../shell';
import { constants as bufferConstants } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { PassThrough, type Duplex } from 'node:stream';
import { ExecResult } from '../model/sandbox';
import { docker } from './client';
import { SandboxInfraError, SandboxInputError, infra, isNotFound } from './errors';
import { containerPath, relativeIn, writeFiles } from './files';
import { packEntries } from './tar';
import { posix } from 'node:path';

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

async function run(container: string, cmd: string[], opts: ExecOptions, max: number): Promise<{ exitCode: number; out: Collector; err: Collector; timedOut: boolean }> {
  if (cmd.length === 0) throw new SandboxInputError('exec: empty command');
  const c = docker().getContainer(container);
  const pidFile = opts.timeoutMs !== undefined ? `/tmp/.saasbench-exec-${randomBytes(6).toString('hex')}.pid` : undefined;
  const Cmd = pidFile ? ['sh', '-c', 'echo $$ > "$0"; "$@"; rc=$?; rm -f "$0"; exit $rc', pidFile, ...cmd] : cmd;
  const withStdin = opts.stdin !== undefined;
  let stream: Duplex;
  let execObj;
  try {
    execObj = await c.exec({
      Cmd,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: withStdin,
      Tty: false,
      WorkingDir: opts.workdir,
      Env: envList(opts.env),
      User: opts.user,
    });
    stream = (await execObj.start({ hijack: true, stdin: withStdin })) as Duplex;
  } catch (err) {
    if (isNotFound(err)) throw new SandboxInfraError(`exec: container ${container} not found`, { cause: err });
    throw infra(`exec in ${container}`, err);
  }

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

export interface ExecDetachedOptions {
  workdir?: string;
  env?: Record<string, string>;
  /** Absolute directory in the container for script.sh, pid, stdout.log, stderr.log, exit_code. */
  controlDir: string;
  user?: string;
  /**
   * Wait up to this long (ms) after the start for the process to end, and report it if it did: a
   * process that ends at once (a noop agent, a crash on start) needs no separate probe (each exec is
   * a Docker round trip: bench/sweep-overhead.ts). Default 0.
   */
  settleMs?: number;
  /**
   * Files written under `dir` before the process starts, in the same exec: a tar stream on its
   * stdin, with the script (an agent's workspace seed; a separate writeFiles would be another
   * Docker round trip, ~0.08 s). Root-owned, mode 0644, as writeFiles writes them. An image
   * without `tar`, or a launch as another user, gets them by writeFiles first.
   */
  files?: { dir: string; files: { path: string; content: Buffer }[] };
}

/** the launch's exit code when the image has no tar to unpack `files` */
const NO_TAR = 75;

/** What execDetached saw of the process; `exited` when it ended within `settleMs`. */
export interface Detached {
  pid: number;
  exited?: { exitCode: number; at: number; stdoutBytes: number; stderrBytes: number };
}

/**
 * Starts `script` under bash in a new session (setsid), so it survives the exec, the worker and
 * a worker restart. The runner writes files atomically (tmp + mv): `pid` before the script
 * starts, `exit_code` after it ends. A process that vanished without `exit_code` was killed.
 */
export async function execDetached(container: string, script: string, opts: ExecDetachedOptions): Promise<Detached> {
  const dir = opts.controlDir.replace(/\/+$/, '');
  if (!dir.startsWith('/')) throw new SandboxInputError(`execDetached: controlDir must be absolute (got ${opts.controlDir})`);
  const q = shQuote;
  const runner = [
    '#!/bin/bash',
    `cd ${q(dir)} || exit 1`,
    'echo $$ > pid.tmp && mv -f pid.tmp pid',
    ...(opts.workdir ? [`cd ${q(opts.workdir)} || { echo 127 > ${q(dir)}/exit_code.tmp; mv -f ${q(dir)}/exit_code.tmp ${q(dir)}/exit_code; exit 127; }`] : []),
    `bash ${q(dir + '/script.sh')} > ${q(dir + '/stdout.log')} 2> ${q(dir + '/stderr.log')} < /dev/null`,
    'rc=$?',
    `echo $rc > ${q(dir)}/exit_code.tmp && mv -f ${q(dir)}/exit_code.tmp ${q(dir)}/exit_code`,
    // tells a launch still settling that the run ended; a launch gone already closed the pipe, and
    // the SIGPIPE then ends this runner after its record is written
    '{ echo done; } 2> /dev/null',
    '',
  ].join('\n');
  // ONE exec (each is a Docker round trip, ~0.07 s), and as few processes in it as can be: each
  // fork + exec in the container is ~1–3 ms (bench/sweep-overhead.ts). The script arrives on stdin
  // (read by a builtin), the runner as an argument; the control files of a previous attempt go
  // first, so they are not taken for this run's.
  const settle = Math.max(0, opts.settleMs ?? 0) / 1000;
  const seed = opts.files?.files.length ? opts.files : undefined;
  if (seed && opts.user) {
    await writeFiles(container, seed.dir, seed.files);
    return execDetached(container, script, { ...opts, files: undefined });
  }
  const launch = [
    // the script (and the files) arrive on stdin: a tar stream with the files, else the script alone
    ...(seed
      ? [`command -v tar > /dev/null || exit ${NO_TAR}`, 'tar -xf - -C / || exit 1', `cd ${q(dir)} || exit 1`]
      : [`{ cd ${q(dir)} 2> /dev/null || { mkdir -p ${q(dir)} && cd ${q(dir)}; }; } || exit 1`]),
    'if [ -e pid ] || [ -e exit_code ] || [ -e pid.tmp ] || [ -e exit_code.tmp ]; then rm -f pid exit_code pid.tmp exit_code.tmp || exit 1; fi',
    ...(seed ? [] : [`IFS= read -r -d '' body; printf '%s' "$body" > script.sh || exit 1`]),
    `printf '%s' "$0" > runner.sh || exit 1`,
    // The runner in a new session (it outlives this exec, the worker and a worker restart), its
    // stdout a pipe to this shell: `read -t` waits for its "done" up to the settle time without
    // polling. Nothing of it holds the exec's own output open.
    'exec 3< <(exec setsid bash ./runner.sh < /dev/null 2> /dev/null)',
    ...(settle > 0 ? [`read -t ${settle.toFixed(3)} -u 3 _`] : []),
    // the runner writes its pid first thing; wait for it without a process per look
    'n=0; until [ -s pid ]; do n=$((n + 1)); [ $n -gt 3000 ] && { echo "runner did not write its pid" >&2; exit 1; }; sleep 0.01; done',
    'read -r pid < pid',
    'if [ -e exit_code ]; then',
    '  read -r rc < exit_code',
    // the exit time: now, in ms (bash 5), else the record's own time
    '  if [ -n "$EPOCHREALTIME" ]; then at=${EPOCHREALTIME/[.,]/}; at=${at:0:13}; else at=$(date -r exit_code +%s%3N); fi',
    '  echo "$pid $rc $at" $(stat -c %s stdout.log stderr.log)',
    'else echo "$pid"; fi',
  ].join('\n');
  // no exec timeout (its wrapper is two more processes): the launch bounds its own waits
  const stdin = seed ? await seedArchive(dir, script, seed) : script;
  const r = await exec(container, ['bash', '-c', launch, runner], { env: opts.env, user: opts.user, stdin });
  if (seed && r.exitCode === NO_TAR) {
    await writeFiles(container, seed.dir, seed.files);
    return execDetached(container, script, { ...opts, files: undefined });
  }
  const [pid, code, at, out, err] = r.stdout.trim().split(/\s+/).map((x) => Number.parseInt(x, 10));
  if (r.exitCode !== 0 || !Number.isInteger(pid)) {
    throw new SandboxInfraError(`execDetached in ${container} failed (exit ${r.exitCode}): ${r.stderr.trim() || r.stdout.trim()}`);
  }
  const ended = [code, at, out, err].every(Number.isInteger);
  return ended ? { pid, exited: { exitCode: code, at, stdoutBytes: out, stderrBytes: err } } : { pid };
}

/** The launch's stdin with files: script.sh into the control folder, the files under their folder. */
async function seedArchive(controlDir: string, script: string, seed: NonNullable<ExecDetachedOptions['files']>): Promise<Buffer> {
  const dest = containerPath(seed.dir);
  const extra = [{ name: `${controlDir}/script.sh`, content: Buffer.from(script) }, ...seed.files.map((f) => ({ name: posix.join(dest, relativeIn(dest, f.path)), content: f.content }))];
  const chunks: Buffer[] = [];
  for await (const c of packEntries([], { extra })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
