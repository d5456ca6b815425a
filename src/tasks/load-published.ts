import { knowledgeBaseIssues } from './knowledge-base';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import YAML from 'yaml';
import type { InputIssue } from '../errors';
import type { Json } from '../json';
import { loadCompose, type ComposeProject } from '../sandbox';
import { repoRoot } from '../temporal/tools';
import { checkDag } from './validate-dag';
import { hashTree } from './hash';
import { readJson, type LoadResult } from './load-native';
import { checkPlaceholders } from './placeholders';
import type { Task } from './task';

/** Service names the published drivers treat as infrastructure when picking the agent's service. */
const INFRA = new Set(['db', 'redis', 'postgres', 'postgresql', 'mysql', 'mariadb', 'mongo', 'mongodb', 'rabbitmq', 'kafka', 'zookeeper', 'elasticsearch', 'memcached', 'minio', 'neo4j', 'clickhouse', 'schema-registry', 'mock-receiver', 'worker', 'queue', 'scheduler', 'cache', 'broker', 'celery', 'ollama', 'milvus', 'qdrant', 'weaviate', 'vault', 'consul']);

/** The named volume that replaces the published `./workspace` bind mount (one per rollout: volumes are namespaced by stack). */
export const WORKSPACE_VOLUME = 'saasbench_workspace';

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

export interface PublishedLoadResult extends LoadResult {
  /** things worth knowing that are not errors: which DAG, stale config totals, placeholders that cannot resolve, … */
  notes: string[];
  /** the published files found, for `tasks import` */
  published?: PublishedFiles;
}

export interface PublishedFiles {
  taskName: string;
  dockerDir: string;
  composeFile: string;
  dagFile: string;
  dagVariant: 'dag.json' | 'dag_smoke.json' | string;
  scoringFile: string | null;
  promptFile: string;
  prdFile: string | null;
  kbFile: string | null;
  configPy: string | null;
  users: Record<string, Record<string, string>>;
  authHeaders: string[];
  appPort: number;
  appService: string;
  workspace: string;
}

// ---------------------------------------------------------------------------------------------
// per-task settings

/**
 * Test users: `TEST_USERS = {...}` in the evaluator's config.py when present (a Python dict
 * literal; `os.environ.get("X", "default")` values read as their default), else the prompt's
 * bullet list `- Admin: username=`eval_admin`, email=`…`, password=`…``.
 */
