import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot } from '../../src/paths';

/**
 * The published SaaSBench task folders the corpus tests read: SAASBENCH_PUBLISHED_DIR, else
 * ../shared/upstream beside the repository when it exists, else none (the tests skip with one
 * line). A user's clone has no ../shared; CI has it, so nothing skips there.
 */
export function publishedDir(): string | null {
  const env = process.env.SAASBENCH_PUBLISHED_DIR;
  if (env) return existsSync(env) ? resolve(env) : null;
  const shared = resolve(repoRoot(), '..', 'shared', 'upstream');
  return existsSync(shared) ? shared : null;
}

/** The one line a corpus test skips with. */
export const NEEDS_PUBLISHED = 'needs the published SaaSBench task folders: set SAASBENCH_PUBLISHED_DIR (e.g. after `saasbench benchmark pull`)';

/** node:test options: `{ skip: NEEDS_PUBLISHED }` when the corpus (or the named task in it) is absent. */
export function corpusOpt(task?: string): { skip?: string } {
  const dir = publishedDir();
  if (!dir) return { skip: NEEDS_PUBLISHED };
  if (task && !existsSync(join(dir, task))) return { skip: `needs ${task} in ${dir} (SAASBENCH_PUBLISHED_DIR)` };
  return {};
}

/** Path of a published task folder (only call when corpusOpt(task) did not skip). */
export function publishedTask(task: string): string {
  return join(publishedDir()!, task);
}

/** Every task_* folder of the corpus (empty when there is none). */
export function publishedTasks(): string[] {
  const dir = publishedDir();
  return dir ? readdirSync(dir).filter((n) => n.startsWith('task_')).sort().map((n) => join(dir, n)) : [];
}
