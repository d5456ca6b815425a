import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import YAML from 'yaml';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import { resolveSweepTasks } from '../activities/sweep-resolve';
import { config } from '../config';
import { InvalidInputError, type InputIssue } from '../errors';
import { connectClient } from '../temporal/connection';
import { startWorker } from '../worker/worker';
import { SweepInputSchema, sweepWorkflowId, type SweepInput, type SweepInputRaw, type SweepResult } from '../model/sweep';
import { temporalTarget } from './temporal-target';
import { envImageMap, preflightTask } from './preflight';
import { ImagePreflightError } from '../sandbox';
import { loadRunnableTask } from '../tasks/load';
import { followSweep, printSweepResult, sweepIdOf } from './watch';
import { zodInputIssues } from '../zod-issues';
import { resultRidingRestarts } from './follow';
import { stopSweepSignal, sweepWorkflow } from '../workflows/sweep';

/** Parse a sweep file (.json, or YAML for anything else) into its raw object; syntax errors name the file and line. */
export function readSweepFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw InvalidInputError.one(file, '', `cannot read: ${(err as Error).message}`);
  }
  if (/\.json$/i.test(file)) {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw InvalidInputError.one(file, '', `invalid JSON: ${(err as Error).message}`);
    }
  }
  const doc = YAML.parseDocument(text, { prettyErrors: true });
  // the first error, on one line (the pretty form quotes the source over several lines)
  if (doc.errors.length) throw InvalidInputError.one(file, '', `invalid YAML: ${doc.errors[0].message.split('\n')[0]}${doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more)` : ''}`);
  return doc.toJS();
}

/** Validate a raw sweep object with the workflow's own schema; issues carry `file` and the JSON path. */
export function validateSweep(raw: unknown, file: string): SweepInput {
  const r = SweepInputSchema.safeParse(raw);
  if (r.success) return r.data;
  throw new InvalidInputError(zodInputIssues(r.error, file));
}

/** Schema, then the tasks and agents as this machine sees them (relative task paths: see tasksBase()). */
export function loadSweepFile(file: string): { raw: unknown; input: SweepInput } {
  const raw = readSweepFile(file);
  const input = validateSweep(raw, file);
  const { issues } = resolveSweepTasks(input, file);
  if (issues.length) throw new InvalidInputError(issues);
  return { raw, input };
}

export interface SweepCommandOptions {
  worker: boolean;
  skipPreflight?: boolean;
  detach?: boolean;
  json?: boolean;
  /** print the leaderboard in the paper's view (a missing task scores 0) */
  asPaper?: boolean;
  /** --cost-cap <usd>: overrides the file's costCapUsd */
  costCap?: number;
}

/**
 * The image preflight of every task of the sweep on this host (the in-process worker provisions
 * here): one error listing each task's missing images, before the sweep starts.
 */
async function preflightSweep(input: SweepInput, file: string): Promise<void> {
  const imageMap = { ...envImageMap(), ...(input.imageMap ?? {}) };
  const { tasks } = resolveSweepTasks(input, file);
  const failed: ImagePreflightError[] = [];
  for (const t of tasks) {
    try {
      await preflightTask(loadRunnableTask(t.dir), imageMap);
    } catch (err) {
      if (err instanceof ImagePreflightError) failed.push(err);
      else throw err;
    }
  }
  if (failed.length === 1) throw failed[0];
  if (failed.length) throw new ImagePreflightError(`${failed.map((f) => f.task).join(', ')}`, failed.flatMap((f) => f.plans.map((p) => ({ ...p, service: `${f.task}/${p.service}` }))));
}

/** `saasbench sweep <file>`: validate, start (or attach to the running sweep of that name), follow, print the leaderboard. */
export async function sweepCommand(fileArg: string, o: SweepCommandOptions): Promise<number> {
  const file = resolve(fileArg);
  const loaded = loadSweepFile(file);
  // --cost-cap overrides the file's costCapUsd (validated as a positive number by the flag parser)
  const raw = o.costCap === undefined ? loaded.raw : { ...(loaded.raw as object), costCapUsd: o.costCap };
  const input = o.costCap === undefined ? loaded.input : { ...loaded.input, costCapUsd: o.costCap };
  if (o.worker && !o.detach && !o.skipPreflight) await preflightSweep(input, file);
  const workflowId = sweepWorkflowId(input.name);
  const target = await temporalTarget();
  // always: a dev server started before an upgrade lacks the attributes added since (SaasbenchCostUsd)
  const { client, connection } = await connectClient(target, { ensureSearchAttributes: true });
  const worker = o.worker && !o.detach ? await startWorker({ address: target.address, namespace: target.namespace }) : undefined;
  const onSignal = () => {
    process.stderr.write(`\ninterrupted: the sweep goes on in Temporal — \`saasbench watch ${input.name}\` to follow it, \`saasbench stop ${input.name}\` to stop it\n`);
    void (async () => {
      await worker?.shutdown().catch(() => undefined);
      await connection.close().catch(() => undefined);
      process.exit(130);
    })();
  };
  process.once('SIGINT', onSignal);
  try {
    const before = await client.workflow
      .getHandle(workflowId)
      .describe()
      .catch(() => null);
    const handle = await client.workflow.start(sweepWorkflow, {
      taskQueue: config.sharedQueue(),
      workflowId,
      // validated above (validateSweep); the workflow parses it again with the same schema
      args: [raw as SweepInputRaw],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      memo: { config: input },
      staticSummary: `sweep ${input.name}`,
    });
    const attached = before?.status.name === 'RUNNING';
    const runningConfig = (before?.memo as { config?: unknown } | undefined)?.config;
    if (attached && runningConfig !== undefined && JSON.stringify(runningConfig) !== JSON.stringify(input)) {
      process.stderr.write(`warning: ${workflowId} is running with a different configuration than ${file}; following it as it is (stop it and re-submit to change it)\n`);
    }
    process.stderr.write(
      `${attached ? 'attached to the running' : 'started'} ${workflowId}${target.uiUrl ? `\n  Temporal UI: ${target.uiUrl}/namespaces/${target.namespace}/workflows/${encodeURIComponent(workflowId)}` : ''}\n`,
    );
    if (o.detach) return 0;
    const result = resultRidingRestarts<SweepResult>(handle);
    await followSweep(client, handle, { until: result });
    const r = await result;
    if (o.json) process.stdout.write(`${JSON.stringify(r.benchmark, null, 2)}\n`);
    else printSweepResult(r, process.stdout, { asPaper: o.asPaper });
    return 0;
  } finally {
    process.removeListener('SIGINT', onSignal);
    await worker?.shutdown();
    await connection.close();
  }
}

/** `saasbench stop <sweep>`: the `stop` signal — drain by default, or cancel the running rollouts. */
export async function stopCommand(nameOrId: string, o: { cancelRunning?: boolean }): Promise<number> {
  const target = await temporalTarget(true);
  const { client, connection } = await connectClient(target);
  try {
    const handle = client.workflow.getHandle(sweepIdOf(nameOrId));
    await handle.signal(stopSweepSignal, { cancelRunning: !!o.cancelRunning });
    process.stderr.write(
      o.cancelRunning
        ? `${handle.workflowId}: stopping — running rollouts are cancelled (they tear down), nothing new starts\n`
        : `${handle.workflowId}: stopping — running rollouts finish, nothing new starts\n`,
    );
    return 0;
  } finally {
    await connection.close();
  }
}
