import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxBackend } from '../sandbox/backend';
import { writeAtomic } from '../runs/files';
import type { AgentAttemptRecord, AgentExitReason, AgentRunSummary } from '../model/rollout';
import type { AgentContext, AgentDriver, AgentLaunch, AttemptOutput } from './types';
import { SaasbenchError } from '../errors';

/** What a heartbeat carries, so a retried activity attempt can find the same process again. */
export interface SupervisionState {
  attempt: number;
  pid: number;
  controlDir: string;
  /** wall-clock ms when this attempt's process started */
  attemptStartedAt: number;
  /** agent time of earlier, finished attempts (ms): the budget is shared by all attempts */
  priorAgentMs: number;
  stdoutBytes: number;
  lastOutputAt: number;
  lastBeatAt: number;
  transientRetries: number;
  history: AgentAttemptRecord[];
  /** rate governor waits left out of the agent's time so far (this process's count; `watch` shows it live) */
  unbilledMs?: number;
}

export interface SuperviseOptions {
  budgetSeconds: number;
  idleSeconds: number;
  /** retries after a transient gateway failure (paper: 1) and the pause before each (paper: 60 s) */
  transientRetries: number;
  transientBackoffSeconds: number;
  /** the process vanished without an exit record (host reboot, OOM kill): resume its session, or give up */
  onLostProcess: 'resume' | 'fail';
  pollMs?: number;
  /**
   * Wall ms so far that are not the agent's (the rate governor's waits, src/governor/gate.ts): the
   * deadline and the idle window move by them, and the agent's seconds leave them out.
   */
  unbilledMs?: () => number;
  /** the last heartbeat of a previous attempt of this activity, if any */
  resumeFrom?: SupervisionState;
  /**
   * The supervision state of a snapshot restored into a new stack (a rollout moved to another
   * host): its process is gone, so the session is resumed as after a lost process.
   */
  restoredFrom?: SupervisionState;
  /**
   * Files the workspace starts with (the PRD and the knowledge base), written by the first launch's
   * own exec; never by a resumed or restored one (the workspace has them, perhaps edited).
   */
  seed?: { dir: string; files: { path: string; content: Buffer }[] };
  /** called on every poll while the agent runs (periodic snapshots); its own errors are its own */
  onPoll?(state: SupervisionState): Promise<void>;
  heartbeat(state: SupervisionState): void;
  sleep(ms: number): Promise<void>;
}

const CONTROL_ROOT = '/tmp/.saasbench/agent';

/**
 * Start the agent detached inside its container (or re-attach to it) and watch it until it is done.
 * The process outlives this function's host process: a worker crash loses nothing but the watching.
 */
export async function superviseAgent(driver: AgentDriver, ctx: AgentContext, opts: SuperviseOptions): Promise<AgentRunSummary> {
  let state = await attach(driver, ctx, opts);
  const unbilled = unbilledClock(opts);
  for (;;) {
    const watched = await watch(ctx, state, opts, unbilled);
    state = unbilled(watched.state);
    if (watched.lost) {
      state = await recoverLost(driver, ctx, state, opts);
      continue;
    }
    const { reason, exitCode } = watched;
    const out = await collectAttempt(ctx, state, exitCode, watched.sizes);
    const ms = Math.max(0, watched.endedAt - state.attemptStartedAt);
    const done = reason === 'completed' || reason === 'failed';
    const finished = done && (driver.completed ? driver.completed(out) : exitCode === 0);
    const transient = done && !finished ? driver.transientFailure?.(out) ?? null : null;
    const record: AgentAttemptRecord = { attempt: state.attempt, exitReason: finished ? 'completed' : reason === 'completed' ? 'failed' : reason, exitCode, seconds: secs(ms), transient };
    state = { ...state, priorAgentMs: state.priorAgentMs + ms, history: [...state.history, record] };
    const remainingMs = opts.budgetSeconds * 1000 - state.priorAgentMs;
    if (transient && state.transientRetries < opts.transientRetries && remainingMs > opts.transientBackoffSeconds * 1000) {
      ctx.log.warn({ attempt: state.attempt, transient }, 'transient gateway failure: retrying after backoff');
      await sleepWithBeats(opts, state, opts.transientBackoffSeconds * 1000);
      state = await launch(driver.launch(ctx), ctx, { ...state, transientRetries: state.transientRetries + 1 }, opts);
      continue;
    }
    return summary(driver, ctx, state, record);
  }
}

