// `saasbench benchmark pull` end to end, as a CLI process, against a local bare git repository built
// here (two commits: the pull must take the pinned one) and the fake Hugging Face Hub of
// test/fakes/fake-hf.ts on 127.0.0.1. Nothing here talks to GitHub or huggingface.co.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { startFakeHf, type FakeHf } from '../fakes/fake-hf';
import { PULL_LOCK_FILE, publishedProvenance, type PullLock } from '../../src/benchmark/lock-file';
import { validateTaskCommand } from '../../src/cli/tasks-validate';
import { loadAnyTask } from '../../src/tasks/load';
import { taskLock } from '../../src/evaluation/rollout-lock';

const MAIN = resolve(__dirname, '..', '..', 'src', 'cli', 'main.js');
const TOKEN = 'hf_fakeTokenThatMustNeverBePrinted_93a1';
const DATASET = 'SaaSBench/SaaSBench';
const OLD_REV = '1111111111111111111111111111111111111111';
const MAIN_REV = '2222222222222222222222222222222222222222';
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

let tmp: string;
let bare: string;
let c1: string;
let c2: string;
let hf: FakeHf;

function git(args: string[], cwd: string): string {
  return execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.test', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function put(root: string, rel: string, text: string): void {
  const f = join(root, rel);
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, text);
}

const dag = (desc: string) =>
  JSON.stringify({
    nodes: [
      { id: 'DEPLOY_HEALTH', prereqs: [], description: desc, primitive_chain: [{ type: 'P04', inputs: { method: 'GET', path: '/health' } }, { type: 'P15', inputs: { expected_status: 200 } }], scoring: { category: 'Deployment', subcategory: 'Health', method: 'binary', maxScore: 2 } },
    ],
  });

/** A task folder of our own in the published layout, with files the pull must leave behind. */
function fakeTask(work: string, id: string, port: number): void {
  const t = `eval/task_${id}`;
  put(work, `${t}/tasks/task_${id}/docker/docker-compose.yml`, ['services:', '  db:', '    image: postgres:16', '    environment: {POSTGRES_USER: u, POSTGRES_PASSWORD: pw, POSTGRES_DB: d}', '  app:', `    image: fake/${id}:\${IMAGE_TAG:-model}`, '    env_file: [.env]', `    ports: ["${port}:${port}"]`, '    volumes: ["./workspace:/app"]', '    working_dir: /app', '    depends_on: [db]', ''].join('\n'));
  put(work, `${t}/tasks/task_${id}/docker/Dockerfile.model`, 'FROM debian:bookworm-slim\n');
  put(work, `${t}/tasks/task_${id}/docker/.env.example`, `PORT=${port}\n`);
  put(work, `${t}/tasks/task_${id}/docker/bin/entry.sh`, '#!/bin/sh\nexec "$@"\n');
  chmodSync(join(work, `${t}/tasks/task_${id}/docker/bin/entry.sh`), 0o755);
  put(work, `${t}/tasks/task_${id}/docker/workspace/.gitkeep`, '');
  put(work, `${t}/check/task_${id}/prompt_for_model.md`, `# task ${id}\n\n## Prompt\n\nBuild it on port \`${port}\`.\n\n## Tester Workflow\n\nnothing\n`);
  put(work, `${t}/check/task_${id}/prepare_workspace.sh`, 'echo not pulled\n');
  put(work, `${t}/check/task_${id}_e/evaluate/dag.json`, dag('health (first commit)'));
  put(work, `${t}/check/task_${id}_e/evaluate/scoring_config.json`, '{"trajectories": {}}');
  put(work, `${t}/check/task_${id}_e/evaluate/config.py`, 'APP_BASE_URL = "http://localhost"\n');
  put(work, `${t}/check/task_${id}_e/evaluate/primitives.py`, '# evaluator code: not pulled\n');
  put(work, `${t}/check/task_${id}_e/evaluate/fixtures/extra.json`, '{}');
}

