import { modelRunDotenv } from '../../src/tasks/published/compose';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import YAML from 'yaml';
import { validateTaskCommand } from '../../src/cli/tasks-validate';
import { importTaskCommand } from '../../src/cli/tasks-import';
import { loadCompose } from '../../src/sandbox';
import { loadNativeTask } from '../../src/tasks/load-native';
import { loadPublishedTask, parseTestUsers, promptSection, WORKSPACE_VOLUME } from '../../src/tasks/published';
import { importPublishedTask } from '../../src/tasks/import-published';
import { manifestExtras } from '../../src/primitives/auth/task-roles';
import { corpusOpt, publishedTask } from '../helpers/published';
import { planOf } from '../../src/tasks/plan';

const repoRoot = resolve(__dirname, '..', '..', '..');
const AOIWQOIQ = () => publishedTask('task_aoiwqoiq');

function capture(fn: (out: NodeJS.WritableStream) => number): { code: number; text: string } {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const code = fn(out);
  return { code, text };
}

let tmp: string;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sb-published-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

function write(rel: string, text: string): void {
  const f = join(tmp, rel);
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, text);
}

const step = (type: string, inputs: Record<string, unknown>) => ({ type, inputs });
const node = (id: string, prereqs: string[], chain: unknown[], maxScore = 2, method = 'binary') => ({ id, prereqs, primitive_chain: chain, scoring: { category: 'Deployment', subcategory: 'X', method, maxScore } });

/** A small task in the published layout: both DAG files, a stale scoring config, config.py, .env.example only. */
function makePublished(root: string): string {
  const dir = join(tmp, root);
  const t = 'task_demo';
  const put = (rel: string, text: string) => write(join(root, rel), text);
  put(`tasks/${t}/docker/docker-compose.yml`, [
    'name: task-demo',
    'services:',
    '  db:',
    '    image: postgres:16',
    '    environment: {POSTGRES_USER: demo, POSTGRES_PASSWORD: pw, POSTGRES_DB: demo_db}',
    '    ports: ["5499:5432"]',
    '    volumes: ["./init.sql:/docker-entrypoint-initdb.d/init.sql:ro"]',
    '  app:',
    '    image: demo/app:${IMAGE_TAG:-baseline}',
    '    env_file: [.env]',
    '    ports: ["8099:8099"]',
    '    volumes: ["./workspace:/app"]',
    '    working_dir: /app',
    '    depends_on: [db]',
    '',
  ].join('\n'));
  put(`tasks/${t}/docker/.env.example`, 'IMAGE_TAG=model\nPORT=8099\n');
  put(`tasks/${t}/docker/init.sql`, 'CREATE EXTENSION IF NOT EXISTS pg_trgm;\n');
  put(`tasks/${t}/docker/workspace/.keep`, '');
  put(`tasks/${t}/task/task.md`, '# Demo PRD\n');
  put(`tasks/${t}/kb/knowledge_base.json`, '{"clarifications": []}');
  put(`check/${t}/prompt_for_model.md`, '# Header\n\n## Prompt\n\nBuild the demo. The application MUST listen on port `8099`.\n- Admin: username=`p_admin`, email=`a@x.test`, password=`NotThis1`\n\n---\n\n## Tester Workflow\n\nrun things\n');
  const ev = `check/${t}_e/evaluate`;
  put(`${ev}/config.py`, [
    'import os',
    'APP_BASE_URL = "http://localhost:8099"',
    'TEST_USERS = {',
    "    'admin': {'username': os.environ.get('ADMIN_USER', 'demo_admin'), 'email': 'admin@demo.test', 'password': 'Secret1!',},  # the admin",
    "    'user': {'username': 'demo_user', 'password': 'Secret2!', 'active': True},",
    '}',
    'AUTH_HEADER_KEY = "X-Demo-Key"',
    'AUTH_HEADER_USER = "X-Demo-User"',
    '',
  ].join('\n'));
  const nodes = [
    node('HEALTH', [], [step('P04', { path: '/health' }), step('P15', { expected_status: 200 })]),
    node('CREATE', ['HEALTH'], [step('P13', { role: 'admin' }), step('P04', { method: 'POST', path: '/items', body: { name: 'x' } }), step('P15', { acceptable_statuses: [200, 201] })]),
    node('READ', ['CREATE'], [step('P04', { path: '/items/{{id}}' }), step('P07', { assertions: [{ path: '$.owner', expected: '{{admin_username}}' }] })], 3, 'weighted'),
    node('BROKEN_REF', [], [step('P04', { path: '/x/{{never_set}}' })]),
  ];
  put(`${ev}/dag.json`, JSON.stringify({ meta: { task_id: t }, nodes: [...nodes, node('EXTRA', [], [step('P04', { path: '/' })])] }));
  put(`${ev}/dag_smoke.json`, JSON.stringify({ meta: { task_id: t }, nodes }));
  put(`${ev}/scoring_config.json`, JSON.stringify({
    total_maxScore: 99,
    trajectories: {
      happy_path: { node_ids: ['HEALTH', 'CREATE', 'GONE_NODE'], maxScore: 10 },
      rest: { node_ids: 'remaining' },
      coverage_percent: 100.0,
    },
  }).replace(/\n/g, '\r\n'));
  return dir;
}

