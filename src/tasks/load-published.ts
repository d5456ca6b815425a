import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import YAML from 'yaml';
import type { InputIssue } from '../errors';
import { checkDag } from './validate-dag';
import { hashTree } from './hash';
import { readJson, type LoadResult } from './load-native';
import type { Task } from './task';

/** Service names the published drivers treat as infrastructure when picking the agent's service. */
const INFRA = new Set(['db', 'redis', 'postgres', 'postgresql', 'mysql', 'mariadb', 'mongo', 'mongodb', 'rabbitmq', 'kafka', 'zookeeper', 'elasticsearch', 'memcached', 'minio', 'neo4j', 'clickhouse', 'schema-registry', 'mock-receiver', 'worker', 'queue', 'scheduler', 'cache', 'broker', 'celery']);

export function isPublishedLayout(dir: string): boolean {
  return existsSync(join(dir, 'check')) && existsSync(join(dir, 'tasks'));
}

/** The text between "## Prompt" and "## Tester Workflow" of prompt_for_model.md (as the published driver takes it). */
export function promptSection(md: string): string {
  const start = md.search(/^## Prompt\s*$/m);
  if (start < 0) return md.trim();
  const rest = md.slice(start).replace(/^## Prompt\s*$/m, '');
  const end = rest.search(/^## Tester Workflow\s*$/m);
  return (end < 0 ? rest : rest.slice(0, end)).replace(/\n---\s*$/, '').trim();
}

/**
 * Read a task in the published SaaSBench layout (`tasks/task_<id>/docker`, `check/task_<id>`,
 * `check/task_<id>_e/evaluate`) into the same model as a native task.
 */
export function loadPublishedTask(dirArg: string): LoadResult {
  const dir = resolve(dirArg);
  const issues: InputIssue[] = [];
  const taskName = readdirSync(join(dir, 'tasks')).find((n) => n.startsWith('task_')) ?? basename(dir);
  const id = taskName.replace(/^task_/, '');
  const evalDir = join(dir, 'check', `${taskName}_e`, 'evaluate');
  const dagFile = [join(evalDir, 'dag_smoke.json'), join(evalDir, 'dag.json')].find(existsSync) ?? join(evalDir, 'dag.json');
  const composeFile = join(dir, 'tasks', taskName, 'docker', 'docker-compose.yml');
  const promptFile = join(dir, 'check', taskName, 'prompt_for_model.md');
  for (const f of [dagFile, composeFile, promptFile]) if (!existsSync(f)) issues.push({ file: f, path: '', message: 'file not found' });
  if (issues.length) return { task: null, issues };

  const scoringFile = join(evalDir, 'scoring_config.json');
  const scoring = existsSync(scoringFile) ? (readJson(scoringFile, issues) as { trajectories?: Record<string, { node_ids?: unknown; nodes?: unknown }> }) : undefined;
  const trajectories: Record<string, string[]> = {};
  for (const [name, t] of Object.entries(scoring?.trajectories ?? {})) {
    const ids = (t && typeof t === 'object' && (t.node_ids ?? t.nodes)) || null;
    if (Array.isArray(ids)) trajectories[name] = ids.filter((x): x is string => typeof x === 'string');
  }
  const check = checkDag(readJson(dagFile, issues), dagFile, trajectories);
  issues.push(...check.issues);

  const compose = YAML.parse(readFileSync(composeFile, 'utf8')) as { services?: Record<string, { ports?: unknown[]; working_dir?: string; environment?: Record<string, string> }> };
  const services = Object.keys(compose.services ?? {});
  const appService = ['app', 'web'].find((s) => services.includes(s)) ?? services.filter((s) => !INFRA.has(s)).sort()[0] ?? services[0];
  const app = compose.services?.[appService] ?? {};
  const appPort = Number(String(app.ports?.[0] ?? '').split(':').pop()?.split('/')[0]) || 8080;
  const dbService = services.find((s) => ['db', 'postgres', 'postgresql'].includes(s));
  const dbEnv = dbService ? compose.services?.[dbService]?.environment ?? {} : {};
  const kb = join(dir, 'tasks', taskName, 'kb', 'knowledge_base.json');
  const prd = join(dir, 'tasks', taskName, 'task', 'task.md');
  const task: Task = {
    id,
    title: `published SaaSBench task ${taskName}`,
    dir,
    layout: 'published',
    manifestFile: dagFile,
    prdFile: existsSync(prd) ? prd : null,
    knowledgeBaseFile: existsSync(kb) ? kb : null,
    promptText: promptSection(readFileSync(promptFile, 'utf8')),
    environment: {
      composeFile,
      appService,
      workspace: app.working_dir ?? '/app',
      appPort,
      envFileFallbacks: ['.env.example'],
      database: dbEnv.POSTGRES_USER
        ? { kind: 'postgres', service: dbService!, port: 5432, user: dbEnv.POSTGRES_USER, password: dbEnv.POSTGRES_PASSWORD ?? '', name: dbEnv.POSTGRES_DB ?? dbEnv.POSTGRES_USER }
        : undefined,
    },
    dagFile,
    dag: check.dag,
    variables: {},
    hash: hashTree(dir),
    unsupported: check.unsupported,
  };
  return { task, issues };
}
