import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { config } from '../config';
import { InvalidInputError } from '../errors';
import { agentNames } from '../agents/factory';
import { readJsonIfExists } from '../runs/files';
import { snapshotStore } from '../snapshots/factory';
import { readSnapshot, snapshotId } from '../snapshots/rollout-snapshot';
import { runRollout } from './run';

export interface ForkOptions {
  snapshot?: number;
  agent: string;
  model: string;
  sweep?: string;
  budget: number;
  idle: number;
  judge: boolean;
  worker: boolean;
  json?: boolean;
}

/**
 * `saasbench fork <rollout>`: a new rollout (its own id) of the same task that starts from one of
 * the parent's snapshots — workspace and databases restored, a fresh agent (any agent, any model).
 * The fork's report.json names its parent; the parent's report.json lists its children.
 */
export async function forkCommand(arg: string, o: ForkOptions): Promise<number> {
  if (!agentNames().includes(o.agent)) throw InvalidInputError.one('command line', '--agent', `unknown agent "${o.agent}" (known: ${agentNames().join(', ')})`);
  const dir = existsSync(arg) ? resolve(arg) : join(config.runsDir(), arg);
  const rollout = readJsonIfExists<{ workflowId: string; rolloutKey: string; task: { id: string; dir: string } }>(join(dir, 'rollout.json'));
  if (!rollout) throw InvalidInputError.one(join(dir, 'rollout.json'), '', `no rollout here: "${arg}" is neither a run folder nor a rollout key under ${config.runsDir()}`);
  const snap = await readSnapshot(snapshotStore(), rollout.rolloutKey, o.snapshot ?? 'latest');
  if (!snap) {
    const which = o.snapshot ? `snapshot ${snapshotId(rollout.rolloutKey, o.snapshot)}` : 'any snapshot';
    throw InvalidInputError.one('command line', o.snapshot ? '--snapshot' : '<rollout>', `${which} of ${rollout.rolloutKey} is not in the snapshot store (${snapshotStore().location})`);
  }
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  process.stderr.write(`forking ${rollout.workflowId} at snapshot ${snap.id} (agent ${snap.agentSeconds}s in)\n`);
  return runRollout({
    task: rollout.task.dir,
    agent: o.agent,
    model: o.model,
    repeat: 0,
    sweep: o.sweep ?? `fork-${stamp}`,
    budget: o.budget,
    idle: o.idle,
    judge: o.judge,
    worker: o.worker,
    json: o.json,
    extraInput: { fromSnapshot: { workflowId: rollout.workflowId, rolloutKey: rollout.rolloutKey, seq: snap.seq, runDir: dir } },
  });
}