export function parseTestUsers(configPy: string | null, prompt: string): { users: Record<string, Record<string, string>>; source: string } {
  if (configPy) {
    const at = configPy.search(/^TEST_USERS\s*=\s*\{/m);
    if (at >= 0) {
      const open = configPy.indexOf('{', at);
      let depth = 0;
      let end = -1;
      for (let i = open; i < configPy.length; i++) {
        if (configPy[i] === '{') depth++;
        else if (configPy[i] === '}' && --depth === 0) {
          end = i;
          break;
        }
      }
      if (end > 0) {
        const lit = configPy
          .slice(open, end + 1)
          .replace(/#[^\n]*/g, '')
          .replace(/os\.(?:environ\.get|getenv)\(\s*(['"])[^'"]*\1\s*,\s*((['"])[^'"]*\3)\s*\)/g, '$2')
          .replace(/'([^'\\]*)'/g, (_m, s: string) => JSON.stringify(s))
          .replace(/\bTrue\b/g, 'true')
          .replace(/\bFalse\b/g, 'false')
          .replace(/\bNone\b/g, 'null')
          .replace(/,(\s*[}\]])/g, '$1');
        try {
          const v = JSON.parse(lit) as Record<string, Record<string, unknown>>;
          const users: Record<string, Record<string, string>> = {};
          for (const [role, fields] of Object.entries(v)) {
            if (!fields || typeof fields !== 'object') continue;
            users[role] = Object.fromEntries(Object.entries(fields).filter(([, x]) => typeof x === 'string' || typeof x === 'number').map(([k, x]) => [k, String(x)]));
          }
          return { users, source: 'config.py TEST_USERS' };
        } catch {
          // fall through to the prompt
        }
      }
    }
  }
  const users: Record<string, Record<string, string>> = {};
  for (const line of prompt.split('\n')) {
    const m = /^\s*[-*]\s*([A-Za-z][A-Za-z0-9 _-]*?)\s*:\s*(.*username\s*=.*)$/.exec(line);
    if (!m) continue;
    const role = m[1].trim().toLowerCase().replace(/[^a-z0-9]+/g, '_');
    const fields: Record<string, string> = {};
    for (const f of m[2].matchAll(/\b([a-z_]+)\s*=\s*`([^`]*)`/g)) fields[f[1]] = f[2];
    if (fields.username) users[role] = fields;
  }
  return { users, source: Object.keys(users).length ? 'the prompt' : 'nowhere' };
}

/** `<role>_<field>` and `eval_<role>_<field>`, as the published evaluator seeds its context. */
export function userVariables(users: Record<string, Record<string, string>>): Record<string, Json> {
  const vars: Record<string, Json> = {};
  for (const [role, fields] of Object.entries(users)) {
    for (const [k, v] of Object.entries(fields)) {
      vars[`${role}_${k}`] = v;
      vars[`eval_${role}_${k}`] = v;
    }
  }
  return vars;
}

/** Auth header names: config.py AUTH_HEADER_KEY / AUTH_HEADER_USER, else `Name` + `Name` pairs the prompt names. */
export function parseAuthHeaders(configPy: string | null, prompt: string): string[] {
  const out: string[] = [];
  if (configPy) for (const m of configPy.matchAll(/^AUTH_HEADER_\w+\s*=\s*['"]([^'"]+)['"]/gm)) out.push(m[1]);
  if (out.length) return out;
  for (const m of prompt.matchAll(/`([A-Z][A-Za-z-]*-(?:Key|Username|Token|User))`/g)) if (!out.includes(m[1])) out.push(m[1]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// compose

type RawVolume = string | { type?: string; source?: string; target?: string; read_only?: boolean; [k: string]: unknown };
type RawService = { volumes?: RawVolume[]; build?: string | { context?: string; dockerfile?: string; [k: string]: unknown }; env_file?: string | string[]; working_dir?: string; ports?: unknown[]; [k: string]: unknown };
type RawCompose = { services?: Record<string, RawService>; volumes?: Record<string, unknown>; [k: string]: unknown };

const isPathSource = (s: string) => s.startsWith('.') || s.startsWith('/') || s.startsWith('~');

/**
 * The published compose file with its workspace bind mount (`./workspace:/app`, a folder inside
 * the published tree) replaced by the named volume `saasbench_workspace`: the published tree is
 * read-only here and shared between rollouts, while a named volume is created per rollout (stack
 * volumes are namespaced by the rollout's project). Any bind of `<docker>/workspace`, and any bind
 * onto the app's workspace, is rewritten. With `absolutize`, every other relative path (bind
 * sources, build contexts, env files) is made absolute so the file can live elsewhere, and a
 * missing env file falls back to `.env.example`.
 */
export function rewritePublishedCompose(raw: RawCompose, dockerDir: string, appService: string, workspace: string, absolutize: boolean): { doc: RawCompose; notes: string[] } {
  const doc = JSON.parse(JSON.stringify(raw)) as RawCompose;
  const notes: string[] = [];
  const wsHost = resolve(dockerDir, 'workspace');
  let used = false;
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(dockerDir, p));
  for (const [name, svc] of Object.entries(doc.services ?? {})) {
    svc.volumes = (svc.volumes ?? []).map((v) => {
      if (typeof v === 'string') {
        const parts = v.split(':');
        if (parts.length < 2 || !isPathSource(parts[0])) return v;
        const src = abs(parts[0]);
        if (src === wsHost || (name === appService && parts[1] === workspace)) {
          used = true;
          notes.push(`compose: services.${name}.volumes "${v}" → named volume ${WORKSPACE_VOLUME} (per rollout; the published folder is read-only and shared)`);
          return [WORKSPACE_VOLUME, ...parts.slice(1).filter((p) => p !== 'rw')].join(':');
        }
        return absolutize ? [src, ...parts.slice(1)].join(':') : v;
      }
      if (v && v.type === 'bind' && typeof v.source === 'string') {
        const src = abs(v.source);
        if (src === wsHost || (name === appService && v.target === workspace)) {
          used = true;
          notes.push(`compose: services.${name}.volumes bind ${v.source} → named volume ${WORKSPACE_VOLUME}`);
          return { ...v, type: 'volume', source: WORKSPACE_VOLUME };
        }
        return absolutize ? { ...v, source: src } : v;
      }
      return v;
    });
    if (svc.volumes.length === 0) delete svc.volumes;
    if (absolutize) {
      if (typeof svc.build === 'string') svc.build = abs(svc.build);
      else if (svc.build && typeof svc.build === 'object') svc.build = { ...svc.build, context: abs(svc.build.context ?? '.') };
      if (svc.env_file !== undefined) {
        const list = Array.isArray(svc.env_file) ? svc.env_file : [svc.env_file];
        svc.env_file = list.map((f) => {
          const p = abs(f);
          if (existsSync(p)) return p;
          const example = resolve(dockerDir, `${basename(f)}.example`);
          if (existsSync(example)) {
            notes.push(`compose: services.${name}.env_file ${f} is missing; using ${basename(example)}`);
            return example;
          }
          return p;
        });
      }
    }
  }
  if (used) doc.volumes = { ...(doc.volumes ?? {}), [WORKSPACE_VOLUME]: {} };
  return { doc, notes };
}

function appServiceOf(services: string[]): string {
  return ['app', 'web'].find((s) => services.includes(s)) ?? services.filter((s) => !INFRA.has(s)).sort()[0] ?? services[0];
}

// ---------------------------------------------------------------------------------------------

function findFirst(paths: string[]): string | null {
  return paths.find((p) => existsSync(p)) ?? null;
}

/**
 * Read a task in the published SaaSBench layout (`tasks/task_<id>/docker`, `check/task_<id>`,
 * `check/task_<id>_e/evaluate`) into the same model as a native task. `dag` picks the DAG file
 * (default: dag_smoke.json when present, else dag.json — the published test script's choice).
 * The compose file the task runs with is a derived copy (see rewritePublishedCompose) written under
 * .saasbench/published/.
 */
export function loadPublishedTask(dirArg: string, opts: { dag?: string; derivedDir?: string } = {}): PublishedLoadResult {
  const dir = resolve(dirArg);
  const issues: InputIssue[] = [];
  const notes: string[] = [];
  const taskName = readdirSync(join(dir, 'tasks')).find((n) => n.startsWith('task_')) ?? basename(dir);
  const id = taskName.replace(/^task_/, '').toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const evalDir = join(dir, 'check', `${taskName}_e`, 'evaluate');
  const dagFile = opts.dag ? resolve(evalDir, opts.dag) : findFirst([join(evalDir, 'dag_smoke.json'), join(evalDir, 'dag.json')]) ?? join(evalDir, 'dag.json');
  const dockerDir = join(dir, 'tasks', taskName, 'docker');
  const composeFile = join(dockerDir, 'docker-compose.yml');
  const promptFile = join(dir, 'check', taskName, 'prompt_for_model.md');
  for (const f of [dagFile, composeFile, promptFile]) if (!existsSync(f)) issues.push({ file: f, path: '', message: 'file not found' });
  if (issues.length) return { task: null, issues, notes };
  const dagVariant = basename(dagFile);
  notes.push(`DAG: ${dagVariant}${dagVariant === 'dag_smoke.json' && existsSync(join(evalDir, 'dag.json')) ? ' (dag.json also present; --dag dag.json selects it)' : ''}`);

  // prompt, PRD, knowledge base, evaluator settings
  const promptText = promptSection(readFileSync(promptFile, 'utf8'));
  const prdFile = findFirst([join(dir, 'tasks', taskName, 'task', 'task.md'), join(dir, 'tasks', taskName, 'task.md'), join(dir, 'task.md')]);
  const kbFile = findFirst([join(dir, 'tasks', taskName, 'kb', 'knowledge_base.json'), join(dir, 'tasks', taskName, 'knowledge_base.json'), join(dir, 'knowledge_base.json')]);
  if (!prdFile) notes.push('task.md (the PRD) is not in this folder: the published benchmark distributes it separately (Hugging Face SaaSBench/SaaSBench); add it before running');
  if (kbFile) {
    const kb = readJson(kbFile, issues);
    if (kb !== undefined) issues.push(...knowledgeBaseIssues(kb, kbFile));
  }
  const configPyFile = findFirst([join(evalDir, 'config.py')]);
  const configPy = configPyFile ? readFileSync(configPyFile, 'utf8') : null;
  const { users, source: usersFrom } = parseTestUsers(configPy, promptText);
  const variables = userVariables(users);
  notes.push(Object.keys(users).length ? `test users from ${usersFrom}: ${Object.entries(users).map(([r, f]) => `${r}=${f.username}`).join(', ')} → variables ${Object.keys(variables).filter((k) => !k.startsWith('eval_')).join(', ')} (+ eval_ aliases)` : 'no test users found (config.py TEST_USERS or the prompt)');
  const authHeaders = parseAuthHeaders(configPy, promptText);
  notes.push(`roles: none declared — P13 fails naming the role; the published evaluator minted ${authHeaders.length ? authHeaders.join(' + ') : 'API-key'} credentials through a backdoor. Use \`saasbench tasks import --roles\` (docs/compatibility.md#auth)`);

  // scoring_config.json: optional metadata; totals are recomputed from the DAG
  const rawDag = readJson(dagFile, issues) as { nodes?: unknown[]; scoring_config?: unknown } | undefined;
  const scoringFile = findFirst([join(evalDir, 'scoring_config.json')]);
  let scoring: Record<string, unknown> | undefined;
  if (scoringFile) {
    try {
      scoring = JSON.parse(readFileSync(scoringFile, 'utf8')) as Record<string, unknown>;
    } catch (e) {
      notes.push(`scoring_config.json is not valid JSON (${(e as Error).message}); ignored`);
    }
  } else if (rawDag && rawDag.scoring_config && typeof rawDag.scoring_config === 'object') {
    scoring = rawDag.scoring_config as Record<string, unknown>;
    notes.push('scoring_config.json absent: trajectories read from the DAG\'s embedded scoring_config');
  }
  const allIds = new Set((rawDag?.nodes ?? []).map((n) => (n as { id?: unknown })?.id).filter((x): x is string => typeof x === 'string'));
  const trajectories: Record<string, string[]> = {};
  const trajRaw = scoring?.trajectories;
  if (trajRaw && typeof trajRaw === 'object') {
    const remaining: string[] = [];
    for (const [name, t] of Object.entries(trajRaw as Record<string, unknown>)) {
      if (!t || typeof t !== 'object') {
        notes.push(`scoring_config trajectories.${name} is not a trajectory (${JSON.stringify(t)}); ignored`);
        continue;
      }
      const ids = (t as { node_ids?: unknown; nodes?: unknown }).node_ids ?? (t as { nodes?: unknown }).nodes;
      if (ids === 'remaining') {
        remaining.push(name);
        continue;
      }
      if (!Array.isArray(ids)) {
        notes.push(`scoring_config trajectories.${name} has no node list; ignored`);
        continue;
      }
      const list = ids.filter((x): x is string => typeof x === 'string');
      const unknown = list.filter((x) => !allIds.has(x));
      if (unknown.length) notes.push(`scoring_config trajectories.${name}: ${unknown.length} of ${list.length} node ids are not in ${dagVariant} (stale config); dropped`);
      trajectories[name] = list.filter((x) => allIds.has(x));
    }
    for (const name of remaining) {
      const taken = new Set(Object.values(trajectories).flat());
      trajectories[name] = [...allIds].filter((x) => !taken.has(x));
      notes.push(`scoring_config trajectories.${name} = "remaining": the ${trajectories[name].length} nodes in no other trajectory`);
    }
  }
  const check = checkDag(rawDag, dagFile, trajectories);
  issues.push(...check.issues);
  const total = Math.round(check.dag.nodes.reduce((a, n) => a + n.scoring.maxScore, 0) * 1000) / 1000;
  const declared = scoring?.total_maxScore ?? scoring?.total_raw_score;
  if (typeof declared === 'number' && Math.abs(declared - total) > 1e-6) notes.push(`scoring_config.json declares total ${declared}; recomputed from the DAG: ${total} (the DAG wins)`);
  for (const [name, t] of Object.entries((trajRaw ?? {}) as Record<string, { maxScore?: unknown; total_score?: unknown }>)) {
    const want = t && typeof t === 'object' ? t.maxScore ?? t.total_score : undefined;
    const ids = trajectories[name];
    if (typeof want !== 'number' || !ids) continue;
    const got = Math.round(check.dag.nodes.filter((n) => ids.includes(n.id)).reduce((a, n) => a + n.scoring.maxScore, 0) * 1000) / 1000;
    if (Math.abs(got - want) > 1e-6) notes.push(`scoring_config trajectories.${name}.maxScore is ${want}; its nodes sum to ${got} (recomputed value used)`);
  }

  // compose: the app service, its port, the database; a derived file without the workspace bind
  const rawCompose = YAML.parse(readFileSync(composeFile, 'utf8')) as RawCompose;
  const services = Object.keys(rawCompose?.services ?? {});
  const appService = appServiceOf(services);
  const workspace = rawCompose?.services?.[appService]?.working_dir ?? '/app';
  const { doc, notes: composeNotes } = rewritePublishedCompose(rawCompose ?? {}, dockerDir, appService, workspace, true);
  notes.push(...composeNotes);
  const derivedDir = opts.derivedDir ?? join(repoRoot(), '.saasbench', 'published', `${taskName}-${hashTree(dockerDir).slice(0, 12)}`);
  const derivedCompose = join(derivedDir, 'docker-compose.yml');
  let project: ComposeProject | undefined;
  try {
    mkdirSync(derivedDir, { recursive: true });
    const text = `# derived by saasbench from ${composeFile}: workspace bind → named volume, paths absolute\n${YAML.stringify(doc)}`;
    if (!existsSync(derivedCompose) || readFileSync(derivedCompose, 'utf8') !== text) writeFileSync(derivedCompose, text);
    const dotenv = findFirst([join(dockerDir, '.env'), join(dockerDir, '.env.example')]);
    if (dotenv) {
      const envText = readFileSync(dotenv, 'utf8');
      const target = join(derivedDir, '.env');
      if (!existsSync(target) || readFileSync(target, 'utf8') !== envText) writeFileSync(target, envText, { mode: 0o644 });
      if (basename(dotenv) !== '.env') notes.push('.env is missing: compose variables are interpolated from .env.example');
    }
    project = loadCompose(derivedCompose, { processEnv: {} });
  } catch (e) {
    const err = e as Error & { path?: string };
    issues.push({ file: composeFile, path: err.path ?? '', message: `compose: ${err.message}` });
  }
  const app = project?.services[appService];
  const appPort = app?.ports[0]?.target ?? 8080;
  const promptPort = /listen on port\s*`?(\d{2,5})`?/i.exec(promptText)?.[1];
  if (promptPort && Number(promptPort) !== appPort) notes.push(`the prompt says port ${promptPort} but compose publishes ${appPort} for ${appService}`);
  const dbService = services.find((s) => ['db', 'postgres', 'postgresql'].includes(s));
  const dbEnv = dbService ? project?.services[dbService]?.environment ?? {} : {};

  // placeholders: published DAGs are data we do not control, so unresolvable ones are notes here
  // (the node fails at run time naming the variable); for native tasks they are errors.
  if (rawDag?.nodes) {
    for (const i of checkPlaceholders(check.dag, rawDag.nodes, { file: dagFile, variables: Object.keys(variables), publishedIdCapture: true })) {
      notes.push(`unresolvable placeholder at ${i.path} (node ${i.nodeId}): ${i.message}`);
    }
  }

  const task: Task = {
    id,
    title: `published SaaSBench task ${taskName} (${dagVariant})`,
    dir,
    layout: 'published',
    manifestFile: dagFile,
    prdFile,
    knowledgeBaseFile: kbFile,
    promptText,
    environment: {
      composeFile: derivedCompose,
      appService,
      workspace,
      appPort,
      envFileFallbacks: ['.env.example'],
      database: dbEnv.POSTGRES_USER
        ? { kind: 'postgres', service: dbService!, port: 5432, user: dbEnv.POSTGRES_USER, password: dbEnv.POSTGRES_PASSWORD ?? '', name: dbEnv.POSTGRES_DB ?? dbEnv.POSTGRES_USER }
        : undefined,
    },
    dagFile,
    dag: check.dag,
    variables,
    hash: hashTree(dir),
    unsupported: check.unsupported,
    // the published evaluator minted credentials through backdoors; we declare none (compatibility.md#auth)
    roles: {},
    publishedIdCapture: true,
  };
  return {
    task,
    issues,
    notes,
    published: { taskName, dockerDir, composeFile, dagFile, dagVariant, scoringFile, promptFile, prdFile, kbFile, configPy: configPyFile, users, authHeaders, appPort, appService, workspace },
  };
}
