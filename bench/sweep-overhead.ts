/**
 * Harness overhead of a sweep: a 20-rollout sweep of the tiny fixture task with the noop agent
 * (concurrency 1, so nothing overlaps), against the sum of the raw container start + stop times of
 * the same stack done 20 times directly through the sandbox API. The ratio is what Temporal,
 * the workflows, evaluation, persistence and the reports cost on top of Docker itself.
 * A second sweep with concurrency 4 shows what parallel rollouts buy back.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { buildImages, downStack, loadCompose, stackIsolation, upStack } from '../src/sandbox';
import { sandboxBackend } from '../src/sandbox/factory';
import { loadRunnableTask } from '../src/tasks/load';
import { startWorker } from '../src/worker/worker';
import { temporalBin } from '../src/temporal/tools';
import { repoRoot } from '../src/paths';
import { SA } from '../src/workflows/search-attributes';
import { sweepWorkflowId, type SweepInputRaw, type SweepResult } from '../src/model/sweep';
import { meanPhases, rolloutPhases } from './rollout-phases';

const N = Number(process.env.SWEEP_BENCH_ROLLOUTS ?? 20);

/**
 * `isolated`: the stack exactly as a rollout gets it (sandbox backend, the agent's resource limits
 * and the rollout firewall); otherwise plain containers (upStack without isolation).
 */
async function rawStartStop(isolated: boolean): Promise<{ upMs: number; downMs: number }> {
  const task = loadRunnableTask(join(repoRoot(), 'test', 'fixtures', 'tasks', 'tiny'));
  const project = loadCompose(task.environment.composeFile);
  const images = await buildImages(project, task.id);
  let upMs = 0;
  let downMs = 0;
  for (let i = 0; i < N; i++) {
    const rolloutKey = `bench-raw-${Date.now().toString(36)}-${i}`;
    const t0 = Date.now();
    if (isolated) await sandboxBackend().up({ rolloutKey, taskId: task.id, project, images, isolation: stackIsolation(task.environment.appService, task.limits) });
    else await upStack({ rolloutKey, taskId: task.id, project, images });
    const t1 = Date.now();
    await downStack(rolloutKey);
    upMs += t1 - t0;
    downMs += Date.now() - t1;
  }
  return { upMs, downMs };
}

async function sweep(env: TestWorkflowEnvironment, concurrency: number, repeats = N): Promise<{ ms: number; r: SweepResult }> {
  const name = `bench-overhead-${repeats === N ? `c${concurrency}` : 'warm'}-${Date.now().toString(36)}`;
  const input: SweepInputRaw = {
    name,
    tasks: ['test/fixtures/tasks/tiny'],
    agents: ['noop'],
    repeats,
    concurrency,
    evaluation: { parallelism: 4, judge: { enabled: false, model: 'none' } },
  };
  const t0 = Date.now();
  const r = (await env.client.workflow.execute('sweepWorkflow', { taskQueue: 'saasbench', workflowId: sweepWorkflowId(name), args: [input] })) as SweepResult;
  return { ms: Date.now() - t0, r };
}

