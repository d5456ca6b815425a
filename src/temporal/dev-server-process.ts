/** The dev server's process: pid file, liveness, signals, log tail. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { probeTemporal, sleep, type ProbeResult } from './dev-server-probe';
import type { ResolvedDevServer } from './dev-server-config';

export function readPidFile(pidFile: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Alive and not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

/** A live process whose command line looks like `temporal server start-dev` (guards against pid reuse). */
export function isDevServerProcess(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('start-dev');
  } catch {
    return true; // no /proc: cannot tell; trust the pid file
  }
}

export function writeFileAtomic(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

export function removePidFileIf(pidFile: string, pid: number): void {
  if (readPidFile(pidFile) === pid) fs.rmSync(pidFile, { force: true });
}

export function logTail(file: string, lines = 20): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.split('\n').slice(-lines - 1).join('\n').trim();
  } catch {
    return '(no log)';
  }
}

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

// ---------------------------------------------------------------------------------------------
// ensure / stop

export async function waitUntilReady(
  cfg: ResolvedDevServer,
  timeoutMs: number,
  stillRunning: () => boolean,
): Promise<ProbeResult> {
  const deadline = Date.now() + timeoutMs;
  let last: ProbeResult = { ok: false, listening: false, reason: 'not probed yet' };
  while (Date.now() < deadline) {
    last = await probeTemporal(cfg.address, cfg.namespace, 3000);
    if (last.ok) return last;
    if (!stillRunning()) return { ...last, reason: `process exited (${last.reason ?? 'unknown'})` };
    await sleep(250);
  }
  return { ...last, reason: `not ready after ${timeoutMs} ms (${last.reason ?? 'unknown'})` };
}

