import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import YAML from 'yaml';
import type { InputIssue } from '../errors';
import { RolesSchema, type RolesDecl } from '../model/roles';
import { loadNativeTask } from './load-native';
import { loadPublishedTask, rewritePublishedCompose, type PublishedLoadResult } from './published';
import { modelRunDotenv, useModelDockerfile } from './published/compose';
import type { Task } from '../model/task';
import { zodInputIssues } from '../zod-issues';

export interface ImportOptions {
  /** the native task folder to write (must not exist, or be empty, unless force) */
  out: string;
  /** a YAML file declaring roles (a map of roles, or {roles: …}) */
  rolesFile?: string;
  /** task id (default: the published id) */
  id?: string;
  /** which DAG file of the evaluate folder (default: dag_smoke.json if present, else dag.json) */
  dag?: string;
  force?: boolean;
}

export interface ImportResult {
  ok: boolean;
  issues: InputIssue[];
  notes: string[];
  written: string[];
  task?: Task | null;
}

function copyTree(from: string, to: string, skip: (rel: string) => boolean, written: string[], root = from): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const src = join(from, e.name);
    const rel = relative(root, src);
    if (skip(rel)) continue;
    const dst = join(to, e.name);
    if (e.isDirectory()) copyTree(src, dst, skip, written, root);
    else if (e.isFile() || statSync(src).isFile()) {
      writeFileSync(dst, readFileSync(src), { mode: 0o644 });
      written.push(dst);
    }
  }
}

function readRoles(file: string, issues: InputIssue[]): RolesDecl | undefined {
  let raw: unknown;
  try {
    raw = YAML.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    issues.push({ file, path: '', message: existsSync(file) ? `not valid YAML: ${(e as Error).message}` : 'file not found' });
    return undefined;
  }
  const roles = raw && typeof raw === 'object' && 'roles' in (raw as object) ? (raw as { roles: unknown }).roles : raw;
  const parsed = RolesSchema.safeParse(roles);
  if (!parsed.success) {
    issues.push(...zodInputIssues(parsed.error, file, 'roles'));
    return undefined;
  }
  return parsed.data;
}

const ROLES_HELP = (headers: string[], users: string[]) => `
# roles: how the evaluator obtains each role's credentials (P13, P14, SCREENSHOT login_as).
# The published evaluator minted ${headers.length ? headers.join(' + ') : 'API-key'} credentials through a backdoor
# (rails runner / raw SQL); saasbench does not. Declare each role the DAG uses${users.length ? ` (${users.join(', ')} …)` : ''}, e.g.:
#
# roles:
#   admin:
#     username: "{{admin_username}}"
#     password: "{{admin_password}}"
#     login:                                   # an HTTP login the app offers
#       path: /session.json
#       body: {login: "{{username}}", password: "{{password}}"}
#       csrf: {path: /session/csrf.json, token: {from: body, path: $.csrf}, header: X-CSRF-Token}
#   user:
#     seed:                                    # or an explicit, visible seed step in the app container
#       command: "bin/create-api-key eval_user"
#     send: {headers: {Api-Key: "{{token}}", Api-Username: "{{user_username}}"}}
#
# Then re-run \`saasbench tasks validate\` on this folder. See docs/compatibility.md#auth.
`;

/**
 * Write a native task folder (task.yaml, task.md, knowledge_base.json, prompt.md, environment/,
 * evaluation/) from a published one, then load it back to prove it is valid. The compose file's
 * workspace bind mount becomes the named volume saasbench_workspace; the Docker folder is copied
 * without its workspace/; `.env` is made from `.env.example` when missing; the published id capture
 * is kept (`compat.published_id_capture`) and unresolvable placeholders fail at run time
 * (`compat.unresolved_placeholders: runtime`), as the published DAGs were written for them.
 */