async function attach(driver: AgentDriver, ctx: AgentContext, opts: SuperviseOptions): Promise<SupervisionState> {
  const prev = opts.resumeFrom;
  if (prev) {
    const p = await probe(ctx.sandbox, ctx.container, prev);
    if (p.alive || p.exitCode !== null) {
      ctx.log.info({ pid: prev.pid, attempt: prev.attempt }, 're-attached to the agent process');
      return prev;
    }
    return recoverLost(driver, ctx, prev, opts);
  }
  await driver.prepare?.(ctx);
  if (opts.restoredFrom) return recoverLost(driver, ctx, opts.restoredFrom, opts);
  const initial: SupervisionState = { attempt: 0, pid: 0, controlDir: '', attemptStartedAt: 0, priorAgentMs: 0, stdoutBytes: 0, lastOutputAt: 0, lastBeatAt: 0, transientRetries: 0, history: [] };
  return launch(driver.launch(ctx), ctx, initial, opts, opts.seed);
}

/**
 * The process vanished without an exit record (killed, OOM, container restart). The agent time up
 * to the last sign of life was spent; the rest of the budget goes to a resumed session, if the
 * agent can resume and resuming is allowed.
 */
async function recoverLost(driver: AgentDriver, ctx: AgentContext, prev: SupervisionState, opts: SuperviseOptions): Promise<SupervisionState> {
  const spent = Math.max(0, prev.lastBeatAt - prev.attemptStartedAt);
  const lost: SupervisionState = {
    ...prev,
    priorAgentMs: prev.priorAgentMs + spent,
    history: [...prev.history, { attempt: prev.attempt, exitReason: 'infrastructure', exitCode: null, seconds: secs(spent), transient: 'process lost without an exit record' }],
  };
  const remaining = opts.budgetSeconds - lost.priorAgentMs / 1000;
  const out = await collectAttempt(ctx, prev, null);
  const resumeLaunch = opts.onLostProcess === 'resume' && remaining > 0 ? driver.resume?.(ctx, out, remaining) ?? null : null;
  if (!resumeLaunch) {
    const why = opts.onLostProcess !== 'resume' ? 'resume is disabled' : remaining <= 0 ? 'no budget left' : `agent ${driver.name} cannot resume its session`;
    throw new AgentLostError(`agent process ${prev.pid} disappeared without an exit record (attempt ${prev.attempt}); ${why}`);
  }
  ctx.log.warn({ pid: prev.pid, remainingSeconds: Math.round(remaining) }, 'agent process lost: resuming its session');
  return launch(resumeLaunch, ctx, lost, opts);
}

/** An infrastructure failure the workflow reports rather than retries. */
export class AgentLostError extends SaasbenchError {
  static override readonly nonRetryable = true;
  constructor(message: string) {
    super(message);
    this.name = 'AgentLostError';
  }
}

async function launch(l: AgentLaunch, ctx: AgentContext, prev: SupervisionState, opts: SuperviseOptions, files?: SuperviseOptions['seed']): Promise<SupervisionState> {
  const attempt = prev.attempt + 1;
  const controlDir = `${CONTROL_ROOT}/attempt-${attempt}`;
  const env = ctx.extraEnv ? { ...ctx.extraEnv, ...l.env } : l.env;
  const { pid, exited } = await ctx.sandbox.execDetached(ctx.container, l.script, { workdir: l.workdir ?? ctx.workspace, env, controlDir, settleMs: SETTLE_MS, ...(files ? { files } : {}) });
  const now = Date.now();
  const state = { ...prev, attempt, pid, controlDir, attemptStartedAt: now, stdoutBytes: 0, lastOutputAt: now, lastBeatAt: now };
  ctx.log.info({ pid, attempt }, 'agent process started');
  if (exited) settled.set(state, { alive: false, exitCode: exited.exitCode, exitedAt: exited.at, stdoutBytes: exited.stdoutBytes, sizes: { stdout: exited.stdoutBytes, stderr: exited.stderrBytes } });
  beat(opts, state);
  return state;
}

