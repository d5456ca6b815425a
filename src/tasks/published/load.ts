import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { InputIssue } from '../../errors';
import type { Json } from '../../model/json';
import { repoRoot } from '../../paths';
import { hashTree } from '../hash';
import { knowledgeBaseIssues } from '../knowledge-base';
import { readJson, type LoadResult } from '../load-native';
import { checkPlaceholders } from '../placeholders';
import type { Task } from '../../model/task';
import { checkDag } from '../validate-dag';
import { PUBLISHED_COMPOSE_ENV, derivePublishedCompose } from './compose';
import { databaseNameIssues, publishedDatabases } from './databases';
import { normalizePublishedDag } from './dialect';
import type { SpellingUse } from './dialect/types';
import { publishedPaths, promptSection, type PublishedPaths } from './layout';
import { loadPackEntry, type PackEntry } from './pack';
import { rolesUsed } from './roles-used';
import { addPublishedContextEdges } from './context-edges';
import { applyPackCaptures, applyPackLiterals, checkPackSetup } from './pack-apply';
import { clockNames } from '../../primitives/run-clock';
import { declaredTotalNotes, declaredTotals, readScoringConfig, trajectoriesOf } from './scoring-config';
import { parseAuthHeaders, parseTestUsers, userVariables } from './settings';

export interface PublishedLoadResult extends LoadResult {
  /** things worth knowing that are not errors: which DAG, stale config totals, placeholders that cannot resolve, … */
  notes: string[];
  /** the published files found, for `tasks import` */
  published?: PublishedFiles;
}

export interface PublishedFiles extends PublishedPaths {
  dagVariant: string;
  users: Record<string, Record<string, string>>;
  authHeaders: string[];
  appPort: number;
  appService: string;
  workspace: string;
  /** the DAG in the canonical shape (what `tasks import` writes) */
  canonicalDag: { nodes: unknown[]; trajectories?: unknown };
  spellings: SpellingUse[];
  pack: PackEntry | null;
  packFile: string;
  /** roles the DAG uses that neither the pack nor anonymous covers */
  rolesMissing: string[];
  rolesUsed: string[];
  /** the totals the task declares about itself (scoring config, DAG meta), for `benchmark stats` */
  declared: { nodes?: number; maxScore?: number };
}

export { isPublishedLayout, promptSection } from './layout';

/**
 * Read a task in the published SaaSBench layout (`tasks/task_<id>/docker`, `check/task_<id>`,
 * `check/task_<id>_e/evaluate`) into the same model as a native task. The DAG is read in any of
 * the published dialects (dialect/) and checked with the canonical schemas; the task's entry in
 * the benchmark pack (benchmarks/saasbench/tasks/<id>.yaml) adds roles, users and constants. The
 * compose file the task runs with is a derived copy (compose.ts) under .saasbench/published/.
 */
