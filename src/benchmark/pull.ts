import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { repoRoot } from '../paths';
import { changedFiles, PULL_LOCK_FILE, readPullLock, writePullLock, type PullLock, type PullLockTask } from './lock-file';
import { GitSource, gitVersion, type TaskFiles } from './pull-git';
import { HfDataset, type HfFileEntry } from './pull-hf';
import type { HfTarget } from './hf-http';
import { humanSize, PullError, redactUrl } from './pull-error';

/**
 * `saasbench benchmark pull`: the published SaaSBench tasks (git, pinned commit) plus each task's
 * PRD and knowledge base (Hugging Face dataset), laid out as <dir>/task_<id>/{tasks,check}/… and
 * recorded in <dir>/saasbench-pull.json. Every task is assembled in a scratch folder beside <dir>
 * and renamed into place only when complete and verified; a failure leaves the previous state.
 */

export const PULL_DEFAULTS = {
  repo: 'https://github.com/ShadeCloak/SaaSbench.git',
  commit: 'a1fcfbd4d9f2efbbbfe2b4f77e6f1c759ada517b',
  dataset: 'SaaSBench/SaaSBench',
  revision: 'main',
} as const;

export const defaultBenchmarkDir = (): string => join(repoRoot(), '.saasbench', 'benchmark', 'saasbench');

export interface PullOptions {
  dir: string;
  /** task ids (with or without the task_ prefix); default: every task at the commit */
  tasks?: string[];
  repo: string;
  commit: string;
  dataset: string;
  revision: string;
  hf: HfTarget;
  log: (line: string) => void;
}

export interface PullSummary {
  dir: string;
  lockFile: string;
  commit: string;
  datasetRevision: string;
  installed: string[];
  upToDate: string[];
  /** installed tasks for which the dataset had no task.md / knowledge_base.json */
  withoutInputs: string[];
  files: number;
  bytes: number;
}

/** Where the two dataset files of a task land in its folder (where the published driver puts them). */
const HF_TARGETS = [
  { file: 'task.md', to: (name: string) => `tasks/${name}/task/task.md` },
  { file: 'knowledge_base.json', to: (name: string) => `tasks/${name}/kb/knowledge_base.json` },
];

function checkOptions(o: PullOptions): string[] | undefined {
  if (!/^[0-9a-f]{40}$/.test(o.commit)) throw new PullError('--commit', `"${o.commit}" is not a full 40-character commit sha (the pull is pinned)`);
  if (!/^[\w.-]+\/[\w.-]+$/.test(o.dataset)) throw new PullError('--dataset', `"${o.dataset}" is not a Hugging Face repo id (owner/name)`);
  if (!o.revision.trim()) throw new PullError('--revision', 'empty');
  if (!o.repo.trim() || o.repo.startsWith('-')) throw new PullError('--repo', o.repo.trim() ? `"${redactUrl(o.repo)}" is not a repository URL` : 'empty');
  if (!o.tasks) return undefined;
  const names = o.tasks.map((t) => t.trim()).filter(Boolean);
  if (!names.length) throw new PullError('--tasks', 'no task id given');
  for (const t of names) if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(t)) throw new PullError('--tasks', `"${t}" is not a task id`);
  return [...new Set(names.map((t) => (t.startsWith('task_') ? t : `task_${t}`)))];
}