describe('published layout: task_aoiwqoiq (acceptance 1)', () => {
  test('`tasks validate` reports 186 nodes, 22 llm-judge nodes, total maxScore 571, no unsupported types or keys, no problems', corpusOpt('task_aoiwqoiq'), () => {
    const { code, text } = capture((out) => validateTaskCommand(AOIWQOIQ(), out));
    assert.match(text, /nodes: 186\s+total maxScore: 571\s+llm-judge nodes: 22 /);
    assert.match(text, /unsupported primitive types: none/);
    assert.match(text, /no problems found/);
    assert.match(text, /DAG: dag\.json/);
    assert.equal(code, 0, text);
  });

  test('the loader: prompt section, test users → variables, the compose workspace bind → a named volume', corpusOpt('task_aoiwqoiq'), () => {
    const r = loadPublishedTask(AOIWQOIQ(), { derivedDir: join(tmp, 'derived-aoiwqoiq') });
    assert.deepEqual(r.issues, []);
    const t = r.task!;
    assert.equal(t.dag.nodes.length, 186);
    assert.equal(t.dag.nodes.reduce((a, n) => a + n.scoring.maxScore, 0), 571);
    assert.equal(t.dag.nodes.filter((n) => n.scoring.method === 'llm-judge').length, 22);
    assert.deepEqual(Object.keys(t.unsupported), []);
    assert.equal(planOf(t).defaultParallelism, 1, 'a published task is evaluated one node at a time, in the published order');
    assert.equal(t.environment.appService, 'app');
    assert.equal(t.environment.appPort, 8020);
    assert.equal(t.environment.workspace, '/app');
    assert.deepEqual(t.environment.database, { kind: 'postgres', service: 'db', port: 5432, user: 'appaoiwqoiq', password: 'app123aoiwqoiq', name: 'app_aoiwqoiq' });
    assert.equal(t.variables.admin_username, 'eval_admin');
    assert.equal(t.variables.eval_user_password, 'EvalPass12345!');
    assert.match(t.promptText, /^> \*\*<!-- _BENCH_ANTI_CHEAT_BANNER -->/);
    assert.doesNotMatch(t.promptText, /Tester Workflow/);
    const project = loadCompose(t.environment.composeFile, { processEnv: {} });
    assert.deepEqual(project.services.app.mounts, [{ type: 'volume', source: WORKSPACE_VOLUME, target: '/app', readOnly: false }]);
    assert.ok(WORKSPACE_VOLUME in project.volumes);
    assert.equal(project.services.app.environment.PORT, '8020', 'env_file .env fell back to .env.example');
    assert.ok(r.notes.some((n) => /advanced_workflows\.maxScore is 555; its nodes sum to 553/.test(n)));
    assert.ok(r.notes.some((n) => /^roles: \d+ used/.test(n)));
    assert.equal(r.notes.filter((n) => n.startsWith('unresolvable placeholder')).length, 3, 'scoped_key and target_user_id ×2: genuine gaps of the published DAG');
  });
});

