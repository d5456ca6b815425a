import { SnapshotMissingError } from './errors';
import { snapshotStore } from './factory';
import { readSnapshot, snapshotId, type SnapshotFile } from './rollout-snapshot';

/** Which snapshot to start a rollout's agent phase from (a payload: metadata only). */
export interface RestoreRequest {
  rolloutKey: string;
  seq: number;
  /** resume the agent's own session (a host move); false: workspace and databases only (a fork) */
  session: boolean;
}

export async function loadSnapshot(r: RestoreRequest): Promise<SnapshotFile> {
  const s = await readSnapshot(snapshotStore(), r.rolloutKey, r.seq);
  if (!s) throw new SnapshotMissingError(`snapshot ${snapshotId(r.rolloutKey, r.seq)} is not in the snapshot store (${snapshotStore().location})`);
  return s;
}