function kb(id: string): string {
  return JSON.stringify({ clarifications: [{ id: `${id}-1`, question: 'Which port?', answer: 'The one in the prompt.' }] });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const base = { ...process.env };
  delete base.HF_TOKEN;
  delete base.HF_ENDPOINT;
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [MAIN, 'benchmark', 'pull', ...args], { env: { ...base, HF_ENDPOINT: hf.url, ...env } as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

const pull = (dir: string, extra: string[] = [], env: Record<string, string | undefined> = { HF_TOKEN: TOKEN }) => cli(['--dir', dir, '--repo', `file://${bare}`, '--commit', c1, ...extra], env);

function walk(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(root, e.name)) : [join(root, e.name)]));
}

/** path → mode, mtime and content hash of everything under `root` */
function snapshot(root: string): Record<string, string> {
  return Object.fromEntries(walk(root).map((f) => [relative(root, f), `${statSync(f).mode} ${statSync(f).mtimeMs} ${sha256(readFileSync(f))}`]));
}

const errorLines = (r: Run) => r.stderr.split('\n').filter((l) => l.startsWith('saasbench:'));
const newDir = (name: string) => join(mkdtempSync(join(tmp, 'd-')), name);
/** the folder the pull writes into holds nothing but what it named (no scratch folder left beside it) */
const leftovers = (dir: string) => readdirSync(dirname(dir)).filter((n) => n !== 'saasbench');

const bigPrd = `# PRD of aaa\n\n${'The system SHALL keep every ticket.\n'.repeat(6000)}`;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sb-pull-'));
  bare = join(tmp, 'published.git');
  git(['init', '-q', '--bare', bare], tmp);
  git(['config', 'uploadpack.allowFilter', 'true'], bare);
  git(['config', 'uploadpack.allowAnySHA1InWant', 'true'], bare);
  const work = join(tmp, 'work');
  git(['init', '-q', work], tmp);
  fakeTask(work, 'aaa', 8101);
  fakeTask(work, 'bbb', 8102);
  symlinkSync('../../../../README.md', join(work, 'eval/task_aaa/tasks/task_aaa/docker/link-out'));
  put(work, 'eval/README.md', 'harness readme\n');
  put(work, 'eval/_harness/run.sh', 'echo driver\n');
  git(['add', '-A'], work);
  git(['commit', '-qm', 'first'], work);
  c1 = git(['rev-parse', 'HEAD'], work);
  put(work, 'eval/task_aaa/check/task_aaa_e/evaluate/dag.json', dag('health (second commit)'));
  fakeTask(work, 'ccc', 8103);
  git(['add', '-A'], work);
  git(['commit', '-qm', 'second'], work);
  c2 = git(['rev-parse', 'HEAD'], work);
  git(['push', '-q', bare, 'HEAD:refs/heads/main'], work);

  const files = (tag: string) => ({
    'README.md': `dataset card ${tag}\n`,
    'tasks/task_aaa/task.md': bigPrd,
    'tasks/task_aaa/knowledge_base.json': kb(`aaa${tag}`),
    'tasks/task_bbb/task.md': `# PRD of bbb ${tag}\n`,
    'tasks/task_bbb/knowledge_base.json': kb(`bbb${tag}`),
    'tasks/task_zzz/task.md': '# a task the git commit does not have\n',
  });
  hf = await startFakeHf({
    repo: DATASET,
    commits: { [OLD_REV]: files('old'), [MAIN_REV]: files('') },
    refs: { main: MAIN_REV },
    lfs: ['tasks/task_aaa/knowledge_base.json'],
    requireToken: TOKEN,
    pageSize: 3,
  });
});

