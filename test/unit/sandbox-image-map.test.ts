import { test } from 'node:test';
import assert from 'node:assert/strict';
import { baseImages, canonicalRef, checkImageMap, imageMapFromEnv, ImageMapError, mapDockerfile, mapImage, parseImageMap } from '../../src/sandbox';
import { standinImageMap } from '../../src/sandbox/standins';
import { resolveSweepTasks } from '../../src/activities/sweep-resolve';
import { repoRoot } from '../../src/paths';
import { SweepInputSchema } from '../../src/model/sweep';
import { rolloutInputFor } from '../../src/workflows/sweep-entries';

test('canonical references: docker.io/library and :latest are implied', () => {
  assert.equal(canonicalRef('postgres'), 'docker.io/library/postgres:latest');
  assert.equal(canonicalRef('postgres:16-alpine'), 'docker.io/library/postgres:16-alpine');
  assert.equal(canonicalRef('docker.io/library/postgres:16-alpine'), 'docker.io/library/postgres:16-alpine');
  assert.equal(canonicalRef('shadetocloak/saasbench-dev:base'), 'docker.io/shadetocloak/saasbench-dev:base');
  assert.equal(canonicalRef('localhost:5000/x/y:1'), 'localhost:5000/x/y:1');
  assert.equal(canonicalRef('ghcr.io/a/b'), 'ghcr.io/a/b:latest');
});

test('mapImage: exact entries (any spelling) win over repo:* entries; unmapped → undefined', () => {
  const map = parseImageMap(['postgres:*=local/pg:15', 'docker.io/library/postgres:16-alpine=local/pg16:x', 'shadetocloak/saasbench-dev:base=local/dev'], 'test');
  assert.equal(mapImage('postgres:16-alpine', map), 'local/pg16:x');
  assert.equal(mapImage('postgres:16', map), 'local/pg:15');
  assert.equal(mapImage('postgres', map), 'local/pg:15');
  assert.equal(mapImage('library/postgres:14-alpine', map), 'local/pg:15');
  assert.equal(mapImage('docker.io/shadetocloak/saasbench-dev:base', map), 'local/dev');
  assert.equal(mapImage('shadetocloak/saasbench-dev:other', map), undefined);
  assert.equal(mapImage('pgvector/pgvector:pg16', map), undefined, 'another repository is not a tag of postgres');
  assert.equal(mapImage('redis:7', undefined), undefined);
});

test('image map entries are checked: one error naming the entry', () => {
  const bad: [string[], RegExp][] = [
    [['postgres'], /"postgres" is not from=to/],
    [['Postgres:16=x'], /"Postgres:16" is not an image reference/],
    [['postgres:16=has space'], /"has space" is not an image reference/],
    [['postgres:16=a', 'postgres:16=b'], /mapped twice/],
    [['postgres:16=x:*'], /"x:\*" is not an image reference/],
  ];
  for (const [entries, re] of bad) assert.throws(() => parseImageMap(entries, '--image-map'), (e: unknown) => e instanceof ImageMapError && re.test(e.message) && e.message.startsWith('--image-map: '));
  assert.throws(() => checkImageMap({ 'redis:*': 7 }, 'imageMap'), /: imageMap: "redis:\*" must map to an image reference string/);
  assert.deepEqual(imageMapFromEnv({ SAASBENCH_IMAGE_MAP: ' redis:*=a/r:1,\n postgres:16=a/p:2 ' }), { 'redis:*': 'a/r:1', 'postgres:16': 'a/p:2' });
  assert.deepEqual(imageMapFromEnv({}), {});
  assert.throws(() => imageMapFromEnv({ SAASBENCH_IMAGE_MAP: 'nonsense' }), /SAASBENCH_IMAGE_MAP: "nonsense" is not from=to/);
});

const DF_ARG = ['# comment', 'ARG BASE_IMAGE=shadetocloak/saasbench-dev:base', 'FROM ${BASE_IMAGE}', 'RUN echo hi', ''].join('\n');
const DF_LITERAL = ['FROM --platform=linux/amd64 golang:1.24-bookworm AS build', 'RUN go build', 'FROM build AS test', 'FROM scratch', 'FROM shadetocloak/saasbench-dev:base', 'COPY --from=build /x /x', ''].join('\n');

