// The compose file a published task runs with: derived from the published one (workspace volume,
// absolute paths, Dockerfile.model as the app's build), interpolated as the published prepare
// script does for a model run (IMAGE_TAG=model, APP_CMD="sleep infinity").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PUBLISHED_COMPOSE_ENV, derivePublishedCompose } from '../../src/tasks/published/compose';
import { repoRoot } from '../../src/paths';
import { baseImages, mapDockerfile } from '../../src/sandbox';
import { readFileSync } from 'node:fs';
import { corpusOpt, publishedTasks } from '../helpers/published';

const DOCKER = join(repoRoot(), 'test', 'fixtures', 'published-compose', 'docker');

test('the derived compose: model image, idle command, Dockerfile.model for every service of the app image, networks on one bridge', () => {
  const d = derivePublishedCompose(join(DOCKER, 'docker-compose.yml'), DOCKER, mkdtempSync(join(tmpdir(), 'pubcompose-')));
  assert.deepEqual(d.issues, []);
  const p = d.project!;
  assert.deepEqual(PUBLISHED_COMPOSE_ENV, { IMAGE_TAG: 'model', APP_CMD: 'sleep infinity' });
  const { app, worker, db } = p.services;
  assert.equal(app.image, 'example/task_fixture-app:model', 'IMAGE_TAG=model beats IMAGE_TAG=baseline of .env');
  assert.deepEqual(app.command, ['bash', '-c', 'sleep infinity']);
  assert.equal(app.pullPolicy, 'missing');
  for (const s of [app, worker]) {
    assert.equal(s.build?.dockerfile, join(DOCKER, 'Dockerfile.model'), `${s.name} builds Dockerfile.model`);
    assert.equal(s.build?.context, DOCKER);
  }
  assert.equal(db.build, undefined);
  assert.equal(db.environment.POSTGRES_USER, 'fixtureuser', '.env interpolation');
  assert.deepEqual(db.aliases, ['database']);
  assert.deepEqual(p.networks, ['appnet']);
  assert.deepEqual(app.mounts, [{ type: 'volume', source: 'saasbench_workspace', target: '/app', readOnly: false }]);
  assert.ok(d.notes.some((n) => /services\.app\.build → Dockerfile\.model \(instead of the baseline build section\)/.test(n)), d.notes.join('\n'));
  assert.ok(d.notes.some((n) => /services\.worker\.build → Dockerfile\.model/.test(n)));
  // the base the model image builds FROM, and what an image map makes of it
  const df = readFileSync(app.build!.dockerfile, 'utf8');
  assert.deepEqual(baseImages(df, app.build!.args).map((b) => b.resolved), ['example/dev:base']);
  assert.deepEqual(mapDockerfile(df, app.build!.args, { 'example/dev:base': 'local/dev:1' }).args, { BASE_IMAGE: 'local/dev:1' });
});

test('every published compose file loads within the supported subset, the app on the model image', corpusOpt(), () => {
  const failures: string[] = [];
  for (const t of publishedTasks()) {
    const id = basename(t);
    const docker = join(t, 'tasks', id, 'docker');
    const d = derivePublishedCompose(join(docker, 'docker-compose.yml'), docker, mkdtempSync(join(tmpdir(), `pub-${id}-`)));
    if (d.issues.length) failures.push(`${id}: ${d.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    else if (!d.project!.services[d.appService].image?.endsWith(':model')) failures.push(`${id}: app image ${d.project!.services[d.appService].image}`);
  }
  assert.deepEqual(failures, []);
});
