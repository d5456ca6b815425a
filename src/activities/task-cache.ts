import { TaskChangedError } from '../errors';
import { loadRunnableTask } from '../tasks/load';
import type { Task } from '../model/task';

const cache = new Map<string, { task: Task; at: number }>();
const FRESH_MS = 10_000;

/**
 * Node activities run by the hundred; loading and hashing the task each time would dominate.
 * A cached copy is trusted for a few seconds, and the hash pins the version the rollout began with.
 */
export function taskFor(dir: string, expectedHash?: string): Task {
  const hit = cache.get(dir);
  let task = hit && Date.now() - hit.at < FRESH_MS ? hit.task : undefined;
  if (!task) {
    task = loadRunnableTask(dir);
    cache.set(dir, { task, at: Date.now() });
  }
  if (expectedHash && task.hash !== expectedHash) {
    throw new TaskChangedError(`task ${task.id} changed on disk since the rollout started (hash ${expectedHash.slice(0, 12)} → ${task.hash.slice(0, 12)}); re-run the rollout`);
  }
  return task;
}
