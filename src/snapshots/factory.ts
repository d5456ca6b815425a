import { join } from 'node:path';
import { config } from '../config';
import { InvalidInputError } from '../errors';
import { DirSnapshotStore, type SnapshotStore } from './store';
import { S3SnapshotStore } from './s3-store';

/**
 * The snapshot store this process uses, from the environment (docs/operations.md "Snapshots"):
 *   SAASBENCH_SNAPSHOT_S3_BUCKET set → S3SnapshotStore (SAASBENCH_SNAPSHOT_S3_ENDPOINT for an
 *     S3-compatible server, SAASBENCH_SNAPSHOT_S3_PREFIX, AWS_REGION; credentials from the SDK's chain)
 *   else → a folder: SAASBENCH_SNAPSHOT_DIR, default <runs dir>/.snapshots
 * Every host of a deployment must see the same store for a rollout to move between hosts.
 */
export function snapshotStore(env: NodeJS.ProcessEnv = process.env): SnapshotStore {
  const bucket = env.SAASBENCH_SNAPSHOT_S3_BUCKET?.trim();
  if (bucket) {
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw InvalidInputError.one('SAASBENCH_SNAPSHOT_S3_BUCKET', '', `"${bucket}" is not a valid bucket name`);
    return new S3SnapshotStore({ bucket, prefix: env.SAASBENCH_SNAPSHOT_S3_PREFIX, endpoint: env.SAASBENCH_SNAPSHOT_S3_ENDPOINT || undefined, region: env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined });
  }
  return new DirSnapshotStore(env.SAASBENCH_SNAPSHOT_DIR || join(config.runsDir(), '.snapshots'));
}

/**
 * SAASBENCH_SNAPSHOT_KEEP: how many of a rollout's snapshots to keep (the newest; older ones are
 * deleted after each new one). Unset or empty: all of them. A fork needs the snapshot it names.
 */
export function snapshotKeep(env: NodeJS.ProcessEnv = process.env): number | null {
  const v = env.SAASBENCH_SNAPSHOT_KEEP?.trim();
  if (!v) return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw InvalidInputError.one('SAASBENCH_SNAPSHOT_KEEP', '', `"${v}" is not a whole number of snapshots (1 or more; unset keeps all)`);
  return n;
}
