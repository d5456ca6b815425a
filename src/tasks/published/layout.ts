import { existsSync, readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

/** A folder in the published SaaSBench layout has `tasks/task_<id>/` and `check/`. */
export function isPublishedLayout(dir: string): boolean {
  return existsSync(join(dir, 'check')) && existsSync(join(dir, 'tasks'));
}

/** The text between "## Prompt" and "## Tester Workflow" of prompt_for_model.md (as the published driver takes it). */
export function promptSection(md: string): string {
  const text = md.replace(/\r\n/g, '\n');
  const start = text.search(/^## Prompt\s*$/m);
  if (start < 0) return text.trim();
  const rest = text.slice(start).replace(/^## Prompt\s*$/m, '');
  const end = rest.search(/^## Tester Workflow\s*$/m);
  return (end < 0 ? rest : rest.slice(0, end)).replace(/\n---\s*$/, '').trim();
}

export function findFirst(paths: string[]): string | null {
  return paths.find((p) => existsSync(p)) ?? null;
}

/** Where the files of one published task are. Paths are absolute; optional files are null. */
export interface PublishedPaths {
  dir: string;
  /** `task_<id>` */
  taskName: string;
  /** the published id without `task_`, e.g. `aoiwqoiq` */
  publishedId: string;
  evalDir: string;
  dockerDir: string;
  composeFile: string;
  promptFile: string;
  dagFile: string;
  /** every DAG file of the evaluate folder (dag.json, dag_smoke.json, dag_cv2.json, …) */
  dagFiles: string[];
  scoringFile: string | null;
  configPy: string | null;
  prdFile: string | null;
  kbFile: string | null;
}

/**
 * The DAG a published task runs with: `dag.json` when present, else `dag_smoke.json`. The paper's
 * figures (5,370 nodes, maxScore 17,299.1) add up over the dag.json files; the published test
 * scripts call dag_smoke.json, which in orghjavi is a 42-node subset (docs/compatibility.md).
 */
export function defaultDag(evalDir: string): string {
  return findFirst([join(evalDir, 'dag.json'), join(evalDir, 'dag_smoke.json')]) ?? join(evalDir, 'dag.json');
}

export function publishedPaths(dirArg: string, dag?: string): PublishedPaths {
  const dir = resolve(dirArg);
  const taskName = readdirSync(join(dir, 'tasks')).find((n) => n.startsWith('task_')) ?? basename(dir);
  const evalDir = join(dir, 'check', `${taskName}_e`, 'evaluate');
  const dockerDir = join(dir, 'tasks', taskName, 'docker');
  const taskRoot = join(dir, 'tasks', taskName);
  const dagFiles = existsSync(evalDir) ? readdirSync(evalDir).filter((f) => /^dag.*\.json$/.test(f)).sort().map((f) => join(evalDir, f)) : [];
  return {
    dir,
    taskName,
    publishedId: taskName.replace(/^task_/, ''),
    evalDir,
    dockerDir,
    composeFile: join(dockerDir, 'docker-compose.yml'),
    promptFile: join(dir, 'check', taskName, 'prompt_for_model.md'),
    dagFile: dag ? resolve(evalDir, dag) : defaultDag(evalDir),
    dagFiles,
    scoringFile: findFirst([join(evalDir, 'scoring_config.json')]),
    configPy: findFirst([join(evalDir, 'config.py')]),
    prdFile: findFirst([join(taskRoot, 'task', 'task.md'), join(taskRoot, 'task.md'), join(dir, 'task.md')]),
    kbFile: findFirst([join(taskRoot, 'kb', 'knowledge_base.json'), join(taskRoot, 'knowledge_base.json'), join(dir, 'knowledge_base.json')]),
  };
}
