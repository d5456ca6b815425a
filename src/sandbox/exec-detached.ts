// execDetached: processes (agents, servers) that must outlive the exec call and the worker that
// made it, started in ONE exec that can stay open as a command channel (exec-session.ts).
import { posix } from 'node:path';
import { shQuote } from '../shell';
import { SandboxInfraError, SandboxInputError } from './errors';
import { exec, openExec } from './exec';
import { ExecSession, SESSION_LOOP } from './exec-session';
import { takeWarmExec } from './exec-warm';
import { containerPath, relativeIn, writeFiles } from './files';
import { packEntries } from './tar';

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
  /**
   * Keep the launch exec open as a command channel (Detached.session) for this process's later
   * execs into the container (session-backend.ts): a write and a read each instead of an exec.
   */
  session?: boolean;
}

/** the launch's exit code when the image has no tar to unpack `files` */
const NO_TAR = 75;

/** What execDetached saw of the process; `exited` when it ended within `settleMs`. */
export interface Detached {
  pid: number;
  exited?: { exitCode: number; at: number; stdoutBytes: number; stderrBytes: number };
  /** with `session`: the open launch exec, ready for commands (close it when done) */
  session?: ExecSession;
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
    // stdin: the files' tar stream ($1 bytes) holding the script too, else the script; each ends
    // where its size says (or at a NUL), so an open stdin can carry commands after it
    ...(seed
      ? [`command -v tar > /dev/null || exit ${NO_TAR}`, 'head -c "$1" | tar -xf - -C / || exit 1', `cd ${q(dir)} || exit 1`]
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
    // the channel's commands get the container's environment, not the launch's (PATH kept: a
    // launch only ever adds to it)
    ...(opts.session ? ['exec 3<&- && cd /', ...unsetEnv(opts.env), SESSION_LOOP] : []),
  ].join('\n');
  const archive = seed ? await seedArchive(dir, script, seed) : null;
  const stdin = archive ?? Buffer.from(`${script}\0`);
  const cmd = ['bash', '-c', launch, runner, String(archive?.length ?? 0)];
  if (opts.session) return launchSession(container, script, opts, cmd, stdin);
  // no exec timeout (its wrapper is two more processes): the launch bounds its own waits
  const r = await exec(container, cmd, { env: opts.env, user: opts.user, stdin });
  if (seed && r.exitCode === NO_TAR) return withoutTar(container, script, opts);
  if (r.exitCode !== 0) throw new SandboxInfraError(`execDetached in ${container} failed (exit ${r.exitCode}): ${r.stderr.trim() || r.stdout.trim()}`);
  return parseStatus(container, r.stdout);
}

function unsetEnv(env: Record<string, string> | undefined): string[] {
  const names = Object.keys(env ?? {}).filter((k) => k !== 'PATH' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k));
  return names.length ? [`unset ${names.join(' ')}`] : [];
}

/** No tar in the image: the files by a separate write, then the launch. */
async function withoutTar(container: string, script: string, opts: ExecDetachedOptions): Promise<Detached> {
  await writeFiles(container, opts.files!.dir, opts.files!.files);
  return execDetached(container, script, { ...opts, files: undefined });
}

function parseStatus(container: string, line: string): Detached {
  const [pid, code, at, out, err] = line.trim().split(/\s+/).map((x) => Number.parseInt(x, 10));
  if (!Number.isInteger(pid)) throw new SandboxInfraError(`execDetached in ${container} failed: ${line.trim().slice(0, 400)}`);
  const ended = [code, at, out, err].every(Number.isInteger);
  return ended ? { pid, exited: { exitCode: code, at, stdoutBytes: out, stderrBytes: err } } : { pid };
}

/** The launch with its exec kept open: the status line, then the command loop. */
async function launchSession(container: string, script: string, opts: ExecDetachedOptions, cmd: string[], stdin: Buffer): Promise<Detached> {
  // the exec provision opened ahead (exec-warm.ts) when there is one: it runs as the image's user
  const warm = opts.user ? null : await takeWarmExec(container, cmd, opts.env);
  const { stream, execObj: e } = warm ?? (await openExec(container, cmd, { env: opts.env, user: opts.user }, true));
  const session = new ExecSession(stream);
  stream.write(stdin);
  let line: string;
  try {
    // the launch bounds its own waits (the pid: 30 s)
    line = await session.readLine(60_000);
  } catch (err) {
    session.close();
    const code = await e.inspect().then((i) => (i.Running ? null : i.ExitCode), () => null);
    if (code === NO_TAR && opts.files) return withoutTar(container, script, opts);
    throw new SandboxInfraError(`execDetached in ${container} failed (exit ${code ?? '?'}): ${session.stderrText.trim() || (err as Error).message}`);
  }
  return { ...parseStatus(container, line), session };
}

/** The launch's stdin with files: script.sh into the control folder, the files under their folder. */
async function seedArchive(controlDir: string, script: string, seed: NonNullable<ExecDetachedOptions['files']>): Promise<Buffer> {
  const dest = containerPath(seed.dir);
  const extra = [{ name: `${controlDir}/script.sh`, content: Buffer.from(script) }, ...seed.files.map((f) => ({ name: posix.join(dest, relativeIn(dest, f.path)), content: f.content }))];
  const chunks: Buffer[] = [];
  for await (const c of packEntries([], { extra })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
