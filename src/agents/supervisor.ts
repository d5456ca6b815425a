import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { exec, execDetached, readFile } from '../sandbox';
import { writeAtomic } from '../runs/files';
import type { AgentExitReason, AgentRunSummary } from '../workflows/contracts';
import type { AgentContext, AgentDriver } from './types';

/** What a heartbeat carries, so a retried attempt can find the same process again. */
export interface SupervisionState {
  attempt: number;
  pid: number;
  controlDir: string;
  /** wall-clock ms when the agent process started (the budget runs from here) */
  startedAt: number;
  stdoutBytes: number;
  lastOutputAt: number;
}

export interface SuperviseOptions {
  budgetSeconds: number;
  idleSeconds: number;
  pollMs?: number;
  /** the last heartbeat of a previous attempt of this activity, if any */
  resumeFrom?: SupervisionState;
  heartbeat(state: SupervisionState): void;
  sleep(ms: number): Promise<void>;
}

const CONTROL_ROOT = '/tmp/.saasbench/agent';

/**
 * Start the agent detached inside its container (or re-attach to it) and watch it until it exits,
 * runs out of budget or goes quiet. The process outlives this function's host process: a worker
 * crash loses nothing but the watching.
 */
export async function superviseAgent(driver: AgentDriver, ctx: AgentContext, opts: SuperviseOptions): Promise<AgentRunSummary> {
  const pollMs = opts.pollMs ?? 2000;
  let state = opts.resumeFrom && (await isAlive(ctx.container, opts.resumeFrom)) ? opts.resumeFrom : undefined;
  if (state) {
    ctx.log.info({ pid: state.pid }, 're-attached to running agent process');
  } else {
    await driver.prepare?.(ctx);
    const attempt = (opts.resumeFrom?.attempt ?? 0) + 1;
    const controlDir = `${CONTROL_ROOT}/attempt-${attempt}`;
    const launch = driver.launch(ctx);
    const { pid } = await execDetached(ctx.container, launch.script, { workdir: launch.workdir ?? ctx.workspace, env: launch.env, controlDir });
    state = { attempt, pid, controlDir, startedAt: Date.now(), stdoutBytes: 0, lastOutputAt: Date.now() };
    ctx.log.info({ pid, attempt }, 'agent process started');
  }
  opts.heartbeat(state);

  let reason: AgentExitReason | undefined;
  let exitCode: number | null = null;
  for (;;) {
    exitCode = await readExitCode(ctx.container, state.controlDir);
    if (exitCode !== null) {
      reason = exitCode === 0 ? 'completed' : 'failed';
      break;
    }
    const now = Date.now();
    const size = await fileSize(ctx.container, `${state.controlDir}/stdout.log`);
    if (size !== state.stdoutBytes) state = { ...state, stdoutBytes: size, lastOutputAt: now };
    if (now - state.startedAt >= opts.budgetSeconds * 1000) reason = 'budget_exhausted';
    else if (now - state.lastOutputAt >= opts.idleSeconds * 1000) reason = 'idle_timeout';
    if (reason) {
      await killGroup(ctx.container, state.pid);
      exitCode = await readExitCode(ctx.container, state.controlDir);
      break;
    }
    opts.heartbeat(state);
    await opts.sleep(pollMs);
  }
  await collectLogs(ctx, state);
  const agentSeconds = Math.round((Date.now() - state.startedAt) / 100) / 10;
  return {
    agent: driver.name,
    model: ctx.model,
    exitReason: reason,
    exitCode,
    attempts: state.attempt,
    agentSeconds,
    message: messageOf(reason, exitCode, agentSeconds),
  };
}

async function isAlive(container: string, s: SupervisionState): Promise<boolean> {
  const r = await exec(container, ['bash', '-c', `test -f ${s.controlDir}/exit_code || kill -0 ${s.pid}`]).catch(() => null);
  return r?.exitCode === 0;
}

async function readExitCode(container: string, controlDir: string): Promise<number | null> {
  const buf = await readFile(container, `${controlDir}/exit_code`);
  if (!buf) return null;
  const n = Number(buf.toString().trim());
  return Number.isFinite(n) ? n : null;
}

async function fileSize(container: string, path: string): Promise<number> {
  const r = await exec(container, ['bash', '-c', `stat -c %s ${path} 2>/dev/null || echo 0`]);
  return Number(r.stdout.trim()) || 0;
}

/** The agent runs in its own session, so its pid is also its process-group id. */
async function killGroup(container: string, pid: number): Promise<void> {
  await exec(container, ['bash', '-c', `kill -TERM -${pid} 2>/dev/null; for i in 1 2 3 4 5; do kill -0 ${pid} 2>/dev/null || exit 0; sleep 1; done; kill -KILL -${pid} 2>/dev/null; true`]);
}

async function collectLogs(ctx: AgentContext, s: SupervisionState): Promise<void> {
  const dir = join(ctx.runDir, 'agent', `attempt-${s.attempt}`);
  mkdirSync(dir, { recursive: true });
  for (const name of ['stdout.log', 'stderr.log']) {
    const buf = await readFile(ctx.container, `${s.controlDir}/${name}`);
    writeAtomic(join(dir, name), (buf ?? Buffer.alloc(0)).toString('utf8'));
  }
}

function messageOf(reason: AgentExitReason, code: number | null, secs: number): string {
  switch (reason) {
    case 'completed':
      return `agent finished after ${secs}s`;
    case 'failed':
      return `agent exited with code ${code} after ${secs}s`;
    case 'budget_exhausted':
      return `agent stopped: wall-clock budget exhausted after ${secs}s`;
    case 'idle_timeout':
      return `agent stopped: no output for too long (after ${secs}s)`;
    default:
      return `agent ended: ${reason}`;
  }
}