export function importPublishedTask(src: string, o: ImportOptions): ImportResult {
  const issues: InputIssue[] = [];
  const written: string[] = [];
  const loaded: PublishedLoadResult = loadPublishedTask(src, { dag: o.dag });
  const notes = [...loaded.notes.filter((n) => !n.startsWith('roles: ') && !n.startsWith('unresolvable placeholder') && !n.startsWith('compose:'))];
  if (!loaded.task || loaded.issues.length || !loaded.published) return { ok: false, issues: loaded.issues, notes, written };
  const t = loaded.task;
  const p = loaded.published;
  const out = resolve(o.out);
  if (existsSync(out) && readdirSync(out).length > 0 && !o.force) {
    return { ok: false, issues: [{ file: out, path: '', message: 'the output folder exists and is not empty (use --force to write into it)' }], notes, written };
  }
  const roles = o.rolesFile ? readRoles(o.rolesFile, issues) : p.pack?.roles && Object.keys(p.pack.roles).length ? p.pack.roles : undefined;
  if (issues.length) return { ok: false, issues, notes, written };
  const id = o.id ?? t.id;
  if (!/^[a-z0-9][a-z0-9-]*$/.test(id)) return { ok: false, issues: [{ file: 'command line', path: '--id', message: `"${id}" is not a task id (lowercase letters, digits, -)` }], notes, written };

  // environment: the Docker folder without its workspace, and the rewritten compose file
  const env = join(out, 'environment');
  copyTree(p.dockerDir, env, (rel) => rel === 'workspace' || rel.startsWith('workspace/') || rel === 'docker-compose.yml', written);
  const rawCompose = YAML.parse(readFileSync(p.composeFile, 'utf8'));
  const { doc, notes: composeNotes } = rewritePublishedCompose(rawCompose, p.dockerDir, p.appService, p.workspace, false);
  notes.push(...composeNotes, ...useModelDockerfile(doc, p.dockerDir, p.appService, true));
  writeFileSync(join(env, 'docker-compose.yml'), `# imported by saasbench from ${p.composeFile}\n${YAML.stringify(doc)}`);
  written.push(join(env, 'docker-compose.yml'));
  if (!existsSync(join(env, '.env')) && existsSync(join(env, '.env.example'))) {
    copyFileSync(join(env, '.env.example'), join(env, '.env'));
    written.push(join(env, '.env'));
    notes.push('environment/.env created from .env.example (the published compose file requires .env)');
  }
  // the published loader interpolates with these (a model run); an imported task has only its .env
  appendFileSync(join(env, '.env'), modelRunDotenv());
  if (!written.includes(join(env, '.env'))) written.push(join(env, '.env'));
  notes.push('environment/.env: IMAGE_TAG=model and APP_CMD="sleep infinity" appended (a model run)');

  // evaluation: the chosen DAG and the scoring config (metadata)
  mkdirSync(join(out, 'evaluation'), { recursive: true });
  // the canonical form (dialects mapped: docs/compatibility.md), so the native loader needs no dialects
  writeFileSync(join(out, 'evaluation', 'dag.json'), `${JSON.stringify(p.canonicalDag, null, 2)}\n`);
  written.push(join(out, 'evaluation', 'dag.json'));
  if (p.scoringFile) {
    copyFileSync(p.scoringFile, join(out, 'evaluation', 'scoring_config.json'));
    written.push(join(out, 'evaluation', 'scoring_config.json'));
  }

  // PRD, knowledge base, prompt
  if (p.prdFile) copyFileSync(p.prdFile, join(out, 'task.md'));
  else {
    writeFileSync(join(out, 'task.md'), `# ${p.taskName}: PRD missing\n\nThe published folder did not include task.md. Replace this file with the task's PRD (Hugging Face dataset SaaSBench/SaaSBench, tasks/${p.taskName.replace(/^task_/, '')}/task.md) before running.\n`);
    notes.push('task.md is a placeholder: replace it with the PRD before running');
  }
  written.push(join(out, 'task.md'));
  if (p.kbFile) {
    copyFileSync(p.kbFile, join(out, 'knowledge_base.json'));
    written.push(join(out, 'knowledge_base.json'));
  }
  writeFileSync(join(out, 'prompt.md'), `${t.promptText}\n`);
  written.push(join(out, 'prompt.md'));

  // task.yaml
  const manifest: Record<string, unknown> = {
    id,
    title: `${p.taskName} (imported from the published SaaSBench layout, ${p.dagVariant})`,
    prd: 'task.md',
    ...(p.kbFile ? { knowledgeBase: 'knowledge_base.json' } : {}),
    prompt: 'prompt.md',
    environment: {
      compose: 'environment/docker-compose.yml',
      appService: t.environment.appService,
      workspace: t.environment.workspace,
      appPort: t.environment.appPort,
      ...(t.environment.database ? { database: t.environment.database } : {}),
      ...(t.environment.databases ? { databases: t.environment.databases } : {}),
    },
    evaluation: { dag: 'evaluation/dag.json' },
    variables: t.variables,
    ...(roles ? { roles } : {}),
    compat: { published_id_capture: true, unresolved_placeholders: 'runtime', published_context: true },
  };
  const header = `# Imported by \`saasbench tasks import\` from ${resolve(src)}\n`;
  const help = roles ? '' : ROLES_HELP(p.authHeaders, Object.keys(p.users));
  writeFileSync(join(out, 'task.yaml'), `${header}${YAML.stringify(manifest)}${help}`);
  written.push(join(out, 'task.yaml'));
  if (!roles) notes.push('no --roles given: P13 steps fail naming their role until task.yaml declares roles (a commented template is in task.yaml)');

  const check = loadNativeTask(out);
  const checkNotes = (check as { notes?: string[] }).notes ?? [];
  return { ok: check.issues.length === 0, issues: check.issues, notes: [...notes, ...checkNotes], written, task: check.task };
}
