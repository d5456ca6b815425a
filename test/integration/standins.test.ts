// The local stand-ins (images/standins) behind an image map: a stack whose compose file names
// registry images (postgres:16-alpine, redis:7-alpine) starts on a host without a registry, with
// the official images' contract (POSTGRES_*, initdb.d, server args, pg_isready, redis-cli, reachable
// from the other containers), named networks and aliases on the rollout's one bridge.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { buildImages, downStack, exec, loadCompose, planImages, upStack, type ComposeProject, type StackHandle } from '../../src/sandbox';
import { STANDINS, buildStandin, standinImageMap } from '../../src/sandbox/standins';
import { repoRoot } from '../../src/paths';
import { labelledFor } from '../helpers/docker';

const fixture = path.join(repoRoot(), 'test', 'fixtures', 'compose', 'standins', 'docker-compose.yml');
const key = `itest-standins.${process.pid}-${Date.now()}`;
let project: ComposeProject;
let stack: StackHandle | undefined;

before(
  async () => {
    // idempotent: a few minutes the first time on a host (scripts/setup.sh builds them with the corpus present)
    for (const s of STANDINS.filter((x) => x.name !== 'dev')) await buildStandin(repoRoot(), s);
    project = loadCompose(fixture, { processEnv: {} });
  },
  { timeout: 900_000 },
);

after(async () => {
  await downStack(key).catch(() => undefined);
});

test('without the map the registry images are reported, with it every image is present', async () => {
  // registry:false — tests never talk to a registry
  const without = await planImages(project, 'standins', { registry: false });
  const problems = Object.fromEntries(without.filter((p) => p.problem).map((p) => [p.service, p.problem!]));
  assert.deepEqual(Object.keys(problems).sort(), ['cache', 'db']);
  assert.match(problems.db, /image postgres:16-alpine is not present locally and cannot be pulled/);
  const withMap = await planImages(project, 'standins', { registry: false, imageMap: standinImageMap(['postgres', 'redis']) });
  assert.deepEqual(
    withMap.map((p) => [p.service, p.action, p.image, p.imageFrom ?? null, p.problem ?? null]),
    [
      ['db', 'use', 'saasbench/standin-postgres:15', 'postgres:16-alpine', null],
      ['cache', 'use', 'saasbench/standin-redis:7', 'redis:7-alpine', null],
      ['app', 'use', 'saasbench/base:bookworm', null, null],
    ],
  );
});

test('the stack runs on the stand-ins: POSTGRES_*, initdb.d, server args, healthchecks, aliases across containers', { timeout: 300_000 }, async () => {
  const images = await buildImages(project, 'standins', { imageMap: standinImageMap() });
  assert.deepEqual(images, { db: 'saasbench/standin-postgres:15', cache: 'saasbench/standin-redis:7', app: 'saasbench/base:bookworm' });
  // upStack waits for both healthchecks (pg_isready, redis-cli ping) before starting app
  stack = await upStack({ rolloutKey: key, taskId: 'standins', project, images, healthTimeoutMs: 180_000 });
  const db = stack.services.db.container;
  const sql = (q: string) => exec(db, ['psql', '-h', 'db', '-U', 'fixture', '-d', 'fixturedb', '-tA', '-c', q], { env: { PGPASSWORD: 'fixture-pw' } });
  // over the network by service name, with the password (scram), the init script ran, the args reached the server
  // healthy means initialised: the first query over TCP already sees what the init scripts (SQL, then a
  // sourced shell script that pauses) wrote — the healthcheck cannot see the temporary init server
  assert.deepEqual(await sql('SELECT note FROM init_marker ORDER BY note').then((r) => [r.exitCode, r.stdout.trim()]), [0, 'from a shell script\nfrom initdb.d']);
  assert.equal((await sql('SHOW max_connections')).stdout.trim(), '42');
  assert.notEqual((await exec(db, ['psql', '-h', 'db', '-U', 'fixture', '-d', 'fixturedb', '-c', 'SELECT 1'], { env: { PGPASSWORD: 'wrong' } })).exitCode, 0, 'a wrong password is refused');
  // redis from another container, through the alias of a named network (protected mode off, bound to all interfaces)
  const app = stack.services.app.container;
  const ping = await exec(app, ['bash', '-c', 'exec 3<>/dev/tcp/kv.internal/6379 && printf "PING\\r\\n" >&3 && head -c 7 <&3']);
  assert.equal(ping.stdout.trim(), '+PONG', ping.stderr);
  const aof = await exec(stack.services.cache.container, ['redis-cli', 'CONFIG', 'GET', 'appendonly']);
  assert.match(aof.stdout, /appendonly\s+yes/, 'the compose command reached redis-server');
  const removed = await downStack(key);
  assert.deepEqual(removed.removed, { containers: 3, networks: 1, volumes: 1 });
  assert.deepEqual(labelledFor(key), []);
});