after(async () => {
  await hf?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('benchmark pull', () => {
  let dir: string;
  let first: Run;
  let requestsOfFirst: typeof hf.requests;

  before(async () => {
    dir = newDir('saasbench');
    hf.requests.length = 0;
    hf.options.dropAfter = { 'tasks/task_aaa/task.md': { bytes: 50_000, times: 1 }, 'tasks/task_aaa/knowledge_base.json': { bytes: 20, times: 1 } };
    first = await pull(dir);
    requestsOfFirst = [...hf.requests];
  });

  test('lays out the pinned commit and the dataset inputs where the harness reads them', () => {
    assert.equal(first.code, 0, first.stderr);
    const t = join(dir, 'task_aaa');
    const got = walk(t).map((f) => relative(t, f)).sort();
    assert.deepEqual(got, [
      'check/task_aaa/prompt_for_model.md',
      'check/task_aaa_e/evaluate/config.py',
      'check/task_aaa_e/evaluate/dag.json',
      'check/task_aaa_e/evaluate/scoring_config.json',
      'tasks/task_aaa/docker/.env.example',
      'tasks/task_aaa/docker/Dockerfile.model',
      'tasks/task_aaa/docker/bin/entry.sh',
      'tasks/task_aaa/docker/docker-compose.yml',
      'tasks/task_aaa/kb/knowledge_base.json',
      'tasks/task_aaa/task/task.md',
    ]);
    assert.match(readFileSync(join(t, 'check/task_aaa_e/evaluate/dag.json'), 'utf8'), /first commit/, 'the pinned commit, not the branch tip');
    assert.ok(!existsSync(join(dir, 'task_ccc')), 'task_ccc exists only in the later commit');
    assert.equal(readFileSync(join(t, 'tasks/task_aaa/task/task.md'), 'utf8'), bigPrd);
    assert.equal(readFileSync(join(t, 'tasks/task_aaa/kb/knowledge_base.json'), 'utf8'), kb('aaa'));
    assert.equal(statSync(join(t, 'tasks/task_aaa/docker/bin/entry.sh')).mode & 0o111, 0o111, 'the executable bit is kept');
    assert.match(first.stderr, /task_aaa: eval\/task_aaa\/tasks\/task_aaa\/docker\/link-out: not a regular file/);
    assert.deepEqual(readdirSync(dir).sort(), [PULL_LOCK_FILE, 'task_aaa', 'task_bbb']);
    assert.deepEqual(leftovers(dir), []);
  });

  test('resumes a dropped download with a Range request, and keeps the token away from the CDN', () => {
    const prd = requestsOfFirst.filter((r) => r.path.endsWith('/resolve/' + MAIN_REV + '/tasks/task_aaa/task.md'));
    assert.equal(prd.length, 2, JSON.stringify(prd));
    assert.ok(prd[0].dropped && !prd[0].range);
    assert.equal(prd[1].range, 'bytes=50000-');
    assert.equal(prd[1].status, 206);
    const cdn = requestsOfFirst.filter((r) => r.server === 'cdn');
    assert.equal(cdn.length, 2, 'the LFS file came through the redirect, twice (dropped once)');
    assert.equal(cdn[1].range, 'bytes=20-');
    assert.ok(cdn.every((r) => r.auth === 'none'), 'no Authorization header to another origin');
    assert.ok(requestsOfFirst.filter((r) => r.server === 'hub').every((r) => r.auth === 'ok'));
    assert.ok(requestsOfFirst.filter((r) => r.path.includes('/tree/')).length >= 2, 'the tree listing was paginated');
    assert.match(first.stderr, /^task_aaa: tasks\/task_aaa\/task\.md: connection (lost|closed early) at 48.8 KB of .*; resuming$/m);
  });

  test('the lock records commit, resolved revision and the sha256 of every file written', () => {
    const lock = JSON.parse(readFileSync(join(dir, PULL_LOCK_FILE), 'utf8')) as PullLock;
    assert.equal(lock.commit, c1);
    assert.equal(lock.repo, `file://${bare}`);
    assert.equal(lock.dataset, DATASET);
    assert.equal(lock.datasetRef, 'main');
    assert.equal(lock.datasetRevision, MAIN_REV);
    assert.deepEqual(lock.availableTasks, ['task_aaa', 'task_bbb']);
    for (const name of ['task_aaa', 'task_bbb']) {
      const t = join(dir, name);
      const onDisk = Object.fromEntries(walk(t).map((f) => [relative(t, f), sha256(readFileSync(f))]));
      assert.deepEqual(lock.tasks[name].files, onDisk);
      assert.equal(lock.tasks[name].commit, c1);
      assert.equal(lock.tasks[name].datasetRevision, MAIN_REV);
      assert.equal(lock.tasks[name].datasetInputs, true);
    }
    const prov = publishedProvenance(join(dir, 'task_bbb'));
    assert.equal(prov?.commit, c1);
    assert.equal(prov?.datasetRevision, MAIN_REV);
    assert.deepEqual(prov?.files, lock.tasks.task_bbb.files);
    assert.equal(publishedProvenance(join(tmp, 'work', 'eval', 'task_aaa')), null);
  });

  test('the pulled folder validates, and a rollout lock carries its provenance', () => {
    const out: string[] = [];
    const code = validateTaskCommand(join(dir, 'task_aaa'), { write: (s: string) => out.push(s) } as unknown as NodeJS.WritableStream);
    assert.equal(code, 0, out.join(''));
    assert.doesNotMatch(out.join(''), /task\.md \(the PRD\) is not in this folder/);
    const loaded = loadAnyTask(join(dir, 'task_aaa'));
    assert.ok(loaded.task);
    const lock = taskLock(loaded.task);
    assert.equal(lock.published?.commit, c1);
    assert.equal(lock.published?.datasetRevision, MAIN_REV);
    assert.equal(lock.published?.files['tasks/task_aaa/task/task.md'], sha256(bigPrd));
  });

  test('a second run changes nothing and says so per task', async () => {
    const before = snapshot(dir);
    hf.requests.length = 0;
    const again = await pull(dir);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(snapshot(dir), before);
    assert.match(again.stderr, /^task_aaa: up to date .*skipped$/m);
    assert.match(again.stderr, /^task_bbb: up to date .*skipped$/m);
    assert.deepEqual(hf.requests.map((r) => r.path), [`/api/datasets/${DATASET}/revision/main`], 'only the revision is asked');
    assert.deepEqual(leftovers(dir), []);
  });

  test('a changed file is noticed: that task is pulled again, the other is skipped', async () => {
    const f = join(dir, 'task_bbb', 'check/task_bbb_e/evaluate/dag.json');
    writeFileSync(f, '{"edited": true}');
    const again = await pull(dir);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /^task_bbb: installed/m);
    assert.match(again.stderr, /^task_aaa: up to date/m);
    assert.match(readFileSync(f, 'utf8'), /first commit/);
  });

  test('the token appears in no output and no file', () => {
    assert.ok(!first.stderr.includes(TOKEN) && !first.stdout.includes(TOKEN));
    for (const f of walk(dirname(dir))) assert.ok(!readFileSync(f, 'utf8').includes(TOKEN), f);
  });
});

describe('benchmark pull: selection and failures', () => {
  test('--tasks filters; an unknown id is one line and writes nothing', async () => {
    const dir = newDir('saasbench');
    const r = await pull(dir, ['--tasks', 'bbb', '--revision', OLD_REV]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(dir).sort(), [PULL_LOCK_FILE, 'task_bbb']);
    const lock = JSON.parse(readFileSync(join(dir, PULL_LOCK_FILE), 'utf8')) as PullLock;
    assert.deepEqual(Object.keys(lock.tasks), ['task_bbb']);
    assert.equal(lock.datasetRevision, OLD_REV);
    assert.equal(readFileSync(join(dir, 'task_bbb/tasks/task_bbb/task/task.md'), 'utf8'), '# PRD of bbb old\n');

    const fresh = newDir('saasbench');
    const bad = await pull(fresh, ['--tasks', 'aaa,ccc']);
    assert.equal(bad.code, 1);
    assert.deepEqual(errorLines(bad), ['saasbench: --tasks: unknown task id ccc (the commit has: aaa, bbb)']);
    assert.ok(bad.stderr.trim().endsWith(errorLines(bad)[0]));
    assert.ok(!existsSync(fresh));
    assert.deepEqual(leftovers(fresh), []);
  });

  test('a corrupt download fails with one line and leaves no partial task folder', async () => {
    const dir = newDir('saasbench');
    hf.options.corrupt = ['tasks/task_bbb/knowledge_base.json'];
    try {
      const r = await pull(dir);
      assert.equal(r.code, 1);
      assert.deepEqual(errorLines(r).length, 1, r.stderr);
      assert.match(errorLines(r)[0], /^saasbench: SaaSBench\/SaaSBench tasks\/task_bbb\/knowledge_base\.json: git blob sha1 mismatch: expected [0-9a-f]{40}, got [0-9a-f]{40}$/);
      assert.ok(r.stderr.trim().endsWith(errorLines(r)[0]), 'the error is the last line');
      assert.ok(!existsSync(join(dir, 'task_bbb')));
      const lock = JSON.parse(readFileSync(join(dir, PULL_LOCK_FILE), 'utf8')) as PullLock;
      assert.deepEqual(Object.keys(lock.tasks), ['task_aaa'], 'the task completed before the failure stays, recorded');
      assert.deepEqual(leftovers(dir), []);
      assert.ok(!walk(dirname(dir)).some((f) => f.endsWith('.incomplete')));

      hf.options.corrupt = ['tasks/task_aaa/knowledge_base.json'];
      const lfsDir = newDir('saasbench');
      const r2 = await pull(lfsDir, ['--tasks', 'aaa']);
      assert.equal(r2.code, 1);
      assert.match(errorLines(r2)[0], /knowledge_base\.json: sha256 mismatch: expected [0-9a-f]{64}, got [0-9a-f]{64}$/);
      assert.ok(!existsSync(lfsDir), 'nothing was written');
      assert.deepEqual(leftovers(lfsDir), []);
    } finally {
      hf.options.corrupt = [];
    }
  });

  test('offline: connection refused, for the dataset and for git, is one line', async () => {
    const dead = await startFakeHf({ repo: DATASET, commits: {}, refs: {} });
    const deadUrl = dead.url;
    await dead.close();
    const dir = newDir('saasbench');
    const r = await pull(dir, [], { HF_TOKEN: TOKEN, HF_ENDPOINT: deadUrl });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `saasbench: ${deadUrl}/datasets/${DATASET} @ main: connection refused (offline, or nothing listens there)\n`);
    assert.ok(!existsSync(dir));

    const g = await cli(['--dir', dir, '--repo', `${deadUrl}/published.git`, '--commit', c1], { HF_TOKEN: TOKEN });
    assert.equal(g.code, 1);
    assert.equal(errorLines(g).length, 1, g.stderr);
    assert.match(errorLines(g)[0], new RegExp(`^saasbench: git fetch ${deadUrl}/published.git ${c1.slice(0, 12)}: .*(connect|refused)`, 'i'));
    assert.ok(!existsSync(dir));
    assert.deepEqual(leftovers(dir), []);
  });

  test('401 without a token or with a wrong one: one line that never shows the token', async () => {
    const dir = newDir('saasbench');
    const none = await pull(dir, [], {});
    assert.equal(none.code, 1);
    assert.equal(none.stderr, `saasbench: ${hf.url}/datasets/${DATASET} @ main: 401 Unauthorized: the dataset is private, gated or absent; set HF_TOKEN to a token that can read it\n`);
    const wrong = await pull(dir, [], { HF_TOKEN: 'hf_wrong_secret_value' });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^saasbench: .* 401 Unauthorized: HF_TOKEN was refused\n$/);
    assert.ok(!wrong.stderr.includes('hf_wrong_secret_value'));
    const missing = await cli(['--dir', dir, '--repo', `file://${bare}`, '--commit', c1, '--dataset', 'SaaSBench/Other'], { HF_TOKEN: TOKEN });
    assert.match(missing.stderr, /^saasbench: .*SaaSBench\/Other @ main: 404 Not Found \(RepoNotFound\)/);
    assert.ok(!existsSync(dir));
  });

  test('a missing git binary, a commit that is not there, a short sha: one line each', async () => {
    const dir = newDir('saasbench');
    const noGit = await pull(dir, [], { HF_TOKEN: TOKEN, PATH: join(tmp, 'no-such-bin') });
    assert.equal(noGit.code, 1);
    assert.equal(noGit.stderr, 'saasbench: git: not found on PATH (install git, e.g. apt-get install git)\n');
    const absent = await cli(['--dir', dir, '--repo', `file://${bare}`, '--commit', 'f'.repeat(40)], { HF_TOKEN: TOKEN });
    assert.equal(absent.code, 1);
    assert.equal(errorLines(absent).length, 1, absent.stderr);
    assert.match(errorLines(absent)[0], /^saasbench: git fetch file:\/\/.* ffffffffffff: /);
    const short = await cli(['--dir', dir, '--commit', c2.slice(0, 7)], { HF_TOKEN: TOKEN });
    assert.equal(short.stderr, `saasbench: --commit: "${c2.slice(0, 7)}" is not a full 40-character commit sha (the pull is pinned)\n`);
    assert.ok(!existsSync(dir));
    assert.deepEqual(leftovers(dir), []);
  });
});
