import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InvalidInputError } from '../errors';
import { loadNativeTask, type LoadResult } from './load-native';
import { isPublishedLayout, loadPublishedTask } from './published';
import { environmentIssues } from './environment-check';
import type { Task } from '../model/task';

/** Native (task.yaml) or published SaaSBench layout, told apart by what the folder holds. */
export function loadAnyTask(dirArg: string): LoadResult {
  const dir = resolve(dirArg);
  if (!existsSync(dir)) return { task: null, issues: [{ file: dir, path: '', message: 'task folder does not exist' }] };
  if (existsSync(join(dir, 'task.yaml'))) return withEnvironment(loadNativeTask(dir));
  if (isPublishedLayout(dir)) return withEnvironment(loadPublishedTask(dir));
  return { task: null, issues: [{ file: dir, path: '', message: 'not a task folder: no task.yaml and not the published SaaSBench layout (tasks/ + check/)' }] };
}

/** Load a task that must be runnable: any issue or unsupported primitive is an error. */
export function loadRunnableTask(dir: string): Task {
  const r = loadAnyTask(dir);
  if (!r.task || r.issues.length) throw new InvalidInputError(r.issues);
  const unsupported = Object.entries(r.task.unsupported);
  if (unsupported.length) {
    throw new InvalidInputError(unsupported.map(([type, n]) => ({ file: r.task!.dagFile, path: '', message: `primitive ${type} is not supported by this build (${n} uses)` })));
  }
  return r.task;
}

/** Adds the compose and isolation checks (src/tasks/environment-check.ts) unless the loader already reported the compose file. */
function withEnvironment(r: LoadResult): LoadResult {
  const t = r.task;
  if (!t || r.issues.some((i) => i.file === t.environment.composeFile || i.message.startsWith('compose:'))) return r;
  const env = environmentIssues(t);
  return env.length ? { ...r, issues: [...r.issues, ...env] } : r;
}