describe('published layout: variants', () => {
  test('dag.json wins (the paper\'s DAG) and is reported; --dag picks the other; config.py users; stale scoring config is metadata', () => {
    const dir = makePublished('pub1');
    const smoke = loadPublishedTask(dir, { dag: 'dag_smoke.json', derivedDir: join(tmp, 'derived1') });
    assert.deepEqual(smoke.issues, []);
    const r = smoke;
    const t = r.task!;
    assert.match(t.dagFile, /dag_smoke\.json$/);
    assert.equal(t.dag.nodes.length, 4);
    const full = loadPublishedTask(dir, { derivedDir: join(tmp, 'derived1') });
    assert.match(full.task!.dagFile, /dag\.json$/);
    assert.equal(full.task!.dag.nodes.length, 5);
    assert.ok(full.notes.some((n) => /^DAG: dag\.json \(also present: dag_smoke\.json/.test(n)));
    assert.equal(t.variables.admin_username, 'demo_admin', 'config.py wins over the prompt; os.environ.get default');
    assert.equal(t.variables.eval_user_password, 'Secret2!');
    assert.equal(r.published!.authHeaders.join(','), 'X-Demo-Key,X-Demo-User');
    assert.equal(t.environment.appPort, 8099);
    assert.equal(t.prdFile && readFileSync(t.prdFile, 'utf8'), '# Demo PRD\n');
    assert.ok(t.knowledgeBaseFile);
    assert.deepEqual(t.dag.trajectories.happy_path.nodeIds, ['HEALTH', 'CREATE']);
    assert.deepEqual(t.dag.trajectories.rest.nodeIds, ['READ', 'BROKEN_REF']);
    assert.ok(r.notes.some((n) => /total_maxScore declares 99; recomputed from the DAG: 9/.test(n)));
    assert.ok(r.notes.some((n) => /happy_path: 1 of 3 node ids are not in/.test(n)));
    assert.ok(r.notes.some((n) => /coverage_percent is not a trajectory/.test(n)));
    // {{id}} after a POST is the published id capture; {{never_set}} is a note, not an error
    const ph = r.notes.filter((n) => n.startsWith('unresolvable placeholder'));
    assert.equal(ph.length, 1);
    assert.match(ph[0], /nodes\[3\]\.primitive_chain\[0\]\.inputs\.path \(node BROKEN_REF\).*\{\{never_set\}\}/);
    const project = loadCompose(t.environment.composeFile, { processEnv: {} });
    assert.equal(project.services.app.mounts[0].type, 'volume');
    assert.equal(project.services.db.mounts[0].type, 'bind');
    assert.equal((project.services.db.mounts[0] as { source: string }).source, join(dir, 'tasks/task_demo/docker/init.sql'));
    assert.equal(project.services.app.image, 'demo/app:model', '.env.example interpolates');
  });

  test('prompt users when there is no config.py; prompt section edges', () => {
    const u = parseTestUsers(null, '- Admin: username=`a1`, email=`a@x`, password=`p1` (admin=true)\n- Regular user: username=`u1`, password=`p2`\n- nothing here');
    assert.deepEqual(u.users, { admin: { username: 'a1', email: 'a@x', password: 'p1' }, regular_user: { username: 'u1', password: 'p2' } });
    assert.equal(promptSection('no sections at all'), 'no sections at all');
    assert.equal(promptSection('## Prompt\r\nonly\r\n'), 'only');
  });

  test('`tasks import` writes a native task that validates; roles from --roles; compat kept', () => {
    const dir = makePublished('pub2');
    const rolesFile = join(tmp, 'roles.yaml');
    writeFileSync(rolesFile, YAML.stringify({ roles: { admin: { username: '{{admin_username}}', password: '{{admin_password}}', login: { path: '/login', body: { user: '{{username}}', pass: '{{password}}' }, token: { from: 'body', path: '$.token' } } } } }));
    const out = join(tmp, 'imported');
    const { code, text } = capture((o) => importTaskCommand(dir, { out, rolesFile }, o));
    assert.equal(code, 0, text);
    const manifest = YAML.parse(readFileSync(join(out, 'task.yaml'), 'utf8'));
    assert.equal(manifest.id, 'demo');
    assert.deepEqual(manifest.compat, { published_id_capture: true, unresolved_placeholders: 'runtime', published_context: true });
    assert.equal(manifest.roles.admin.login.path, '/login');
    assert.equal(manifest.variables.admin_password, 'Secret1!');
    const loaded = loadNativeTask(out);
    assert.deepEqual(loaded.issues, []);
    assert.equal(loaded.task!.dag.nodes.length, 5, 'dag.json, the default DAG');
    assert.ok(((loaded as { notes?: string[] }).notes ?? []).some((n) => /never_set/.test(n)));
    const extras = manifestExtras(loaded.task!);
    assert.deepEqual(Object.keys(extras.roles), ['admin']);
    assert.equal(extras.publishedIdCapture, true);
    const project = loadCompose(join(out, 'environment', 'docker-compose.yml'), { processEnv: {} });
    assert.equal(project.services.app.mounts[0].type, 'volume');
    // .env.example, then the model-run variables the published loader interpolates with
    assert.equal(readFileSync(join(out, 'environment', '.env'), 'utf8'), `IMAGE_TAG=model\nPORT=8099\n${modelRunDotenv()}`);
    assert.match(modelRunDotenv(), /\nIMAGE_TAG="model"\nAPP_CMD="sleep infinity"\n$/);
    assert.equal(readFileSync(join(out, 'prompt.md'), 'utf8').trim(), 'Build the demo. The application MUST listen on port `8099`.\n- Admin: username=`p_admin`, email=`a@x.test`, password=`NotThis1`');
    // a second import into the same folder needs --force
    assert.equal(importPublishedTask(dir, { out }).ok, false);
  });

  test('import without --roles leaves a commented template; a bad roles file is an error with its path', () => {
    const dir = makePublished('pub3');
    const out = join(tmp, 'imported3');
    const r = importPublishedTask(dir, { out });
    assert.equal(r.ok, true, JSON.stringify(r.issues));
    assert.match(readFileSync(join(out, 'task.yaml'), 'utf8'), /^# roles: how the evaluator obtains/m);
    const badRoles = join(tmp, 'bad-roles.yaml');
    writeFileSync(badRoles, 'admin:\n  login: {path: login}\n');
    const r2 = importPublishedTask(dir, { out: join(tmp, 'imported4'), rolesFile: badRoles });
    assert.equal(r2.ok, false);
    assert.equal(r2.issues[0].path, 'roles.admin.login.path');
  });
});
