/**
 * Sweep scale: a sweep of SWEEP_SCALE_ROLLOUTS (1,000) stand-in rollouts on the time-skipping test
 * server — the real sweepWorkflow with its continue-as-new chain, stand-in rollout workflows
 * (test/integration/sweep-fake-workflows.ts: a timer and a synthetic result), the task-resolution
 * and report activities real, the existing-rollout look-up stubbed (nothing exists yet).
 * Prints wall time, events and bytes of every sweep run (each must stay < 10,000 events and
 * < 5 MB), the worker's memory, and the time to write the sweep report of 1,000 rollouts (< 10 s).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { sweepResolveTasks, sweepWriteReport } from '../src/activities';
import { writeSweepReport } from '../src/report/html/write';
import { repoRoot } from '../src/paths';
import type { LookupAnswer, SweepInputRaw, SweepItem, SweepResult } from '../src/model/sweep';
import { sweepWorkflowId } from '../src/model/sweep';
import { timeSkipping } from '../test/helpers/temporal';

const N = Number(process.env.SWEEP_SCALE_ROLLOUTS ?? 1000);
const QUEUE = 'bench-sweep-scale';
const MB = 1024 * 1024;

export interface RunStats {
  runId: string;
  events: number;
  bytes: number;
}

/** Every run of a workflow's continue-as-new chain, from its first run on: events and encoded size. */
export async function chainStats(fetch: (runId: string) => Promise<temporal.api.history.v1.IHistory>, firstRunId: string): Promise<RunStats[]> {
  const out: RunStats[] = [];
  for (let runId: string | null | undefined = firstRunId; runId; ) {
    const h = await fetch(runId);
    const events = h.events ?? [];
    out.push({ runId, events: events.length, bytes: temporal.api.history.v1.History.encode(h).finish().length });
    runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  }
  return out;
}

async function main(): Promise<void> {
  process.chdir(repoRoot()); // the sweep names its tasks relative to the repository
  process.env.SAASBENCH_RUNS_DIR = mkdtempSync(join(tmpdir(), 'bench-sweep-scale-'));
  process.env.SAASBENCH_LOG_LEVEL ??= 'warn';
  const env = await timeSkipping();
  let reportMs = 0;
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address: env.address }),
    taskQueue: QUEUE,
    workflowsPath: require.resolve('../test/integration/sweep-fake-workflows'),
    activities: {
      sweepResolveTasks,
      // nothing of this sweep exists yet (the real look-up asks the server one describe per rollout)
      sweepLookupRollouts: async (i: { items: SweepItem[] }): Promise<LookupAnswer[]> => i.items.map((x) => ({ workflowId: x.workflowId, state: 'absent' })),
      sweepWriteReport: async (i: { result: SweepResult }) => {
        const t0 = performance.now();
        const r = await sweepWriteReport(i);
        reportMs = performance.now() - t0;
        return r;
      },
    },
    maxConcurrentWorkflowTaskExecutions: 40,
  });
  let rssMax = 0;
  let heapMax = 0;
  const sample = setInterval(() => {
    const m = process.memoryUsage();
    rssMax = Math.max(rssMax, m.rss);
    heapMax = Math.max(heapMax, m.heapUsed);
  }, 100);
  try {
    const name = `bench-scale-${Date.now().toString(36)}`;
    const input: SweepInputRaw = {
      name,
      tasks: ['test/fixtures/tasks/tiny', 'test/fixtures/tasks/tiny2'],
      agents: ['oracle', 'noop'],
      // 2 tasks x 2 agents x 5 models = 20 configurations (a sweep allows 100 repeats at most)
      models: ['m1', 'm2', 'm3', 'm4', 'm5'],
      repeats: Math.ceil(N / 20),
      concurrency: 50,
      taskQueue: QUEUE,
      evaluation: { parallelism: 1, judge: { enabled: false, model: 'none' } },
    };
    const t0 = performance.now();
    const r = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('sweepWorkflow', { taskQueue: QUEUE, workflowId: sweepWorkflowId(name), args: [input] });
      return { result: (await handle.result()) as SweepResult, firstRunId: handle.firstExecutionRunId };
    });
    const wallMs = performance.now() - t0;
    if (r.result.counts.completed !== Math.ceil(N / 20) * 20) throw new Error(`sweep ${name}: ${JSON.stringify(r.result.counts)}`);
    const runs = await chainStats(async (runId) => (await env.client.workflow.getHandle(sweepWorkflowId(name), runId).fetchHistory()) as temporal.api.history.v1.IHistory, r.firstRunId);
    // the report writer alone, again, on the final result (a warm second write: no rollout pages here)
    const w0 = performance.now();
    await writeSweepReport(r.result, mkdtempSync(join(tmpdir(), 'bench-sweep-report-')));
    const rewriteMs = performance.now() - w0;

    const maxEvents = Math.max(...runs.map((x) => x.events));
    const maxBytes = Math.max(...runs.map((x) => x.bytes));
    console.log(`${r.result.counts.completed} stand-in rollouts, concurrency ${input.concurrency}, continue-as-new every ${r.result.input.continueAsNewEvery} finished rollouts (time-skipping test server)`);
    console.log(`wall time: ${(wallMs / 1000).toFixed(1)} s`);
    console.log(`sweep workflow runs: ${runs.length}; events per run max ${maxEvents}, mean ${Math.round(runs.reduce((s, x) => s + x.events, 0) / runs.length)}; bytes per run max ${(maxBytes / MB).toFixed(2)} MB, last ${(runs[runs.length - 1].bytes / MB).toFixed(2)} MB`);
    console.log(`limits: < 10,000 events ${maxEvents < 10_000 ? 'OK' : 'EXCEEDED'}, < 5 MB ${maxBytes < 5 * MB ? 'OK' : 'EXCEEDED'}`);
    console.log(`worker process memory: max RSS ${(rssMax / MB).toFixed(0)} MB, max heap used ${(heapMax / MB).toFixed(0)} MB`);
    console.log(`sweep report for ${r.result.rollouts.length} rollouts: ${(reportMs / 1000).toFixed(2)} s in the activity, ${(rewriteMs / 1000).toFixed(2)} s written again directly (limit 10 s)`);
    if (maxEvents >= 10_000 || maxBytes >= 5 * MB || reportMs >= 10_000) process.exitCode = 1;
  } finally {
    clearInterval(sample);
    await env.teardown();
  }
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
