import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { PullError } from './pull-error';
import { zodIssueText } from '../zod-issues';

/** The lock `benchmark pull` writes at the root of the folder it fills. */
export const PULL_LOCK_FILE = 'saasbench-pull.json';

const Sha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'a full git object id');
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 hex digest');

const TaskEntry = z
  .object({
    repo: z.string(),
    commit: Sha,
    dataset: z.string(),
    /** the dataset commit the PRD and knowledge base came from */
    datasetRevision: Sha,
    /** false when the dataset had no inputs for this task (the folder then has no task.md / knowledge_base.json) */
    datasetInputs: z.boolean(),
    /** path relative to the task folder → sha256 of the bytes written */
    files: z.record(z.string(), Sha256),
  })
  .strict();

export const PullLockSchema = z
  .object({
    version: z.literal(1),
    /** the git repository of the last pull (credentials redacted) */
    repo: z.string(),
    commit: Sha,
    dataset: z.string(),
    /** the revision asked for (branch, tag or commit) and what it resolved to */
    datasetRef: z.string(),
    datasetRevision: Sha,
    /** every task folder under eval/ at `commit`: lets a re-run skip git when nothing is missing */
    availableTasks: z.array(z.string()),
    /** keyed by task folder name (task_<id>); each task keeps the commit/revision it was pulled at */
    tasks: z.record(z.string(), TaskEntry),
  })
  .strict();

export type PullLock = z.infer<typeof PullLockSchema>;
export type PullLockTask = z.infer<typeof TaskEntry>;

export function readPullLock(dir: string): PullLock | null {
  const file = join(dir, PULL_LOCK_FILE);
  if (!existsSync(file)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new PullError(file, `not valid JSON (${(e as Error).message}); remove it to pull again`);
  }
  const r = PullLockSchema.safeParse(raw);
  if (!r.success) {
    throw new PullError(file, `${zodIssueText(r.error, { max: 1 })}; remove it to pull again`);
  }
  return r.data;
}

/** Deterministic text (sorted tasks and files), so an unchanged pull leaves the file byte-identical. */
export function serializePullLock(lock: PullLock): string {
  const sortObj = <T>(o: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  // fixed key order too: an entry read back from the file and one built in memory print the same
  const tasks = Object.fromEntries(
    Object.entries(sortObj(lock.tasks)).map(([k, t]) => [k, { repo: t.repo, commit: t.commit, dataset: t.dataset, datasetRevision: t.datasetRevision, datasetInputs: t.datasetInputs, files: sortObj(t.files) }]),
  );
  const { version, repo, commit, dataset, datasetRef, datasetRevision } = lock;
  return `${JSON.stringify({ version, repo, commit, dataset, datasetRef, datasetRevision, availableTasks: [...lock.availableTasks].sort(), tasks }, null, 2)}\n`;
}

/** Write through a temporary file and a rename: a reader never sees half a lock. Returns false when unchanged. */
export function writePullLock(dir: string, lock: PullLock): boolean {
  const file = join(dir, PULL_LOCK_FILE);
  const text = serializePullLock(lock);
  if (existsSync(file) && readFileSync(file, 'utf8') === text) return false;
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
  return true;
}

export const sha256File = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Files of a pulled task that are missing or whose bytes no longer match the lock (relative paths). */
export function changedFiles(taskDir: string, entry: PullLockTask): string[] {
  return Object.entries(entry.files)
    .filter(([rel, sum]) => {
      const f = join(taskDir, rel);
      return !existsSync(f) || sha256File(f) !== sum;
    })
    .map(([rel]) => rel);
}

export interface PublishedProvenance {
  repo: string;
  commit: string;
  dataset: string;
  datasetRevision: string;
  files: Record<string, string>;
}

/**
 * Where a published task folder came from, when `saasbench benchmark pull` wrote it: the lock in
 * the folder above it (<D>/saasbench-pull.json) names the git commit, the dataset revision and
 * the sha256 of every file. null for a folder that was not pulled (or an unreadable lock).
 */
export function publishedProvenance(taskDir: string): PublishedProvenance | null {
  const dir = resolve(taskDir);
  let lock: PullLock | null;
  try {
    lock = readPullLock(dirname(dir));
  } catch {
    return null;
  }
  const t = lock?.tasks[basename(dir)];
  return t ? { repo: t.repo, commit: t.commit, dataset: t.dataset, datasetRevision: t.datasetRevision, files: t.files } : null;
}