export function loadPublishedTask(dirArg: string, opts: { dag?: string; derivedDir?: string; packDir?: string } = {}): PublishedLoadResult {
  const p = publishedPaths(dirArg, opts.dag);
  const issues: InputIssue[] = [];
  const notes: string[] = [];
  // without the DAG there is nothing to read; without the prompt or compose file the DAG is still
  // counted (benchmark stats) and every missing file is a problem
  for (const f of [p.dagFile, p.composeFile, p.promptFile]) if (!existsSync(f)) issues.push({ file: f, path: '', message: 'file not found' });
  if (!existsSync(p.dagFile)) return { task: null, issues, notes };
  const id = p.publishedId.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const dagVariant = basename(p.dagFile);
  const others = p.dagFiles.filter((f) => f !== p.dagFile).map((f) => basename(f));
  notes.push(`DAG: ${dagVariant}${others.length ? ` (also present: ${others.join(', ')}; --dag selects another)` : ''}`);

  // the pack entry: roles, users, constants (absent → the task still loads, saying what is undeclared)
  const { entry: pack, file: packFile } = loadPackEntry(p.publishedId, issues, opts.packDir);
  notes.push(pack ? `benchmark pack: ${packFile}` : `benchmark pack: no entry for ${p.publishedId} (${packFile})`);

  // prompt, PRD, knowledge base, evaluator settings
  const promptText = existsSync(p.promptFile) ? promptSection(readFileSync(p.promptFile, 'utf8')) : '';
  if (!p.prdFile) notes.push('task.md (the PRD) is not in this folder: the published benchmark distributes it separately (Hugging Face SaaSBench/SaaSBench; `saasbench benchmark pull` fetches it)');
  if (p.kbFile) {
    const kb = readJson(p.kbFile, issues);
    if (kb !== undefined) issues.push(...knowledgeBaseIssues(kb, p.kbFile));
  }
  const configPy = p.configPy ? readFileSync(p.configPy, 'utf8') : null;
  const parsedUsers = parseTestUsers(configPy, promptText);
  const users = pack?.users ?? parsedUsers.users;
  const usersFrom = pack?.users ? 'the benchmark pack' : parsedUsers.source;
  const variables: Record<string, Json> = { ...userVariables(users), ...(pack?.variables ?? {}) };
  notes.push(Object.keys(users).length ? `test users from ${usersFrom}: ${Object.entries(users).map(([r, f]) => `${r}=${f.username ?? f.email ?? '?'}`).join(', ')}` : 'no test users found (pack, config.py TEST_USERS or the prompt)');
  const authHeaders = parseAuthHeaders(configPy, promptText);

  // the DAG: published dialects → canonical → the same checks as a native DAG
  const rawDag = readJson(p.dagFile, issues) as Record<string, unknown> | undefined;
  if (rawDag === undefined) return { task: null, issues, notes };
  const norm = normalizePublishedDag(rawDag, { task: p.publishedId, file: p.dagFile });
  issues.push(...norm.issues);
  // the pack's rules for the published evaluator's implicit captures, on the canonical nodes
  if (pack?.captures?.length) {
    const applied = applyPackCaptures(norm.dag.nodes, pack.captures, packFile);
    issues.push(...applied.issues);
    notes.push(`benchmark pack: ${pack.captures.length} capture rule(s) on ${applied.nodes} node(s) (the published evaluator's implicit captures; docs/compatibility.md#chain-context)`);
  }
  if (pack?.setup?.length) issues.push(...checkPackSetup(pack.setup, packFile));
  if (pack && Object.keys(pack.literal).length) issues.push(...applyPackLiterals(norm.dag.nodes, pack.literal, packFile));
  const known = [...Object.keys(variables), ...clockNames(pack?.clock), ...(pack?.setup ?? []).flatMap((s) => s.exports)];
  if (pack?.clock) notes.push(`run clock: ${pack.clock} (${clockNames(pack.clock).join(', ')}), computed once per evaluation`);
  const config = readScoringConfig(p.scoringFile, rawDag, notes);
  const allIds = new Set(norm.dag.nodes.map((n) => (n as { id?: unknown })?.id).filter((x): x is string => typeof x === 'string'));
  const trajectories = trajectoriesOf(config, allIds, dagVariant, notes);
  const check = checkDag(norm.dag, p.dagFile, trajectories, { allowZeroMaxScore: true, allowUnknownPrereqs: true });
  const nodeIds = new Set(check.dag.nodes.map((n) => n.id));
  for (const n of check.dag.nodes) for (const pr of n.prereqs) if (!nodeIds.has(pr)) notes.push(`node ${n.id}: prereq "${pr}" is not a node of ${dagVariant}; it never passes, so ${n.id} is always SKIPPED_DEPENDENCY (as the paper counts an unmet prerequisite)`);
  issues.push(...check.issues);
  notes.push(...declaredTotalNotes(config, rawDag, check.dag.nodes, trajectories));
  const zero = check.dag.nodes.filter((n) => n.scoring.maxScore === 0).map((n) => n.id);
  if (zero.length) notes.push(`${zero.length} node(s) with maxScore 0 (worth nothing either way): ${zero.join(', ')}`);

  // compose: the app service, its port, the database; a derived file without the workspace bind
  const derivedDir = opts.derivedDir ?? join(repoRoot(), '.saasbench', 'published', `${p.taskName}-${hashTree(p.dockerDir).slice(0, 12)}`);
  const compose = existsSync(p.composeFile)
    ? derivePublishedCompose(p.composeFile, p.dockerDir, derivedDir, pack?.app?.service)
    : { raw: {}, composeFile: p.composeFile, project: undefined, appService: pack?.app?.service ?? 'app', workspace: '/app', notes: [], issues: [] };
  notes.push(...compose.notes);
  issues.push(...compose.issues);
  const appService = compose.appService;
  const workspace = pack?.app?.workspace ?? compose.workspace;
  const app = compose.project?.services[appService];
  const appPort = pack?.app?.port ?? app?.ports[0]?.target ?? 8080;
  const promptPort = /listen on port\s*`?(\d{2,5})`?/i.exec(promptText)?.[1];
  if (promptPort && Number(promptPort) !== appPort) notes.push(`the prompt says port ${promptPort} but the app port is ${appPort} (${appService})`);
  const found = publishedDatabases(compose.raw, compose.project, p.dockerDir);
  const database = pack?.database ?? found.database;
  const databases = found.databases;
  issues.push(...databaseNameIssues(check.dag, databases, p.dagFile));

  // roles: the DAG's roles against the pack's declarations
  const used = rolesUsed(check.dag);
  const declared = Object.keys(pack?.roles ?? {});
  const rolesMissing = used.filter((r) => r !== 'anonymous' && !declared.includes(r));
  notes.push(`roles: ${used.length} used (${used.join(', ') || 'none'}), ${declared.length} declared, ${rolesMissing.length} missing${rolesMissing.length ? ` (${rolesMissing.join(', ')}): P13 fails naming the role until benchmarks/saasbench/tasks/${p.publishedId}.yaml declares it` : ''}`);

  // the published run-wide context: readers run after the earlier nodes that capture what they read
  const ctxEdges = addPublishedContextEdges(check.dag, norm.dag.nodes, known);
  if (ctxEdges.edges) notes.push(`published context: ${ctxEdges.nodes} node(s) read variables captured by earlier nodes that are not their prereqs; they run after those ${ctxEdges.edges} producer edge(s) (docs/compatibility.md#chain-context)`);

  // placeholders: published DAGs are data we do not control, so unresolvable ones are notes here
  // (the node fails at run time naming the variable); for native tasks they are errors.
  for (const i of checkPlaceholders(check.dag, norm.dag.nodes, { file: p.dagFile, variables: known, publishedIdCapture: true })) {
    notes.push(`unresolvable placeholder at ${i.path} (node ${i.nodeId}): ${i.message}`);
  }

  const forbidden = pack?.forbidden;
  const task: Task = {
    id,
    title: pack ? `${pack.product} (published SaaSBench task ${p.taskName}, ${dagVariant})` : `published SaaSBench task ${p.taskName} (${dagVariant})`,
    dir: p.dir,
    layout: 'published',
    manifestFile: p.dagFile,
    prdFile: p.prdFile,
    knowledgeBaseFile: p.kbFile,
    promptText,
    environment: { composeFile: compose.composeFile, appService, workspace, appPort, envFileFallbacks: ['.env.example'], composeEnv: { ...PUBLISHED_COMPOSE_ENV }, database, ...(databases ? { databases } : {}) },
    dagFile: p.dagFile,
    dag: check.dag,
    variables,
    hash: hashTree(p.dir),
    unsupported: check.unsupported,
    roles: pack?.roles ?? {},
    publishedIdCapture: true,
    ...(pack?.clock ? { clock: pack.clock } : {}),
    ...(pack?.setup?.length ? { setup: pack.setup } : {}),
    ...(forbidden?.sources.length ? { forbiddenSources: forbidden.sources } : {}),
    ...(forbidden?.libraries.length ? { forbiddenLibraries: forbidden.libraries } : {}),
    ...(forbidden?.images.length ? { forbiddenImages: forbidden.images } : {}),
  };
  return {
    task,
    issues,
    notes,
    published: { ...p, dagVariant, users, authHeaders, appPort, appService, workspace, canonicalDag: norm.dag, spellings: norm.spellings, pack, packFile, rolesMissing, rolesUsed: used, declared: declaredTotals(config, rawDag) },
  };
}
