import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { repoRoot } from '../../src/paths';
import { SweepInputSchema, sweepWorkflowId, type SweepInputRaw, type SweepResult } from '../../src/model/sweep';
import { sweepWorkflow } from '../../src/workflows/sweep';

/** Shared by the sweep integration tests. */

export const TINY = 'test/fixtures/tasks/tiny';
export const TINY2 = 'test/fixtures/tasks/tiny2';

export function sweepInput(name: string, over: Partial<SweepInputRaw> = {}): SweepInputRaw {
  const raw: SweepInputRaw = {
    name,
    tasks: [TINY, TINY2],
    agents: ['oracle', 'noop'],
    repeats: 2,
    concurrency: 3,
    evaluation: { parallelism: 4, judge: { enabled: false, model: 'none' } },
    ...over,
  };
  SweepInputSchema.parse(raw);
  return raw;
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}`;
}

export async function executeSweep(client: Client, input: SweepInputRaw): Promise<SweepResult> {
  return client.workflow.execute(sweepWorkflow, { taskQueue: 'saasbench', workflowId: sweepWorkflowId(input.name), args: [input] });
}

/** Rollout workflow executions (every run) of a sweep, from visibility. */
export async function rolloutExecutions(client: Client, sweep: string): Promise<{ workflowId: string; runId: string; status: string }[]> {
  const out: { workflowId: string; runId: string; status: string }[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType='rolloutWorkflow' AND SaasbenchSweep='${sweep}'` })) {
    out.push({ workflowId: wf.workflowId, runId: wf.runId, status: wf.status.name });
  }
  return out;
}

export interface ActivityRecord {
  type: string;
  taskQueue: string;
  identity: string | null;
  attempt: number | null;
}

/** Every activity task scheduled in a workflow's history: its type, task queue, and the worker identity that started it. */
export async function activitiesOf(client: Client, workflowId: string): Promise<ActivityRecord[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, ActivityRecord>();
  for (const e of history.events ?? []) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), { type: s.activityType?.name ?? '?', taskQueue: s.taskQueue?.name ?? '?', identity: null, attempt: null });
    const st = e.activityTaskStartedEventAttributes;
    if (st) {
      const rec = scheduled.get(String(st.scheduledEventId));
      if (rec) Object.assign(rec, { identity: st.identity ?? null, attempt: st.attempt ?? null });
    }
  }
  return [...scheduled.values()];
}

export interface WorkerProcess {
  proc: ChildProcess;
  hostId: string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * A worker host in its own process (`saasbench worker --host-id <id>`) against the test's server.
 * Resolves once it polls. Logs go to <logDir>/worker-<hostId>-<n>.log.
 */
export async function spawnWorker(address: string, hostId: string, runsDir: string, logDir: string): Promise<WorkerProcess> {
  const log = join(logDir, `worker-${hostId}-${Date.now().toString(36)}.log`);
  const out = createWriteStream(log);
  const proc = spawn(process.execPath, [join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), 'worker', '--host-id', hostId], {
    cwd: repoRoot(),
    env: { ...process.env, TEMPORAL_ADDRESS: address, SAASBENCH_RUNS_DIR: runsDir, SAASBENCH_REAP_INTERVAL_SECONDS: '0', SAASBENCH_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.pipe(out);
  let ready = false;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${hostId} did not start polling in 60 s; log ${log}`)), 60_000);
    proc.stderr!.on('data', (b: Buffer) => {
      out.write(b);
      if (!ready && /polling/.test(b.toString())) {
        ready = true;
        clearTimeout(timer);
        resolve();
      }
    });
    proc.on('exit', (code) => {
      if (!ready) {
        clearTimeout(timer);
        reject(new Error(`worker ${hostId} exited with ${code} before polling: ${readFileSync(log, 'utf8').slice(-2000)}`));
      }
    });
  });
  return {
    proc,
    hostId,
    kill: (signal = 'SIGTERM') =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill(signal);
      }),
  };
}

export async function until(cond: () => Promise<boolean> | boolean, timeoutMs: number, what: string, everyMs = 200): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
