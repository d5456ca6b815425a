import { loadCompose, type ComposeProject, type LoadComposeOptions } from '../sandbox';
import type { Task } from '../model/task';

/** How every caller loads a task's compose file: its env-file fallbacks and harness variables. */
export function taskComposeOptions(task: Pick<Task, 'environment'>): LoadComposeOptions {
  const e = task.environment;
  return { envFileFallbacks: e.envFileFallbacks, ...(e.composeEnv ? { env: e.composeEnv } : {}) };
}

export function loadTaskCompose(task: Pick<Task, 'environment'>): ComposeProject {
  return loadCompose(task.environment.composeFile, taskComposeOptions(task));
}
