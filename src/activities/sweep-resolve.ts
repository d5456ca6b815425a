import { isAbsolute, join, resolve } from 'node:path';
import { agentNames } from '../agents/factory';
import { InvalidInputError, type InputIssue } from '../errors';
import { loadAnyTask } from '../tasks/load';
import { checkImageMap } from '../sandbox/image-map';
import { repoRoot } from '../paths';
import type { ResolvedTask, SweepInput } from '../model/sweep';

/**
 * The base that relative task paths of a sweep are resolved against: SAASBENCH_TASKS_BASE, else
 * the saasbench repo root of the process doing the resolving (the worker for a sweep started
 * with `temporal workflow start`, and also for `saasbench sweep`). Not the sweep file's folder:
 * the same JSON must mean the same tasks whichever way it is started.
 */
export function tasksBase(): string {
  const b = process.env.SAASBENCH_TASKS_BASE;
  return b ? resolve(b) : repoRoot();
}

export function resolveTaskPath(p: string, base = tasksBase()): string {
  return isAbsolute(p) ? p : join(base, p);
}

/**
 * Load every task of the sweep and check the agents exist. Issues name the JSON path inside the
 * sweep input (`tasks[1]`, `agents[0].name`) and `file` (the sweep file, or "sweep input").
 */
export function resolveSweepTasks(input: SweepInput, file = 'sweep input', base = tasksBase()): { tasks: ResolvedTask[]; issues: InputIssue[] } {
  const issues: InputIssue[] = [];
  const tasks: ResolvedTask[] = [];
  const byId = new Map<string, number>();
  input.tasks.forEach((entry, i) => {
    const p = typeof entry === 'string' ? entry : entry.path;
    const at = typeof entry === 'string' ? `tasks[${i}]` : `tasks[${i}].path`;
    const dir = resolveTaskPath(p, base);
    const r = loadAnyTask(dir);
    if (!r.task || r.issues.length) {
      const first = r.issues.slice(0, 3).map((x) => `${x.file}${x.path ? ` ${x.path}` : ''}: ${x.message}`).join('; ');
      issues.push({ file, path: at, message: `task "${p}" (resolved to ${dir}) cannot be loaded: ${first}${r.issues.length > 3 ? ` (+${r.issues.length - 3} more)` : ''}` });
      return;
    }
    const unsupported = Object.keys(r.task.unsupported);
    if (unsupported.length) issues.push({ file, path: at, message: `task "${p}" uses primitives this build cannot run: ${unsupported.join(', ')}` });
    const seen = byId.get(r.task.id);
    if (seen !== undefined) issues.push({ file, path: at, message: `task id "${r.task.id}" is also the id of tasks[${seen}]: rollout ids would collide` });
    byId.set(r.task.id, i);
    tasks.push({
      path: p,
      dir: r.task.dir,
      id: r.task.id,
      hash: r.task.hash,
      nodes: r.task.dag.nodes.length,
      maxScore: Math.round(r.task.dag.nodes.reduce((a, n) => a + n.scoring.maxScore, 0) * 1000) / 1000,
    });
  });
  for (const [from, to] of Object.entries(input.imageMap ?? {})) {
    try {
      checkImageMap({ [from]: to }, 'imageMap');
    } catch (err) {
      issues.push({ file, path: `imageMap.${from}`, message: (err as Error).message.replace(/^imageMap: /, '') });
    }
  }
  const known = agentNames();
  input.agents.forEach((a, i) => {
    const name = typeof a === 'string' ? a : a.name;
    if (!known.includes(name)) issues.push({ file, path: typeof a === 'string' ? `agents[${i}]` : `agents[${i}].name`, message: `unknown agent "${name}" (known: ${known.join(', ')})` });
  });
  return { tasks, issues };
}

/** Activity: resolve the sweep's tasks on a worker; bad input is a non-retryable InvalidInputError. */
export async function sweepResolveTasks(i: { input: SweepInput }): Promise<ResolvedTask[]> {
  const { tasks, issues } = resolveSweepTasks(i.input);
  if (issues.length) throw new InvalidInputError(issues);
  return tasks;
}
