import { shQuote } from '../shell';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { InvalidInputError } from '../errors';
import type { ProcessRecord } from '../snapshots/rescore-capture';
import { restoreDatabase } from '../snapshots/db-dump';
import { stackIsolation, buildImages, imageMapFromEnv, sandboxBackend, type SandboxBackend } from '../sandbox';
import { loadTaskCompose } from '../tasks/task-compose';
import { diffLock, harnessLock, imagesLock, taskLock, type LockChange, type RolloutLock } from './rollout-lock';
import { readJsonIfExists } from '../runs/files';
import { loadRunnableTask } from '../tasks/load';
import type { NodeOutcome } from '../model/scores';
import { evaluateLocally } from './evaluate-local';
import { appUrlOf } from '../primitives/env-from-stack';
import { runIdOf } from './run-id';
import { IncrementalPlan, readBaseline, RESCORE_FILE, type RescoreRecord, type ScoringVersions } from './incremental';
import { writeJson } from '../runs/files';

export interface RescoreResult {
  rolloutKey: string;
  lockChanges: LockChange[];
  outcomes: NodeOutcome[];
  /** nodes whose status differs from the last scoring (the rollout's, or the latest rescore's) */
  statusChanges: { nodeId: string; before: string | null; after: string }[];
  /** the nodes actually re-evaluated, with why; every other node's last outcome was reused */
  evaluated: { nodeId: string; why: string }[];
  reused: string[];
  /** per-node definition hashes and primitive library version, of the last scoring and of this one */
  versions: { before: ScoringVersions; after: ScoringVersions };
}

export interface RescoreOptions {
  /** re-evaluate every node, whatever changed */
  full?: boolean;
}

/**
 * Re-run the evaluation of a finished rollout on what its agent left: a fresh stack of the same
 * task, the workspace snapshot and the database dump restored, the processes the agent left running
 * started again. Incremental: only the nodes whose definition (or the primitive library) changed
 * since the last scoring are re-evaluated, and their dependents when they come out differently
 * (src/evaluation/incremental.ts); with nothing to re-evaluate no stack is started at all.
 * Reports what changed in the lock and in the node statuses, and records it in rescore.json.
 */
export async function rescore(runDir: string, log: Logger, opts: RescoreOptions = {}): Promise<RescoreResult> {
  const rollout = readJsonIfExists<{ rolloutKey: string; task: { dir: string } }>(join(runDir, 'rollout.json'));
  const oldLock = readJsonIfExists<RolloutLock>(join(runDir, 'lock.json'));
  const nodeResults = readJsonIfExists<Parameters<typeof readBaseline>[2]>(join(runDir, 'node_results.json'));
  if (!rollout || !oldLock || !nodeResults) throw InvalidInputError.one(runDir, '', 'not a finished rollout folder (needs rollout.json, lock.json and node_results.json)');
  if (!existsSync(join(runDir, 'workspace.tar.gz'))) throw InvalidInputError.one(join(runDir, 'workspace.tar.gz'), '', 'no workspace snapshot: this rollout cannot be re-scored');

  const task = loadRunnableTask(rollout.task.dir);
  const project = loadTaskCompose(task);
  // the rollout's own image map (its lock), over this host's SAASBENCH_IMAGE_MAP
  const imageMap = { ...imageMapFromEnv(), ...oldLock.imageMap };
  const images = await buildImages(project, task.id, { imageMap });
  const newLock: RolloutLock = { ...oldLock, harness: harnessLock(), task: taskLock(task), images: await imagesLock(images) };
  const baseline = readBaseline(runDir, oldLock, nodeResults);
  const after: ScoringVersions = { primitives: newLock.harness.primitives ?? null, nodes: newLock.task.nodes ?? null };
  const plan = new IncrementalPlan(baseline, after, !!opts.full);
  const finish = (outcomes: NodeOutcome[]): RescoreResult => {
    const before = new Map([...baseline.outcomes].map(([id, o]) => [id, o.status as string]));
    const result: RescoreResult = {
      rolloutKey: rollout.rolloutKey,
      lockChanges: diffLock(oldLock, newLock),
      outcomes,
      statusChanges: outcomes.filter((o) => before.get(o.nodeId) !== o.status).map((o) => ({ nodeId: o.nodeId, before: before.get(o.nodeId) ?? null, after: o.status })),
      evaluated: plan.evaluated,
      reused: plan.reused,
      versions: { before: baseline.versions, after },
    };
    const record: RescoreRecord = { at: new Date().toISOString(), baseline: baseline.source, full: !!opts.full, lock: result.versions, evaluated: result.evaluated, reused: result.reused, outcomes };
    writeJson(join(runDir, RESCORE_FILE), record);
    log.info({ evaluated: plan.evaluated.map((e) => e.nodeId), reused: plan.reused.length, baseline: baseline.source }, 'rescored');
    return result;
  };
  if (!plan.definitionChanges(task.dag.nodes.map((n) => n.id)).length) {
    // nothing changed since the last scoring: its outcomes stand, in the DAG's order
    return finish(task.dag.nodes.map((n) => plan.reuse(n.id)));
  }
  const key = `${rollout.rolloutKey}.rescore-${Date.now().toString(36)}`;
  const sandbox = sandboxBackend();
  const stack = await sandbox.up({ rolloutKey: key, taskId: task.id, project, images, isolation: stackIsolation(task.environment.appService, task.limits) });
  try {
    const app = stack.services[task.environment.appService].container;
    const db = task.environment.database;
    const dump = join(runDir, 'database.sql.gz');
    // the dump the rollout kept (snapshots/rescore-capture.ts), in the engine's own format
    if (db && existsSync(dump)) await restoreDatabase(sandbox, stack.services[db.service].container, db, readFileSync(dump));
    await sandbox.extractArchive(app, task.environment.workspace, readFileSync(join(runDir, 'workspace.tar.gz')));
    await restartProcesses(sandbox, app, readJsonIfExists<ProcessRecord[]>(join(runDir, 'processes.json')) ?? []);
    await waitForPort(sandbox, app, task.environment.appPort);
    const evaluation = await evaluateLocally({ sandbox, task, stack, parallelism: task.parallelSafe ? 4 : 1, artifactsDir: mkdtempSync(join(tmpdir(), 'rescore-')), log, vars: { run_id: runIdOf(rollout.rolloutKey), base_url: appUrlOf(task, stack, sandbox) }, incremental: plan });
    return finish(evaluation.outcomes);
  } finally {
    await sandbox.down(key);
  }
}

/** Start again, detached, every process the agent left running (in its working directory). */
async function restartProcesses(sandbox: SandboxBackend, container: string, procs: ProcessRecord[]): Promise<void> {
  const q = shQuote;
  for (const p of procs) {
    if (!p.args.length) continue;
    await sandbox.exec(container, ['bash', '-c', `cd ${q(p.cwd || '/')} && setsid nohup ${p.args.map(q).join(' ')} > /tmp/.saasbench-rescore-${p.pid}.log 2>&1 < /dev/null & echo started`]);
  }
}

async function waitForPort(sandbox: SandboxBackend, container: string, port: number): Promise<void> {
  const r = await sandbox.exec(container, ['bash', '-c', `for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && exit 0; sleep 0.1; done; exit 1`], { timeoutMs: 90_000 });
  if (r.exitCode !== 0) throw new Error(`the restored app did not listen on port ${port} within 60 s`);
}