export async function pullBenchmark(o: PullOptions): Promise<PullSummary> {
  const wanted = checkOptions(o);
  const dir = resolve(o.dir);
  const repoLabel = redactUrl(o.repo);
  const hf = new HfDataset(o.hf, o.dataset);
  const lock = existsSync(dir) ? readPullLock(dir) : null;
  const summary: PullSummary = { dir, lockFile: join(dir, PULL_LOCK_FILE), commit: o.commit, datasetRevision: '', installed: [], upToDate: [], withoutInputs: [], files: 0, bytes: 0 };

  // git is needed unless the lock already lists this commit's tasks: say so before any network work
  const lockCoversCommit = !!lock && lock.repo === repoLabel && lock.commit === o.commit;
  if (!lockCoversCommit) await gitVersion();
  // a refused token or an offline machine shows up here, before any git work
  const datasetRevision = await hf.resolveRevision(o.revision);
  summary.datasetRevision = datasetRevision;
  o.log(`pull: ${repoLabel} @ ${o.commit.slice(0, 12)}; dataset ${o.dataset} @ ${o.revision} (${datasetRevision.slice(0, 12)}) → ${dir}`);

  let staging: string | null = null;
  const cleanup = () => {
    if (staging) rmSync(staging, { recursive: true, force: true });
    staging = null;
  };
  const onSignal = (sig: NodeJS.Signals) => {
    cleanup();
    process.stderr.write(`saasbench: benchmark pull: interrupted (${sig}); nothing half-written was kept\n`);
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const scratch = (): string => {
    if (!staging) {
      mkdirSync(dirname(dir), { recursive: true });
      staging = mkdtempSync(join(dirname(dir), `.${basename(dir)}.pull-`));
    }
    return staging;
  };
  let git: GitSource | null = null;
  const source = async (): Promise<GitSource> => {
    git ??= await GitSource.fetch(o.repo, o.commit, join(scratch(), '.git-source'));
    return git;
  };

  try {
    // the task list at the commit: from the lock when it was written for this very commit, else from git
    let available: string[];
    if (lockCoversCommit) available = lock.availableTasks;
    else {
      available = await (await source()).listTasks();
      o.log(`git: ${available.length} task folder${available.length === 1 ? '' : 's'} at ${o.commit.slice(0, 12)}`);
    }
    if (wanted) {
      const unknown = wanted.filter((t) => !available.includes(t));
      if (unknown.length) throw new PullError('--tasks', `unknown task id${unknown.length > 1 ? 's' : ''} ${unknown.map((t) => t.replace(/^task_/, '')).join(', ')} (the commit has: ${available.map((t) => t.replace(/^task_/, '')).join(', ')})`);
    }
    const selected = wanted ?? available;

    const next: PullLock = {
      version: 1,
      repo: repoLabel,
      commit: o.commit,
      dataset: o.dataset,
      datasetRef: o.revision,
      datasetRevision,
      availableTasks: available,
      tasks: { ...(lock?.tasks ?? {}) },
    };
    const todo: string[] = [];
    for (const name of selected) {
      const t = lock?.tasks[name];
      const same = t && t.repo === repoLabel && t.commit === o.commit && t.dataset === o.dataset && t.datasetRevision === datasetRevision;
      if (same && existsSync(join(dir, name)) && changedFiles(join(dir, name), t).length === 0) {
        summary.upToDate.push(name);
        o.log(`${name}: up to date (commit ${o.commit.slice(0, 12)}, dataset ${datasetRevision.slice(0, 12)}, ${Object.keys(t.files).length} files verified), skipped`);
      } else todo.push(name);
    }

    if (todo.length) {
      const src = await source();
      const files = new Map<string, TaskFiles>();
      for (const name of todo) files.set(name, await src.taskFiles(name));
      const all = [...files.values()].flatMap((f) => f.files);
      o.log(`git: fetching ${all.length} files of ${todo.length} task${todo.length > 1 ? 's' : ''}`);
      await src.fetchBlobs(all.map((f) => f.oid));
      const tree = await hf.listTree(datasetRevision, 'tasks');
      for (const name of todo) {
        const entry = await assembleTask(name, files.get(name)!, tree, { src, hf, staging: scratch(), datasetRevision, log: o.log });
        const written = Object.keys(entry.task.files).length;
        installTask(dir, name, join(scratch(), name), scratch());
        next.tasks[name] = { ...entry.task, repo: repoLabel, commit: o.commit, dataset: o.dataset, datasetRevision };
        writePullLock(dir, next); // after each task: the lock always describes what is in place
        summary.installed.push(name);
        if (!entry.task.datasetInputs) summary.withoutInputs.push(name);
        summary.files += written;
        summary.bytes += entry.bytes;
        o.log(`${name}: installed (${written} files, ${humanSize(entry.bytes)})`);
      }
    }
    if (existsSync(dir) || todo.length) {
      mkdirSync(dir, { recursive: true });
      writePullLock(dir, next);
    }
    o.log(
      `done: ${summary.installed.length} installed, ${summary.upToDate.length} up to date` +
        `${summary.withoutInputs.length ? `, ${summary.withoutInputs.length} without dataset inputs (${summary.withoutInputs.join(', ')})` : ''}; ` +
        `${summary.files} files, ${humanSize(summary.bytes)} written; lock ${summary.lockFile}`,
    );
    return summary;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    cleanup();
  }
}

interface AssembleCtx {
  src: GitSource;
  hf: HfDataset;
  staging: string;
  datasetRevision: string;
  log: (line: string) => void;
}

/** Write one task into staging/<name>: its git files, then its PRD and knowledge base. */
async function assembleTask(name: string, files: TaskFiles, tree: HfFileEntry[], c: AssembleCtx): Promise<{ task: Pick<PullLockTask, 'files' | 'datasetInputs'>; bytes: number }> {
  const out = join(c.staging, name);
  mkdirSync(out, { recursive: true });
  for (const s of files.skipped) c.log(`${name}: ${s}: not a regular file (symlink or submodule), not written`);
  const prefix = `eval/${name}/`;
  const written = await c.src.writeFiles(files.files, out, (p) => p.slice(prefix.length));
  const sums: Record<string, string> = {};
  let bytes = 0;
  for (const [rel, w] of written) {
    sums[rel] = w.sha256;
    bytes += w.size;
  }
  const id = name.replace(/^task_/, '');
  let found = 0;
  for (const t of HF_TARGETS) {
    const entry = tree.find((e) => e.path === `tasks/${name}/${t.file}`) ?? tree.find((e) => e.path === `tasks/${id}/${t.file}`);
    if (!entry) continue;
    const rel = t.to(name);
    const dest = join(out, rel);
    mkdirSync(dirname(dest), { recursive: true });
    const w = await c.hf.download(c.datasetRevision, entry, dest, (l) => c.log(`${name}: ${l}`));
    sums[rel] = w.sha256;
    bytes += w.size;
    found++;
    c.log(`${name}: ${entry.path} ${humanSize(w.size)} (dataset)`);
  }
  if (found < HF_TARGETS.length)
    c.log(`${name}: the dataset has no ${HF_TARGETS.filter((t) => !tree.some((e) => e.path === `tasks/${name}/${t.file}` || e.path === `tasks/${id}/${t.file}`)).map((t) => `tasks/${name}/${t.file}`).join(' or ')}; written without it`);
  return { task: { files: sums, datasetInputs: found === HF_TARGETS.length }, bytes };
}

/** Swap the assembled folder into place: the old one (if any) moves aside first and is deleted after. */
function installTask(dir: string, name: string, assembled: string, staging: string): void {
  mkdirSync(dir, { recursive: true });
  const target = join(dir, name);
  const old = join(staging, `${name}.previous`);
  if (existsSync(target)) renameSync(target, old);
  try {
    renameSync(assembled, target);
  } catch (e) {
    if (existsSync(old)) renameSync(old, target);
    throw new PullError(target, `cannot move the new task folder into place: ${(e as Error).message}`);
  }
  rmSync(old, { recursive: true, force: true });
}
