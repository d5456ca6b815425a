// Pure parts of `benchmark pull`: which published files are taken, hashes, redaction, the lock's
// text and its reader. The end-to-end behaviour is in test/integration/benchmark-pull.test.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type http from 'node:http';
import { harnessReads } from '../../src/benchmark/pull-git';
import { gitBlobSha1 } from '../../src/benchmark/pull-hf';
import { nextLink } from '../../src/benchmark/hf-http';
import { humanSize, redactUrl } from '../../src/benchmark/pull-error';
import { PULL_LOCK_FILE, publishedProvenance, readPullLock, serializePullLock, type PullLock } from '../../src/benchmark/lock-file';

const tmp = mkdtempSync(join(tmpdir(), 'sb-pull-parts-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('only the files the harness reads are taken from a published task', () => {
  const n = 'task_abc';
  const yes = [
    `eval/${n}/tasks/${n}/docker/docker-compose.yml`,
    `eval/${n}/tasks/${n}/docker/sql/init.sql`,
    `eval/${n}/tasks/${n}/docker/.env`,
    `eval/${n}/check/${n}/prompt_for_model.md`,
    `eval/${n}/check/${n}_e/evaluate/dag.json`,
    `eval/${n}/check/${n}_e/evaluate/dag_smoke.json`,
    `eval/${n}/check/${n}_e/evaluate/config.py`,
  ];
  const no = [
    `eval/${n}/tasks/${n}/docker/workspace/app.py`,
    `eval/${n}/tasks/${n}/docker/workspace/.gitkeep`,
    `eval/${n}/check/${n}/prepare_workspace.sh`,
    `eval/${n}/check/${n}_e/evaluate/primitives.py`,
    `eval/${n}/check/${n}_e/evaluate/fixtures/seed.json`,
    `eval/${n}/check/${n}_e/README.md`,
    `eval/task_abcd/tasks/task_abcd/docker/Dockerfile`,
    `eval/_harness/run_task.sh`,
  ];
  for (const p of yes) assert.equal(harnessReads(n, p), true, p);
  for (const p of no) assert.equal(harnessReads(n, p), false, p);
});

test('git blob ids match git hash-object', () => {
  for (const text of ['', 'hello\n', 'x'.repeat(70_000)]) {
    const f = join(tmp, 'blob');
    writeFileSync(f, text);
    assert.equal(gitBlobSha1(Buffer.from(text)), execFileSync('git', ['hash-object', f], { encoding: 'utf8' }).trim());
  }
});

test('credentials in a repository URL are redacted; sizes read well', () => {
  assert.equal(redactUrl('https://user:s3cret@github.com/o/r.git'), 'https://***@github.com/o/r.git');
  assert.equal(redactUrl('https://ghp_tok@github.com/o/r.git'), 'https://***@github.com/o/r.git');
  assert.equal(redactUrl('https://github.com/o/r.git'), 'https://github.com/o/r.git');
  assert.equal(redactUrl('/srv/git/r.git'), '/srv/git/r.git');
  assert.equal(humanSize(512), '512 B');
  assert.equal(humanSize(1536), '1.5 KB');
  assert.equal(humanSize(5 * 1024 * 1024), '5.0 MB');
});

test('the Link header of a tree page gives the next page', () => {
  const res = (link?: string) => ({ headers: link ? { link } : {} }) as unknown as http.IncomingMessage;
  const base = new URL('https://hub.test/api/datasets/o/r/tree/abc/tasks?recursive=true');
  assert.equal(nextLink(res('<https://hub.test/api/datasets/o/r/tree/abc/tasks?recursive=true&cursor=xyz>; rel="next"'), base), 'https://hub.test/api/datasets/o/r/tree/abc/tasks?recursive=true&cursor=xyz');
  assert.equal(nextLink(res('</api/x?cursor=2>; rel="next", </api/x?cursor=0>; rel="prev"'), base), 'https://hub.test/api/x?cursor=2');
  assert.equal(nextLink(res('</api/x?cursor=0>; rel="prev"'), base), null);
  assert.equal(nextLink(res(), base), null);
});

const sha = (c: string) => c.repeat(40);
const entry = (files: Record<string, string>) => ({ repo: 'https://example.test/r.git', commit: sha('a'), dataset: 'o/d', datasetRevision: sha('b'), datasetInputs: true, files });
const lock = (tasks: PullLock['tasks']): PullLock => ({ version: 1, repo: 'https://example.test/r.git', commit: sha('a'), dataset: 'o/d', datasetRef: 'main', datasetRevision: sha('b'), availableTasks: ['task_b', 'task_a'], tasks });

test('the lock text does not depend on insertion or key order', () => {
  const h = (c: string) => c.repeat(64);
  const one = serializePullLock(lock({ task_b: entry({ 'z.json': h('1'), 'a.md': h('2') }), task_a: entry({}) }));
  const e = entry({ 'a.md': h('2'), 'z.json': h('1') });
  const reordered = { files: e.files, datasetInputs: e.datasetInputs, datasetRevision: e.datasetRevision, dataset: e.dataset, commit: e.commit, repo: e.repo };
  const two = serializePullLock({ ...lock({ task_a: entry({}), task_b: reordered }), availableTasks: ['task_a', 'task_b'] });
  assert.equal(one, two);
  assert.ok(one.indexOf('"task_a"', one.indexOf('"tasks"')) < one.indexOf('"task_b"', one.indexOf('"tasks"')));
});

test('publishedProvenance reads the lock above a task folder, and only that', () => {
  const d = join(tmp, 'bench');
  mkdirSync(join(d, 'task_x'), { recursive: true });
  mkdirSync(join(d, 'task_y'), { recursive: true });
  assert.equal(publishedProvenance(join(d, 'task_x')), null, 'no lock');
  writeFileSync(join(d, PULL_LOCK_FILE), serializePullLock(lock({ task_x: entry({ 'check/p.md': 'c'.repeat(64) }) })));
  assert.deepEqual(publishedProvenance(join(d, 'task_x')), { repo: 'https://example.test/r.git', commit: sha('a'), dataset: 'o/d', datasetRevision: sha('b'), files: { 'check/p.md': 'c'.repeat(64) } });
  assert.equal(publishedProvenance(join(d, 'task_y')), null, 'a task the lock does not list');
  writeFileSync(join(d, PULL_LOCK_FILE), JSON.stringify({ ...lock({}), commit: 'short' }));
  assert.equal(publishedProvenance(join(d, 'task_x')), null, 'an invalid lock is no provenance');
  assert.throws(() => readPullLock(d), /saasbench-pull\.json: commit: a full git object id; remove it to pull again/);
});
