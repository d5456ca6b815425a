import { dirname } from 'node:path';
import type { InputIssue } from '../errors';
import { ComposeError, isolationPolicyIssues, type ComposeProject } from '../sandbox';
import { loadTaskCompose } from './task-compose';
import type { Task } from '../model/task';

/**
 * Load-time checks of a task's environment, so a bad compose file fails `tasks validate`, `run`
 * and `sweep` before anything starts (no run folder, no container):
 *  - the compose file parses within saasbench's compose subset (errors name the compose file and
 *    the JSON path inside it);
 *  - the app service, its port and the database service named by the manifest exist in it;
 *  - the isolation policy (src/sandbox/isolation.ts): the agent's service mounts no host path, no
 *    service mounts an engine socket or the hidden evaluation.
 */
export function environmentIssues(task: Task): InputIssue[] {
  const file = task.environment.composeFile;
  let project: ComposeProject;
  try {
    project = loadTaskCompose(task);
  } catch (err) {
    if (err instanceof ComposeError) return [{ file: err.file, path: err.path, message: err.sentence }];
    return [{ file, path: '', message: (err as Error).message }];
  }
  const issues: InputIssue[] = [];
  // the published layout's manifest is the compose file itself; the native one is task.yaml
  const manifest = task.layout === 'native' ? task.manifestFile : file;
  const at = (native: string, published: string) => (task.layout === 'native' ? native : published);
  const services = Object.keys(project.services);
  const app = project.services[task.environment.appService];
  if (!app) {
    issues.push({ file: manifest, path: at('environment.appService', 'services'), message: `service "${task.environment.appService}" is not in ${file} (services: ${services.join(', ')})` });
  } else if (!app.ports.some((p) => p.target === task.environment.appPort)) {
    issues.push({ file: manifest, path: at('environment.appPort', `services.${task.environment.appService}.ports`), message: `port ${task.environment.appPort} is not published by service "${task.environment.appService}" in ${file} (ports: ${app.ports.map((p) => p.target).join(', ') || 'none'}); the evaluator could not reach the app` });
  }
  const db = task.environment.database;
  if (db && !project.services[db.service]) {
    issues.push({ file: manifest, path: 'environment.database.service', message: `service "${db.service}" is not in ${file} (services: ${services.join(', ')})` });
  }
  const evalDir = dirname(task.dagFile);
  const hidden = [task.dagFile, ...(evalDir !== task.dir ? [evalDir] : []), ...(task.solution ? [task.solution.dir] : [])];
  for (const p of isolationPolicyIssues(project, { agentService: task.environment.appService, hidden, root: task.dir })) {
    issues.push({ file: project.file, path: p.path, message: p.message });
  }
  return issues;
}