/**
 * How long a launch waits for a process that ends at once, and what it saw: the first watch of that
 * state takes it instead of probing (one exec less for a noop agent or a crash on start).
 * Keyed by the state object launch returned; never persisted.
 */
const SETTLE_MS = 50;
const settled = new WeakMap<SupervisionState, Probe>();

type Watched = { state: SupervisionState } & ({ lost: true } | { lost: false; reason: AgentExitReason; exitCode: number | null; endedAt: number; sizes?: LogSizes });

/**
 * Time the agent spent waiting on the rate governor is not its own: each new unbilled ms moves the
 * attempt's start and its last output later, which extends the deadline and the idle window alike.
 * The clock is this process's (the relay's): a re-attached attempt starts counting afresh.
 */
function unbilledClock(opts: SuperviseOptions): (s: SupervisionState) => SupervisionState {
  let seen = opts.unbilledMs?.() ?? 0;
  return (s) => {
    const now = opts.unbilledMs?.() ?? 0;
    const d = now - seen;
    seen = now;
    return d > 0 ? { ...s, attemptStartedAt: s.attemptStartedAt + d, lastOutputAt: s.lastOutputAt + d, unbilledMs: (s.unbilledMs ?? 0) + d } : s;
  };
}

async function watch(ctx: AgentContext, start: SupervisionState, opts: SuperviseOptions, unbilled: (s: SupervisionState) => SupervisionState = (s) => s): Promise<Watched> {
  let state = start;
  let first = settled.get(start);
  // the first probes come quickly, then every pollMs: an agent that is done at once (noop, a
  // crash on start) must not cost a full poll interval (bench/sweep-overhead.ts)
  let pollMs = Math.min(25, opts.pollMs ?? 2000);
  for (;;) {
    state = unbilled(state);
    const p = first ?? (await probe(ctx.sandbox, ctx.container, state));
    first = undefined;
    // The exit record's own timestamp, not the moment we noticed it: a worker that was down
    // while the agent finished must not bill the agent for the outage.
    if (p.exitCode !== null) return { lost: false, reason: p.exitCode === 0 ? 'completed' : 'failed', exitCode: p.exitCode, endedAt: p.exitedAt ?? Date.now(), state, sizes: p.sizes };
    if (!p.alive) return { lost: true, state };
    const now = Date.now();
    if (p.stdoutBytes !== state.stdoutBytes) state = { ...state, stdoutBytes: p.stdoutBytes, lastOutputAt: now };
    let reason: AgentExitReason | undefined;
    if (state.priorAgentMs + (now - state.attemptStartedAt) >= opts.budgetSeconds * 1000) reason = 'budget_exhausted';
    else if (now - state.lastOutputAt >= opts.idleSeconds * 1000) reason = 'idle_timeout';
    if (reason) {
      await killGroup(ctx.sandbox, ctx.container, state.pid);
      return { lost: false, reason, exitCode: (await probe(ctx.sandbox, ctx.container, state)).exitCode, endedAt: Date.now(), state };
    }
    state = beat(opts, state);
    await opts.onPoll?.(state);
    await opts.sleep(pollMs);
    pollMs = Math.min(pollMs * 2, opts.pollMs ?? 2000);
  }
}

/** One exec per poll: exit record, output size and liveness together. */
type Probe = { exitCode: number | null; exitedAt: number | null; stdoutBytes: number; alive: boolean; sizes?: LogSizes };

async function probe(sandbox: SandboxBackend, container: string, s: SupervisionState): Promise<Probe> {
  const d = s.controlDir;
  // exit_code is read after the liveness check so a process that ends in between is not "lost"
  const cmd = `if kill -0 ${s.pid} 2>/dev/null; then a=1; else a=0; fi; s=$(stat -c %s ${d}/stdout.log 2>/dev/null || echo 0); e=$(cat ${d}/exit_code 2>/dev/null); t=$(date -r ${d}/exit_code +%s%3N 2>/dev/null); se=$(stat -c %s ${d}/stderr.log 2>/dev/null || echo -1); echo "$a $s \${e:-none} \${t:-0} $se"`;
  const r = await sandbox.exec(container, ['bash', '-c', cmd]);
  const [alive, size, code, mtime, errSize] = r.stdout.trim().split(/\s+/);
  if (r.exitCode !== 0 || alive === undefined) throw new Error(`cannot probe agent process ${s.pid}: ${r.stderr.trim()}`);
  const n = Number(code);
  const exitCode = code !== 'none' && Number.isFinite(n) ? n : null;
  // sizes once the exit record is there (the logs are complete): collectAttempt skips empty ones
  const sizes = exitCode !== null && errSize !== undefined ? { stdout: Number(size), stderr: Number(errSize) } : undefined;
  return { alive: alive === '1', stdoutBytes: Number(size) || 0, exitCode, exitedAt: exitCode !== null && Number(mtime) > 0 ? Number(mtime) : null, sizes };
}