test('baseImages: ARG defaults, build args, stages and scratch', () => {
  assert.deepEqual(baseImages(DF_ARG, {}), [{ line: 3, written: '${BASE_IMAGE}', resolved: 'shadetocloak/saasbench-dev:base', arg: 'BASE_IMAGE' }]);
  assert.equal(baseImages(DF_ARG, { BASE_IMAGE: 'other:1' })[0].resolved, 'other:1', 'a build arg overrides the ARG default');
  assert.deepEqual(
    baseImages(DF_LITERAL, {}).map((b) => [b.line, b.resolved]),
    [
      [1, 'golang:1.24-bookworm'],
      [5, 'shadetocloak/saasbench-dev:base'],
    ],
  );
  assert.deepEqual(baseImages('ARG V=3.12\nFROM python:${V:-3.11}-slim\n', {}).map((b) => b.resolved), ['python:3.12-slim']);
  assert.deepEqual(baseImages('FROM \\\n  debian:12 \\\n  AS x\n', {}).map((b) => b.resolved), ['debian:12']);
});

test('mapDockerfile: FROM ${ARG} is mapped through the build arg; a literal FROM in the text', () => {
  const map = { 'shadetocloak/saasbench-dev:base': 'saasbench/standin-dev:bookworm', 'golang:*': 'local/go:1' };
  const a = mapDockerfile(DF_ARG, {}, map);
  assert.equal(a.text, DF_ARG, 'the Dockerfile stays as written');
  assert.deepEqual(a.args, { BASE_IMAGE: 'saasbench/standin-dev:bookworm' });
  assert.deepEqual(a.mapped, [{ line: 3, from: 'shadetocloak/saasbench-dev:base', to: 'saasbench/standin-dev:bookworm', via: 'arg' }]);
  const l = mapDockerfile(DF_LITERAL, { KEEP: '1' }, map);
  assert.deepEqual(l.args, { KEEP: '1' });
  const lines = l.text.split('\n');
  assert.equal(lines[0], 'FROM --platform=linux/amd64 local/go:1 AS build');
  assert.equal(lines[2], 'FROM build AS test', 'a stage reference is not an image');
  assert.equal(lines[4], 'FROM saasbench/standin-dev:bookworm');
  assert.deepEqual(l.mapped.map((m) => m.via), ['text', 'text']);
  const none = mapDockerfile(DF_LITERAL, {}, {});
  assert.equal(none.text, DF_LITERAL);
  assert.deepEqual(none.mapped, []);
});

test('the stand-in map covers the published infrastructure images it claims', () => {
  const m = standinImageMap();
  assert.equal(mapImage('postgres:16-alpine', m), 'saasbench/standin-postgres:15');
  assert.equal(mapImage('postgres:16-bookworm', m), 'saasbench/standin-postgres:15');
  assert.equal(mapImage('redis:7-alpine', m), 'saasbench/standin-redis:7');
  assert.equal(mapImage('valkey/valkey:7.2-alpine', m), 'saasbench/standin-redis:7');
  assert.equal(mapImage('shadetocloak/saasbench-dev:base', m), 'saasbench/standin-dev:bookworm');
  assert.equal(mapImage('pgvector/pgvector:pg16', m), undefined, 'no pgvector in Debian bookworm: not claimed');
  assert.deepEqual(Object.values(standinImageMap(['redis'])), ['saasbench/standin-redis:7', 'saasbench/standin-redis:7']);
});

test('a sweep file\'s imageMap: carried into every rollout input; a bad entry is an issue at imageMap.<from>', () => {
  const raw = { name: 'maps', tasks: ['tasks/helpdesk'], agents: ['noop'], imageMap: { 'postgres:*': 'saasbench/standin-postgres:15', 'redis:*': 'Not A Ref' } };
  const input = SweepInputSchema.parse(raw);
  const { issues } = resolveSweepTasks(input, 'sweep.yaml', repoRoot());
  assert.deepEqual(issues, [{ file: 'sweep.yaml', path: 'imageMap.redis:*', message: '"Not A Ref" is not an image reference' }]);
  const ok = SweepInputSchema.parse({ ...raw, imageMap: { 'postgres:*': 'saasbench/standin-postgres:15' } });
  assert.deepEqual(resolveSweepTasks(ok, 'sweep.yaml', repoRoot()).issues, []);
  const child = rolloutInputFor(ok, { workflowId: 'w', rolloutKey: 'k', taskId: 'helpdesk', taskDir: '/x', agent: 'noop', model: 'none', repeat: 0 });
  assert.deepEqual(child.imageMap, { 'postgres:*': 'saasbench/standin-postgres:15' });
  assert.equal(rolloutInputFor(SweepInputSchema.parse({ ...raw, imageMap: undefined }), { workflowId: 'w', rolloutKey: 'k', taskId: 'helpdesk', taskDir: '/x', agent: 'noop', model: 'none', repeat: 0 }).imageMap, undefined);
});
