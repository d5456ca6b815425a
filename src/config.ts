import { hostname } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { repoRoot } from './paths';

/** Worker-host settings from the environment. Read lazily so tests can set env first. */
export const config = {
  /** identifies this Docker host; its activities queue is `saasbench-host-<hostId>` */
  hostId: () => (process.env.SAASBENCH_HOST_ID ?? hostname()).replace(/[^A-Za-z0-9_.-]/g, '-'),
  sharedQueue: () => process.env.SAASBENCH_TASK_QUEUE ?? 'saasbench',
  /** which Temporal cluster owns the stacks this worker creates (set by startWorker); the reaper judges only those */
  clusterId: () => process.env.SAASBENCH_CLUSTER_ID ?? 'default',
  runsDir: () => {
    const d = process.env.SAASBENCH_RUNS_DIR ?? join(repoRoot(), 'runs');
    return isAbsolute(d) ? d : resolve(d);
  },
  judge: () => ({
    apiKey: process.env.SAASBENCH_JUDGE_API_KEY ?? process.env.ANTHROPIC_API_KEY ?? '',
    baseUrl: process.env.SAASBENCH_JUDGE_BASE_URL ?? process.env.ANTHROPIC_BASE_URL ?? undefined,
  }),
};

export function hostQueueOf(hostId: string): string {
  return `saasbench-host-${hostId}`;
}