async function main(): Promise<void> {
  process.env.SAASBENCH_RUNS_DIR = mkdtempSync(join(tmpdir(), 'bench-sweep-'));
  process.env.SAASBENCH_LOG_LEVEL ??= 'warn';
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: temporalBin() }, searchAttributes: Object.values(SA), log: { format: 'json', level: 'error' } },
  });
  const worker = await startWorker({ address: env.address, namespace: 'default', hostId: 'bench', reapEverySeconds: 0 });
  try {
    // A fresh worker pays once for its first workflow and activities (the bundle's VM and source
    // map, JIT, the report renderer's modules): one rollout first, on its own line, so the figures
    // below are those of a worker already running, as in a sweep of hundreds.
    const warm = await sweep(env, 1, 1);
    const plain = await rawStartStop(false);
    const before = await rawStartStop(true);
    const serial = await sweep(env, 1);
    const parallel = await sweep(env, 4);
    // Docker's own pace drifts during a run (±0.1 s per stack here): the baseline brackets the sweeps
    const after = await rawStartStop(true);
    const raw = { upMs: (before.upMs + after.upMs) / 2, downMs: (before.downMs + after.downMs) / 2 };
    const rawMs = raw.upMs + raw.downMs;
    for (const s of [serial, parallel]) if (s.r.counts.completed !== N) throw new Error(`sweep ${s.r.name}: ${JSON.stringify(s.r.counts)}`);
    const f = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(`tiny task, noop agent, ${N} rollouts`);
    console.log(`raw container start + stop, ${N}× in sequence, isolated as a rollout's (limits, firewall): ${f(rawMs)} (start ${f(raw.upMs)}, stop ${f(raw.downMs)}; ${(rawMs / N / 1000).toFixed(2)} s per stack)`);
    console.log(`  the mean of before the sweeps (${((before.upMs + before.downMs) / N / 1000).toFixed(2)} s per stack) and after them (${((after.upMs + after.downMs) / N / 1000).toFixed(2)} s)`);
    console.log(`  plain containers (no limits, no firewall): ${((plain.upMs + plain.downMs) / N / 1000).toFixed(2)} s per stack`);
    const w = rolloutPhases(await env.client.workflow.getHandle(warm.r.rollouts[0].workflowId).fetchHistory());
    const wp = Object.entries(w.execMs).map(([k, v]) => `${k} ${(v / 1000).toFixed(2)}`).join(', ');
    console.log(`worker warm-up: the first rollout on a fresh worker took ${f(warm.ms)} (${wp}, workflow tasks ${(w.workflowMs / 1000).toFixed(2)} s), not counted below`);
    console.log(`sweep, concurrency 1: ${f(serial.ms)} wall (${(serial.ms / N / 1000).toFixed(2)} s per rollout)`);
    console.log(`sweep, concurrency 4: ${f(parallel.ms)} wall`);
    console.log(`harness overhead (sweep wall, concurrency 1 / raw start+stop sum): ${(serial.ms / rawMs).toFixed(2)}x`);
    console.log(`  per rollout on top of Docker: ${((serial.ms - rawMs) / N / 1000).toFixed(2)} s (provision bookkeeping, agent phase, ${serial.r.tasks[0]?.nodes ?? '?'}-node evaluation, persist, report)`);
    console.log(`with concurrency 4: ${(parallel.ms / rawMs).toFixed(2)}x; ${(parallel.ms / N / 1000).toFixed(2)} s wall per rollout, ${((parallel.ms - rawMs) / N / 1000).toFixed(2)} s per rollout on top of the serial raw start + stop`);
    const t = { provisionMs: 0, agentMs: 0, evaluationMs: 0, totalMs: 0 };
    for (const x of serial.r.rollouts) {
      const rep = JSON.parse(readFileSync(join(x.runDir!, 'report.json'), 'utf8')) as { timings: typeof t };
      for (const k of Object.keys(t) as (keyof typeof t)[]) t[k] += rep.timings[k] / N;
    }
    // per phase, from the rollout workflows' histories (concurrency 1: nothing overlaps)
    const phases = await Promise.all(serial.r.rollouts.map(async (x) => rolloutPhases(await env.client.workflow.getHandle(x.workflowId).fetchHistory())));
    const { mean, gapMs } = meanPhases(phases);
    const g = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const raw1 = rawMs / N;
    console.log(`mean rollout workflow (concurrency 1): ${g(mean.totalMs)} over ${mean.activities.toFixed(0)} activities; raw start + stop ${g(raw1)}`);
    for (const [k, v] of Object.entries(mean.execMs)) console.log(`  ${k.padEnd(18)} ${g(v)}`);
    console.log(`  ${'scheduling'.padEnd(18)} ${g(mean.schedulingMs)} (activity scheduled → picked up, summed)`);
    console.log(`  ${'workflow tasks'.padEnd(18)} ${g(mean.workflowMs)} (between activities, start, completion)`);
    console.log(`  ${'between rollouts'.padEnd(18)} ${g(gapMs)} (sweep: one rollout closed → the next started)`);
    console.log(`harness overhead per rollout on top of raw start + stop (concurrency 1): ${g(serial.ms / N - raw1)} of sweep wall`);
    // the sweep's own start (task resolution, look-ups) and final report are paid once per sweep
    console.log(`  of which each further rollout (its workflow + the gap to the next): ${g(mean.totalMs + gapMs - raw1)}; the sweep's start and report, spread over ${N}: ${g(serial.ms / N - mean.totalMs - gapMs)}`);
  } finally {
    await worker.shutdown();
    await env.teardown();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
