import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../src/paths';

export interface WorkerProcess {
  child: ChildProcess;
  startedAt: number;
  /** everything the worker wrote to stderr (its pino log) */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** A real `saasbench worker` in its own process, so a test can SIGKILL it like a crash would. */
export async function startWorkerProcess(opts: { address: string; hostId: string; runsDir: string; env?: Record<string, string> }): Promise<WorkerProcess> {
  const startedAt = Date.now();
  const child = spawn(process.execPath, [join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), 'worker', '--host-id', opts.hostId], {
    env: { ...process.env, TEMPORAL_ADDRESS: opts.address, SAASBENCH_RUNS_DIR: opts.runsDir, SAASBENCH_LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
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
  return {
    child,
    startedAt,
    output: () => out,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, signal);
      await exited;
    },
  };
}
