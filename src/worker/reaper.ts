import type { Client } from '@temporalio/client';
import { listLabelledWorkflows } from './labelled-workflows';
import { log } from '../log';
import { sandboxBackend } from '../sandbox';

/**
 * Remove the stacks of rollouts whose workflow is no longer running: a terminated workflow never
 * reaches its teardown. Resources without a workflow label (benchmarks, tests) are not ours to judge.
 */
export async function reapDeadRollouts(client: Client, clusterId?: string): Promise<string[]> {
  const owners = await listLabelledWorkflows(clusterId);
  return sandboxBackend().reap(async (key) => {
    const wf = owners.get(key);
    if (!wf) return true; // no workflow label, or another cluster's: keep
    const d = await client.workflow.getHandle(wf).describe().catch((e: Error) => (e.name === 'WorkflowNotFoundError' ? null : undefined));
    if (d === undefined) return true; // Temporal unreachable: keep, decide next time
    return d?.status.name === 'RUNNING';
  });
}

/** Run the reaper every `everyMs` until stopped. */
export function startReaper(client: Client, everyMs: number, clusterId: string): () => void {
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      const removed = await reapDeadRollouts(client, clusterId);
      if (removed.length) log.warn({ removed }, 'reaper removed stacks of rollouts that are not running');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'reaper pass failed');
    } finally {
      running = false;
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
