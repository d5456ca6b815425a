// The image plan on real Docker: which services use, pull or build their image under compose's
// rules and pull_policy, what an image map does to a Dockerfile's base, the one preflight error,
// and `saasbench tasks check`. No registry is asked (SAASBENCH_NO_REGISTRY=1).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ImagePreflightError, buildImages, docker, loadCompose, planImages, preflightImages, type ComposeProject } from '../../src/sandbox';
import { repoRoot } from '../../src/paths';

const BASE = 'saasbench/base:bookworm';
const taskId = `planitest${process.pid}`;
let dir: string;
let project: ComposeProject;
const built: string[] = [];

before(() => {
  process.env.SAASBENCH_NO_REGISTRY = '1';
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'image-plan-'));
  fs.writeFileSync(path.join(dir, 'Dockerfile'), 'ARG BASE_IMAGE=example/missing-base:1\nFROM ${BASE_IMAGE}\nCMD ["echo", "built-by-plan-test"]\n');
  fs.writeFileSync(path.join(dir, 'literal.Dockerfile'), 'FROM example/missing-base:1\nCMD ["echo", "literal"]\n');
  const svc = (extra: string) => `    build: {context: ., dockerfile: Dockerfile}\n${extra}`;
  fs.writeFileSync(
    path.join(dir, 'docker-compose.yml'),
    [
      'services:',
      '  absent:',
      svc('    image: example/absent-app:model'),
      '  present:',
      svc(`    image: ${BASE}`),
      '  forced:',
      svc(`    image: ${BASE}\n    pull_policy: build`),
      '  never:',
      svc('    image: example/absent-app:never\n    pull_policy: never'),
      '  literal:',
      '    build: {context: ., dockerfile: literal.Dockerfile}',
      '  pulled:',
      '    image: example/only-in-a-registry:1',
      '',
    ].join('\n'),
  );
  project = loadCompose(path.join(dir, 'docker-compose.yml'), { processEnv: {} });
});

after(async () => {
  delete process.env.SAASBENCH_NO_REGISTRY;
  for (const t of built) await docker().getImage(t).remove().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('compose rules: present image used, pull_policy build/never, absent bases and images reported', async () => {
  const plans = Object.fromEntries((await planImages(project, taskId)).map((p) => [p.service, p]));
  assert.equal(plans.present.action, 'use');
  assert.equal(plans.forced.action, 'build', 'pull_policy build builds even when the image is present');
  assert.equal(plans.never.action, 'build', 'pull_policy never: absent → build, no pull');
  assert.equal(plans.absent.action, 'build');
  assert.equal(plans.absent.pullable, false);
  assert.match(plans.absent.problem!, /image example\/absent-app:model is not present; building it from Dockerfile needs base image example\/missing-base:1, which is not present and cannot be pulled \(registry lookups are off/);
  assert.deepEqual(plans.absent.build!.bases, [{ ref: 'example/missing-base:1', present: false, pullable: false, detail: 'registry lookups are off (SAASBENCH_NO_REGISTRY=1)' }]);
  assert.match(plans.literal.problem!, /^building from literal\.Dockerfile needs base image example\/missing-base:1/);
  assert.equal(plans.pulled.action, 'pull');
  assert.match(plans.pulled.problem!, /image example\/only-in-a-registry:1 is not present locally and cannot be pulled/);
  await assert.rejects(preflightImages(project, taskId), (e: unknown) => {
    assert.ok(e instanceof ImagePreflightError);
    assert.equal(e.name, 'ImagePreflightError');
    assert.match(e.message, new RegExp(`^task ${taskId}: 5 images are not available on this host:\\n`));
    for (const s of ['absent', 'forced', 'never', 'literal', 'pulled']) assert.match(e.message, new RegExp(`\\n  ${s}: `), s);
    assert.doesNotMatch(e.message, /\n {2}present: /);
    return true;
  });
});

test('an image map gives the Dockerfile another base (build arg or rewritten FROM) and another tag; the build uses it', async () => {
  const map = { 'example/missing-base:*': BASE, 'example/only-in-a-registry:1': BASE };
  const before = Object.fromEntries((await planImages(project, taskId)).map((p) => [p.service, p]));
  const plans = Object.fromEntries((await planImages(project, taskId, { imageMap: map })).map((p) => [p.service, p]));
  for (const p of Object.values(plans)) assert.equal(p.problem, undefined, `${p.service}: ${p.problem}`);
  assert.deepEqual(plans.absent.build!.bases, [{ ref: BASE, mappedFrom: 'example/missing-base:1', present: true }]);
  assert.notEqual(plans.absent.build!.tag, before.absent.build!.tag, 'the mapped base is part of the content hash');
  assert.deepEqual([plans.pulled.action, plans.pulled.image, plans.pulled.imageFrom], ['use', BASE, 'example/only-in-a-registry:1']);
  const images = await buildImages(project, taskId, { imageMap: map });
  built.push(...new Set([images.absent, images.forced, images.never, images.literal]));
  assert.equal(images.present, BASE);
  assert.equal(images.pulled, BASE);
  assert.equal(images.absent, plans.absent.build!.tag);
  const run = (ref: string) => execFileSync('docker', ['run', '--rm', ref], { encoding: 'utf8' }).trim();
  assert.equal(run(images.absent), 'built-by-plan-test');
  assert.equal(run(images.literal), 'literal');
  // the Dockerfile in the folder is untouched; the rewritten one was sent beside it
  assert.equal(fs.readFileSync(path.join(dir, 'literal.Dockerfile'), 'utf8'), 'FROM example/missing-base:1\nCMD ["echo", "literal"]\n');
});

test('saasbench tasks check: every image of the sample task, the compose keys, exit code', () => {
  const cli = (args: string[]) =>
    spawnSync(process.execPath, [path.join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), 'tasks', 'check', ...args], { encoding: 'utf8', env: { ...process.env, SAASBENCH_NO_REGISTRY: '1' } });
  const r = cli([path.join(repoRoot(), 'tasks', 'helpdesk'), '--json']);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.task, 'helpdesk');
  assert.equal(j.ok, true);
  assert.deepEqual(j.images.map((p: { service: string; action: string }) => [p.service, p.action]), [['db', 'build'], ['app', 'build']]);
  assert.ok(j.images.every((p: { build: { present: boolean } }) => p.build.present), 'setup built them');
  assert.deepEqual(j.keys.top, ['name', 'services', 'volumes']);
  assert.ok(j.keys.service.includes('healthcheck') && j.keys.service.includes('depends_on'));
  const bad = cli([path.join(repoRoot(), 'tasks', 'helpdesk'), '--image-map', 'nonsense']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^command line: --image-map: "nonsense" is not from=to/m);
});
