import { metaOf } from '../snapshots/agent-snapshots';
import { snapshotStore } from '../snapshots/factory';
import { readSnapshot } from '../snapshots/rollout-snapshot';
import type { SnapshotMeta } from '../model/snapshot';

/** The latest complete snapshot of a rollout (metadata only), or null. Runs on the shared queue: any host. */
export async function latestSnapshot(i: { rolloutKey: string }): Promise<SnapshotMeta | null> {
  const s = await readSnapshot(snapshotStore(), i.rolloutKey, 'latest');
  return s ? metaOf(s) : null;
}
