import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { BACKBONES, backboneOf, UNMAPPED } from '../scoring/backbone';
import { loadAnyTask } from '../tasks/load';
import type { Task } from '../model/task';
import type { PublishedLoadResult } from '../tasks/published';
import { knownVariables } from '../tasks/placeholders';
import { unreachableOf, type Unreachable } from '../tasks/unreachable';
import { PAPER, PUBLISHED_TASK_IDS } from './paper';

export interface TaskStats {
  task: string;
  dag: string;
  nodes: number;
  maxScore: number;
  judgeNodes: number;
  judgeMaxScore: number;
  /** maxScore per backbone (and Unmapped) */
  backbone: Record<string, number>;
  unreachable: Unreachable;
  unmapped: string[];
  /** load problems (a task with problems is counted from what could be read) */
  issues: number;
  /** what a published task declares about itself (scoring config / DAG meta), when it does */
  declared: { nodes?: number; maxScore?: number };
}

export interface BenchmarkStats {
  dir: string;
  tasks: TaskStats[];
  total: Omit<TaskStats, 'task' | 'dag' | 'issues' | 'declared'> & { tasks: number; issues: number; declared: { nodes: number; maxScore: number } };
  /** published task ids missing from the folder */
  missing: string[];
  paper: typeof PAPER;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function taskStats(task: Task, issues: number, declared: TaskStats['declared'] = {}): TaskStats {
  const backbone: Record<string, number> = Object.fromEntries([...BACKBONES, UNMAPPED].map((b) => [b, 0]));
  const unmapped = new Set<string>();
  let max = 0;
  let judgeMax = 0;
  let judgeNodes = 0;
  for (const n of task.dag.nodes) {
    const m = n.scoring.maxScore;
    max += m;
    const b = backboneOf(n.scoring.category);
    backbone[b] += m;
    if (b === UNMAPPED) unmapped.add(n.scoring.category);
    if (n.scoring.method === 'llm-judge') {
      judgeNodes++;
      judgeMax += m;
    }
  }
  for (const b of Object.keys(backbone)) backbone[b] = r3(backbone[b]);
  return {
    task: task.layout === 'published' ? basename(task.dir) : task.id,
    dag: basename(task.dagFile),
    nodes: task.dag.nodes.length,
    maxScore: r3(max),
    judgeNodes,
    judgeMaxScore: r3(judgeMax),
    backbone,
    unreachable: unreachableOf(task.dag, task.dag.nodes, { variables: knownVariables(task), publishedIdCapture: task.publishedIdCapture }),
    unmapped: [...unmapped].sort(),
    issues,
    declared,
  };
}

/** Load every task folder of a benchmark folder (task_* in the published layout, or native ones) and count. */
export function benchmarkStats(dirArg: string): BenchmarkStats {
  const dir = resolve(dirArg);
  // task folders may be symlinks (a benchmark folder assembled from several places)
  const folders = readdirSync(dir)
    .filter((n) => statSync(join(dir, n), { throwIfNoEntry: false })?.isDirectory() && (n.startsWith('task_') || existsSync(join(dir, n, 'task.yaml'))))
    .map((n) => join(dir, n))
    .sort();
  const tasks: TaskStats[] = [];
  for (const f of folders) {
    const r = loadAnyTask(f) as PublishedLoadResult;
    if (r.task) tasks.push(taskStats(r.task, r.issues.length, r.published?.declared));
  }
  const sum = (f: (t: TaskStats) => number) => r3(tasks.reduce((a, t) => a + f(t), 0));
  const backbone = Object.fromEntries([...BACKBONES, UNMAPPED].map((b) => [b, sum((t) => t.backbone[b] ?? 0)]));
  const present = new Set(tasks.map((t) => t.task.replace(/^task_/, '')));
  return {
    dir,
    tasks,
    total: {
      tasks: tasks.length,
      nodes: sum((t) => t.nodes),
      maxScore: sum((t) => t.maxScore),
      judgeNodes: sum((t) => t.judgeNodes),
      judgeMaxScore: sum((t) => t.judgeMaxScore),
      backbone,
      unreachable: {
        maxScore: sum((t) => t.unreachable.maxScore),
        nodes: tasks.flatMap((t) => t.unreachable.nodes.map((n) => `${t.task}:${n}`)),
        byCause: { stub: sum((t) => t.unreachable.byCause.stub), placeholder: sum((t) => t.unreachable.byCause.placeholder), dependency: sum((t) => t.unreachable.byCause.dependency) },
      },
      unmapped: [...new Set(tasks.flatMap((t) => t.unmapped))].sort(),
      issues: sum((t) => t.issues),
      // where a task declares nothing, its counted value stands in
      declared: { nodes: sum((t) => t.declared.nodes ?? t.nodes), maxScore: sum((t) => t.declared.maxScore ?? t.maxScore) },
    },
    missing: PUBLISHED_TASK_IDS.filter((id) => !present.has(id)),
    paper: PAPER,
  };
}
