import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../src/paths';

export interface WorkerProcess {
  child: ChildProcess;
  startedAt: number;
  /** everything the worker wrote to stdout and stderr (its pino log) */
  output(): string;
  /** the signal to the worker's whole process group (a crash of the host), then wait for its exit */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /**
   * A clean shutdown: SIGTERM to the worker alone (it stops its own children), wait for its exit,
   * SIGKILL to the group when it takes longer than graceMs.
   */
  stop(graceMs?: number): Promise<void>;
}

/** The provider credentials a developer's shell may hold: tests that plant their own keep these out of the worker. */
export const PROVIDER_ENV = /^(ANTHROPIC|OPENAI|CLAUDE|CODEX)_/;

export interface WorkerProcessOptions {
  address: string;
  hostId: string;
  runsDir: string;
  /** set on top of the inherited environment (never filtered by dropEnv) */
  env?: Record<string, string>;
  /** variables of this process's environment whose names match are not passed to the worker */
  dropEnv?: RegExp;
}

/** A real `saasbench worker` in its own process, so a test can SIGKILL it like a crash would. */
export async function startWorkerProcess(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  const startedAt = Date.now();
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !opts.dropEnv?.test(k)));
  const child = spawn(process.execPath, [join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), 'worker', '--host-id', opts.hostId], {
    env: { ...inherited, TEMPORAL_ADDRESS: opts.address, SAASBENCH_RUNS_DIR: opts.runsDir, SAASBENCH_LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const running = () => child.exitCode === null && child.signalCode === null;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`worker did not start:\n${out}`)), 60_000);
    const check = () => {
      if (out.includes('worker polling')) {
        clearTimeout(t);
        resolve();
      }
    };
    child.stderr!.on('data', check);
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}:\n${out}`)));
  });
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (running()) process.kill(-child.pid!, signal);
    await exited;
  };
  return {
    child,
    startedAt,
    output: () => out,
    kill,
    async stop(graceMs = 15_000) {
      if (!running()) return;
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), graceMs)));
      const how = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (how === 'late') await kill('SIGKILL');
    },
  };
}
