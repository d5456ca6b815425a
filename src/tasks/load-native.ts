import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import YAML from 'yaml';
import { jsonPath } from '../model/json';
import { InvalidInputError, type InputIssue } from '../errors';
import { TaskManifestSchema } from './manifest-schema';
import { checkDag } from './validate-dag';
import { checkPlaceholders } from './placeholders';
import { addPublishedContextEdges } from './published/context-edges';
import { hashTree } from './hash';
import { zodInputIssues } from '../zod-issues';
import { knowledgeBaseIssues } from './knowledge-base';
import type { Task } from '../model/task';

export interface LoadResult {
  task: Task | null;
  issues: InputIssue[];
}

export function readJson(file: string, issues: InputIssue[]): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    issues.push({ file, path: '', message: existsSync(file) ? `not valid JSON: ${(e as Error).message}` : 'file not found' });
    return undefined;
  }
}

/**
 * Load a native task folder (task.yaml). Collects every problem instead of stopping at the first;
 * `task` is returned whenever the DAG could be read, so `tasks validate` can still show its shape.
 */
export function loadNativeTask(dirArg: string): LoadResult {
  const dir = resolve(dirArg);
  const manifestFile = join(dir, 'task.yaml');
  const issues: InputIssue[] = [];
  let raw: unknown;
  try {
    raw = YAML.parse(readFileSync(manifestFile, 'utf8'));
  } catch (e) {
    return { task: null, issues: [{ file: manifestFile, path: '', message: existsSync(manifestFile) ? `not valid YAML: ${(e as Error).message.split('\n')[0]}` : 'file not found' }] };
  }
  const parsed = TaskManifestSchema.safeParse(raw);
  if (!parsed.success) {
    return { task: null, issues: zodInputIssues(parsed.error, manifestFile) };
  }
  const m = parsed.data;
  const need = (rel: string, key: string): string => {
    const p = join(dir, rel);
    if (!existsSync(p)) issues.push({ file: manifestFile, path: key, message: `${rel} does not exist` });
    return p;
  };
  const prdFile = need(m.prd, 'prd');
  const kbFile = m.knowledgeBase ? need(m.knowledgeBase, 'knowledgeBase') : null;
  const promptFile = need(m.prompt, 'prompt');
  const composeFile = need(m.environment.compose, 'environment.compose');
  const dagFile = need(m.evaluation.dag, 'evaluation.dag');
  const solutionDir = m.solution ? need(m.solution.dir, 'solution.dir') : undefined;
  if (kbFile && existsSync(kbFile)) {
    const kb = readJson(kbFile, issues);
    if (kb !== undefined) issues.push(...knowledgeBaseIssues(kb, kbFile));
  }
  if (issues.length) return { task: null, issues };

  const rawDag = readJson(dagFile, issues) as { nodes?: unknown[] } | undefined;
  if (rawDag === undefined) return { task: null, issues };
  const check = checkDag(rawDag, dagFile);
  issues.push(...check.issues);
  const notes: string[] = [];
  if (Array.isArray(rawDag?.nodes) && m.compat?.published_context) {
    const e = addPublishedContextEdges(check.dag, rawDag.nodes, Object.keys(m.variables));
    if (e.edges) notes.push(`published context: ${e.nodes} node(s) run after ${e.edges} earlier producer edge(s) of variables they read`);
  }
  if (Array.isArray(rawDag?.nodes)) {
    const ph = checkPlaceholders(check.dag, rawDag.nodes, { file: dagFile, variables: Object.keys(m.variables), publishedIdCapture: m.compat?.published_id_capture });
    if (m.compat?.unresolved_placeholders === 'runtime') notes.push(...ph.map((i) => `unresolvable placeholder at ${i.path} (node ${i.nodeId}); it fails at run time: ${i.message}`));
    else issues.push(...ph);
  }
  const task: Task = {
    id: m.id,
    title: m.title,
    dir,
    layout: 'native',
    manifestFile,
    prdFile,
    knowledgeBaseFile: kbFile,
    promptText: readFileSync(promptFile, 'utf8').trim(),
    environment: { composeFile, ...m.environment },
    dagFile,
    dag: check.dag,
    ...(m.evaluation.parallelSafe ? { parallelSafe: true } : {}),
    solution: m.solution && solutionDir ? { dir: solutionDir, start: m.solution.start } : undefined,
    variables: m.variables,
    ...(m.forbiddenSources ? { forbiddenSources: m.forbiddenSources } : {}),
    ...(m.limits ? { limits: { cpus: m.limits.cpus, memoryBytes: m.limits.memory, pids: m.limits.pids } } : {}),
    ...(m.network ? { network: { allow: m.network.allow } } : {}),
    hash: hashTree(dir),
    unsupported: check.unsupported,
    roles: m.roles ?? {},
    publishedIdCapture: m.compat?.published_id_capture ?? false,
  };
  return { task, issues, ...(notes.length ? { notes } : {}) };
}

export function loadTaskOrThrow(dir: string, load: (d: string) => LoadResult = loadNativeTask): Task {
  const r = load(dir);
  if (!r.task || r.issues.length) throw new InvalidInputError(r.issues);
  return r.task;
}
