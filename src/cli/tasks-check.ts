// `saasbench tasks check <task>`: can this host run the task's stack? The images each service needs
// (after `.env` interpolation, build args and the image map) and whether each is present, buildable
// (and from which base) or must be pulled; and the compose keys the file uses.
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { formatIssue } from '../errors';
import { imageMapFlags as mapAsFlags, planImages, type ImageMap } from '../sandbox';
import { loadAnyTask } from '../tasks/load';
import { loadTaskCompose } from '../tasks/task-compose';
import { describePlan, envImageMap, imageMapFlags, standinHint } from './preflight';

export interface TasksCheckOptions {
  imageMap?: string[];
  json?: boolean;
  /** do not ask a registry about absent images (report them as not pullable) */
  offline?: boolean;
}

/** Top-level keys and the union of service keys of a compose file (what `tasks check` reports). */
export function composeKeysInUse(file: string): { top: string[]; service: string[] } {
  const doc = (YAML.parse(readFileSync(file, 'utf8'), { merge: true }) ?? {}) as Record<string, unknown>;
  const service = new Set<string>();
  for (const s of Object.values((doc.services ?? {}) as Record<string, unknown>)) {
    if (s && typeof s === 'object') for (const k of Object.keys(s)) if (!k.startsWith('x-')) service.add(k);
  }
  return { top: Object.keys(doc).filter((k) => !k.startsWith('x-')), service: [...service].sort() };
}

export async function tasksCheckCommand(dir: string, o: TasksCheckOptions, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const { task, issues } = loadAnyTask(dir);
  if (!task) {
    for (const i of issues) process.stderr.write(`${formatIssue(i)}\n`);
    return 2;
  }
  const imageMap: ImageMap = { ...envImageMap(), ...imageMapFlags(o.imageMap) };
  const project = loadTaskCompose(task);
  const plans = await planImages(project, task.id, { imageMap, registry: !o.offline });
  const keys = composeKeysInUse(task.environment.composeFile);
  const ok = plans.every((p) => !p.problem);
  if (o.json) {
    out.write(`${JSON.stringify({ task: task.id, composeFile: task.environment.composeFile, composeEnv: task.environment.composeEnv ?? {}, imageMap, keys, images: plans, ok, loadIssues: issues }, null, 2)}\n`);
    return ok ? 0 : 1;
  }
  const w = (l = '') => out.write(`${l}\n`);
  w(`task ${task.id} (${task.layout} layout)`);
  w(`  compose: ${task.environment.composeFile}`);
  const env = Object.entries(task.environment.composeEnv ?? {});
  w(`  interpolated with: .env${env.length ? `, then ${env.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')}` : ''}`);
  if (Object.keys(imageMap).length) w(`  image map: ${mapAsFlags(imageMap).join(' ')}`);
  w(`  compose keys in use: top level: ${keys.top.join(', ')}; services: ${keys.service.join(', ')}`);
  if (project.warnings.length) for (const x of project.warnings) w(`  note: ${x}`);
  w();
  w('images:');
  for (const p of plans) for (const l of describePlan(p)) w(`  ${l}`);
  w();
  if (issues.length) w(`(the task has ${issues.length} other problem(s): \`saasbench tasks validate ${dir}\`)`);
  if (ok) {
    w('every image is available on this host');
    return 0;
  }
  const bad = plans.filter((p) => p.problem).length;
  w(`${bad} image${bad > 1 ? 's are' : ' is'} not available on this host`);
  const hint = standinHint(plans);
  if (hint) w(`hint: ${hint}`);
  return 1;
}