function beat(opts: SuperviseOptions, s: SupervisionState): SupervisionState {
  const next = { ...s, lastBeatAt: Date.now() };
  opts.heartbeat(next);
  return next;
}

async function sleepWithBeats(opts: SuperviseOptions, s: SupervisionState, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    opts.heartbeat(s);
    await opts.sleep(Math.min(5000, until - Date.now()));
  }
}

/** The agent runs in its own session, so its pid is also its process-group id. */
async function killGroup(sandbox: SandboxBackend, container: string, pid: number): Promise<void> {
  await sandbox.exec(container, ['bash', '-c', `kill -TERM -${pid} 2>/dev/null; for i in 1 2 3 4 5; do kill -0 ${pid} 2>/dev/null || exit 0; sleep 1; done; kill -KILL -${pid} 2>/dev/null; true`]);
}

/** Log sizes seen with the exit record (-1: no such file). */
type LogSizes = { stdout: number; stderr: number };

/**
 * Copy the attempt's logs out of the container (kept per attempt, beside any retry's). A log the
 * exit probe saw empty is not read: each read is a Docker round trip (~0.08 s) and the engine
 * serialises a container's reads, so a noop agent's two empty logs cost ~0.16 s (bench/sweep-overhead.ts).
 */
async function collectAttempt(ctx: AgentContext, s: SupervisionState, exitCode: number | null, sizes?: LogSizes): Promise<AttemptOutput> {
  const dir = join(ctx.runDir, 'agent', `attempt-${s.attempt}`);
  mkdirSync(dir, { recursive: true });
  const text: Record<string, string> = {};
  // both logs at once: each read is a Docker round trip
  const names = ['stdout.log', 'stderr.log'];
  const known = (name: string) => (name === 'stdout.log' ? sizes?.stdout : sizes?.stderr);
  const bufs = await Promise.all(names.map((name) => (known(name) === 0 ? Buffer.alloc(0) : ctx.sandbox.readFile(ctx.container, `${s.controlDir}/${name}`))));
  names.forEach((name, k) => {
    text[name] = (bufs[k] ?? Buffer.alloc(0)).toString('utf8');
    writeAtomic(join(dir, name), text[name]);
  });
  return { attempt: s.attempt, exitCode, stdout: text['stdout.log'], stderr: text['stderr.log'] };
}

const secs = (ms: number) => Math.round(ms / 100) / 10;

function summary(driver: AgentDriver, ctx: AgentContext, s: SupervisionState, last: AgentAttemptRecord): AgentRunSummary {
  const agentSeconds = secs(s.priorAgentMs);
  return {
    agent: driver.name,
    model: ctx.model,
    exitReason: last.exitReason,
    exitCode: last.exitCode,
    attempts: s.history.length,
    agentSeconds,
    message: messageOf(last, agentSeconds, s.history.length),
    history: s.history,
  };
}

function messageOf(r: AgentAttemptRecord, total: number, attempts: number): string {
  const tail = attempts > 1 ? ` (${attempts} attempts)` : '';
  switch (r.exitReason) {
    case 'completed':
      return `agent finished after ${total}s${tail}`;
    case 'failed':
      return `agent exited with code ${r.exitCode}${r.transient ? ` on a transient failure (${r.transient})` : ''} after ${total}s${tail}`;
    case 'budget_exhausted':
      return `agent stopped: wall-clock budget exhausted after ${total}s${tail}`;
    case 'idle_timeout':
      return `agent stopped: no output for too long (after ${total}s)${tail}`;
    default:
      return `agent ended: ${r.exitReason}${tail}`;
  }
}
