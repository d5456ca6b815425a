import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadCompose, ComposeError } from '../../src/sandbox';
import { containerCreateOptions } from '../../src/sandbox/container-config';
import { corpusOpt, publishedTask } from '../helpers/published';

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const fixture = path.join(repoRoot, 'test', 'fixtures', 'compose', 'two-service', 'docker-compose.yml');
const upstream = () => path.join(publishedTask('task_aoiwqoiq'), 'tasks', 'task_aoiwqoiq', 'docker', 'docker-compose.yml');

test('loads and normalizes the two-service fixture', () => {
  const p = loadCompose(fixture, { processEnv: {} });
  assert.equal(p.name, 'fixture-two');
  assert.equal(p.dir, path.dirname(fixture));
  assert.deepEqual(p.order, ['db', 'web']);
  assert.deepEqual(Object.keys(p.volumes).sort(), ['dbdata', 'webdata']);
  const web = p.services.web;
  assert.deepEqual(web.build, {
    context: path.join(p.dir, 'web'),
    dockerfile: path.join(p.dir, 'web', 'Dockerfile'),
    args: { BUILD_NOTE: 'fixture-build' },
  });
  // environment beats env_file; FIXTURE_NAME comes from .env beside the compose file
  assert.equal(web.environment.GREETING, 'hello from web');
  assert.equal(web.environment.FROM_ENV_FILE, 'yes');
  assert.equal(web.environment.FIXTURE_NAME, 'two-service');
  assert.deepEqual(web.ports, [{ target: 8080, protocol: 'tcp' }]);
  assert.deepEqual(web.mounts, [
    { type: 'bind', source: path.join(p.dir, 'greeting.txt'), target: '/etc/fixture/greeting.txt', readOnly: true },
    { type: 'volume', source: 'webdata', target: '/var/webdata', readOnly: false },
  ]);
  assert.deepEqual(web.dependsOn, { db: 'service_healthy' });
  assert.deepEqual(web.tmpfs, { '/scratch': '' });
  assert.equal(web.workingDir, '/srv');
  assert.equal(web.init, true);
  const db = p.services.db;
  assert.deepEqual(db.healthcheck, {
    test: ['CMD', 'bash', '-c', 'exec 3<>/dev/tcp/127.0.0.1/5432 && echo ping >&3 && read -r line <&3 && [ "$line" = pong ]'],
    intervalNs: 1e9,
    timeoutNs: 2e9,
    startPeriodNs: 1e9,
    startIntervalNs: undefined,
    retries: 30,
  });
  assert.equal(p.warnings.length, 0, p.warnings.join('; '));
});

test('interpolation precedence: opts.env > process env > .env', () => {
  const p = loadCompose(fixture, { processEnv: { FIXTURE_NAME: 'from-process', GREETING: 'proc' }, env: { GREETING: 'opts' } });
  assert.equal(p.services.web.environment.FIXTURE_NAME, 'from-process');
  assert.equal(p.services.web.environment.GREETING, 'opts');
});

test('the upstream aoiwqoiq compose loads with envFileFallbacks', corpusOpt('task_aoiwqoiq'), () => {
  assert.ok(fs.existsSync(upstream()), `missing ${upstream()}`);
  assert.throws(() => loadCompose(upstream(), { processEnv: {} }), (e: unknown) => e instanceof ComposeError && e.path === 'services.app.env_file[0]' && /\.env/.test(e.message));
  const p = loadCompose(upstream(), { processEnv: {}, envFileFallbacks: ['.env.example'] });
  assert.equal(p.name, 'task-aoiwqoiq');
  assert.deepEqual(Object.keys(p.services), ['db', 'redis', 'app']);
  assert.deepEqual(p.order, ['db', 'redis', 'app']);
  const { db, redis, app } = p.services;
  assert.equal(db.image, 'pgvector/pgvector:pg16');
  assert.deepEqual(db.ports, [{ target: 5432, protocol: 'tcp' }]);
  assert.deepEqual(db.healthcheck?.test, ['CMD-SHELL', 'pg_isready -U appaoiwqoiq -d app_aoiwqoiq']);
  assert.equal(db.healthcheck?.intervalNs, 5e9);
  assert.equal(db.healthcheck?.retries, 10);
  assert.equal(db.environment.POSTGRES_DB, 'app_aoiwqoiq');
  assert.deepEqual(db.mounts[0], { type: 'volume', source: 'pgdata', target: '/var/lib/postgresql/data', readOnly: false });
  assert.deepEqual(db.mounts[1], { type: 'bind', source: path.join(p.dir, 'init-db.sql'), target: '/docker-entrypoint-initdb.d/01-init.sql', readOnly: true });
  assert.deepEqual(redis.ports, [{ target: 6379, protocol: 'tcp' }]);
  assert.deepEqual(redis.healthcheck?.test, ['CMD', 'redis-cli', 'ping']);
  assert.equal(app.image, 'shadetocloak/task_aoiwqoiq-app:baseline');
  assert.deepEqual(app.ports, [{ target: 8020, protocol: 'tcp' }]);
  assert.deepEqual(app.dependsOn, { db: 'service_healthy', redis: 'service_healthy' });
  assert.deepEqual(app.dns, ['8.8.8.8', '1.1.1.1']);
  assert.equal(app.stdinOpen, true);
  assert.equal(app.tty, true);
  assert.equal(app.workingDir, '/app');
  assert.deepEqual(app.command, ['bash', '-c', 'tail -f /dev/null']);
  assert.equal(app.environment.PORT, '8020');
  assert.equal(app.environment.DB_HOST, 'db');
  assert.ok(p.warnings.some((w) => /\.env\.example/.test(w)));
  // IMAGE_TAG from the harness wins over the fallback file
  assert.equal(loadCompose(upstream(), { processEnv: {}, envFileFallbacks: ['.env.example'], env: { IMAGE_TAG: 'model' } }).services.app.image, 'shadetocloak/task_aoiwqoiq-app:model');
});

// ---- rejections: every one names the file and the JSON path --------------------------------

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-compose-'));
let n = 0;
function write(yaml: string): string {
  const f = path.join(tmp, `c${n++}.yml`);
  fs.writeFileSync(f, yaml);
  return f;
}

const cases: Array<[string, string, string, RegExp]> = [
  ['unknown service key', 'services:\n  app:\n    image: x\n    deploy: {replicas: 2}\n', 'services.app.deploy', /key "deploy" is not supported by saasbench.*supported: image, build/],
  ['unknown top-level key', 'services:\n  app: {image: x}\nconfigs:\n  c: {}\n', 'configs', /key "configs" is not supported/],
  ['volume driver other than local', 'services:\n  app: {image: x}\nvolumes:\n  data:\n    driver: nfs\n', 'volumes.data.driver', /only the "local" driver/],
  ['volume driver_opts', 'services:\n  app: {image: x}\nvolumes:\n  data:\n    driver: local\n    driver_opts: {type: none, device: /etc}\n', 'volumes.data.driver_opts', /key "driver_opts" is not supported/],
  ['external volume', 'services:\n  app: {image: x}\nvolumes:\n  data:\n    external: true\n', 'volumes.data.external', /no external volumes/],
  ['host network driver', 'services:\n  app: {image: x, networks: [n]}\nnetworks:\n  n:\n    driver: host\n', 'networks.n.driver', /only "bridge".*never the host/],
  ['external network', 'services:\n  app: {image: x}\nnetworks:\n  n:\n    external: true\n', 'networks.n.external', /no external or host networks/],
  ['network ipam', 'services:\n  app: {image: x}\nnetworks:\n  n:\n    ipam: {config: [{subnet: 10.0.0.0/24}]}\n', 'networks.n.ipam', /key "ipam"/],
  ['undeclared service network', 'services:\n  app:\n    image: x\n    networks: [backend]\n', 'services.app.networks[0]', /network "backend" is not declared/],
  ['fixed address on a network', 'services:\n  app:\n    image: x\n    networks:\n      n: {ipv4_address: 10.0.0.5}\nnetworks:\n  n: {}\n', 'services.app.networks.n.ipv4_address', /fixed addresses are not supported/],
  ['bad alias', 'services:\n  app:\n    image: x\n    networks:\n      default: {aliases: ["not a host"]}\n', 'services.app.networks.default.aliases[0]', /not a valid host name/],
  ['network_mode host', 'services:\n  app: {image: x, network_mode: host}\n', 'services.app.network_mode', /key "network_mode" is not supported/],
  ['bad pull_policy', 'services:\n  app: {image: x, pull_policy: sometimes}\n', 'services.app.pull_policy', /must be one of always, missing/],
  ['bad expose', 'services:\n  app: {image: x, expose: ["http"]}\n', 'services.app.expose[0]', /not a port number/],
  ['build.target', 'services:\n  app:\n    build: {context: ., target: dev}\n', 'services.app.build.target', /key "target"/],
  ['bad duration', 'services:\n  app:\n    image: x\n    healthcheck: {test: "true", interval: 5}\n', 'services.app.healthcheck.interval', /duration string/],
  ['bad duration text', 'services:\n  app:\n    image: x\n    healthcheck: {test: "true", interval: 5 seconds}\n', 'services.app.healthcheck', /interval: "5 seconds" is not a duration/],
  ['bad healthcheck kind', 'services:\n  app:\n    image: x\n    healthcheck: {test: [RUN, x]}\n', 'services.app.healthcheck', /CMD/],
  ['unknown dependency', 'services:\n  app:\n    image: x\n    depends_on: [nope]\n', 'services.app.depends_on.nope', /unknown service "nope"/],
  ['bad condition', 'services:\n  db: {image: x}\n  app:\n    image: x\n    depends_on:\n      db: {condition: service_ready}\n', 'services.app.depends_on.db.condition', /must be one of/],
  ['dependency cycle', 'services:\n  a: {image: x, depends_on: [b]}\n  b: {image: x, depends_on: [a]}\n', 'services.a.depends_on', /cycle: a -> b -> a/],
  ['bad port', 'services:\n  app:\n    image: x\n    ports: ["http"]\n', 'services.app.ports[0]', /not a port number/],
  ['port range', 'services:\n  app:\n    image: x\n    ports: ["8000-8001:8000-8001"]\n', 'services.app.ports[0]', /ranges are not supported/],
  ['ports not a list', 'services:\n  app:\n    image: x\n    ports: "8080"\n', 'services.app.ports', /must be a list/],
  ['undeclared volume', 'services:\n  app:\n    image: x\n    volumes: ["data:/data"]\n', 'services.app.volumes[0]', /"data" is not declared/],
  ['tmpfs long volume', 'services:\n  app:\n    image: x\n    volumes: [{type: tmpfs, target: /t}]\n', 'services.app.volumes[0].type', /"volume" or "bind"/],
  ['missing env_file', 'services:\n  app:\n    image: x\n    env_file: missing.env\n', 'services.app.env_file', /env_file "missing.env" does not exist/],
  ['no image or build', 'services:\n  app:\n    command: ["true"]\n', 'services.app', /needs "image" or "build"/],
  ['required variable', 'services:\n  app:\n    image: "${TAG:?set TAG}"\n', 'services.app.image', /required variable TAG/],
  ['not a mapping', '- a\n- b\n', '', /must be a YAML mapping/],
  ['invalid yaml', 'services:\n  app: [\n', '', /invalid YAML/],
  ['relative working_dir', 'services:\n  app: {image: x, working_dir: app}\n', 'services.app.working_dir', /absolute/],
  ['bad environment', 'services:\n  app: {image: x, environment: 5}\n', 'services.app.environment', /map or a list/],
];

for (const [title, yaml, wantPath, wantMsg] of cases) {
  test(`rejects: ${title}`, () => {
    const f = write(yaml);
    assert.throws(
      () => loadCompose(f, { processEnv: {} }),
      (e: unknown) => {
        assert.ok(e instanceof ComposeError, `expected ComposeError, got ${String(e)}`);
        assert.equal(e.name, 'ComposeError');
        assert.equal(e.file, f);
        assert.equal(e.path, wantPath, e.message);
        assert.match(e.message, wantMsg);
        assert.ok(e.message.startsWith(`${f}: `), e.message);
        return true;
      },
    );
  });
}

test('accepted and ignored: restart, container_name, x-* keys, version (with a warning)', () => {
  const f = write('version: "3.8"\nx-anchors: {a: 1}\nservices:\n  app:\n    image: x\n    restart: always\n    container_name: fixed\n    x-note: hi\n    command: echo "a b"\n    extra_hosts: ["h=1.2.3.4"]\n    labels: [a=b]\n    ulimits: {nofile: 1024}\n    shm_size: 64m\n    user: 1000\n    healthcheck: {disable: true}\n');
  const p = loadCompose(f, { processEnv: {} });
  const app = p.services.app;
  assert.deepEqual(app.command, ['echo', 'a b']);
  assert.deepEqual(app.extraHosts, ['h:1.2.3.4']);
  assert.deepEqual(app.labels, { a: 'b' });
  assert.deepEqual(app.ulimits, [{ name: 'nofile', soft: 1024, hard: 1024 }]);
  assert.equal(app.shmSize, 64 * 1024 ** 2);
  assert.equal(app.user, '1000');
  assert.equal(app.healthcheck, null);
  assert.ok(p.warnings.some((w) => /version/.test(w)));
});

test('unset variables become empty strings and are recorded as warnings', () => {
  const f = write('services:\n  app:\n    image: "img:${NOPE}"\n');
  const p = loadCompose(f, { processEnv: {} });
  assert.equal(p.services.app.image, 'img:');
  assert.deepEqual(p.warnings, ['variable NOPE is not set; substituted an empty string']);
});

test('networks, aliases, volume driver local, pull_policy, expose: accepted and mapped onto the rollout network', () => {
  const f = write(
    [
      'name: nets',
      'services:',
      '  db:',
      '    image: db-img',
      '    networks:',
      '      backend: {aliases: [database.internal, pg]}',
      '      default: {aliases: [pg]}',
      '  app:',
      '    image: app-img',
      '    pull_policy: if_not_present',
      '    expose: ["9000", 9001]',
      '    networks: [backend, front]',
      'networks:',
      '  backend: {driver: bridge, name: fixed_backend_name}',
      '  front:',
      'volumes:',
      '  data: {driver: local, name: fixed_volume_name}',
      '',
    ].join('\n'),
  );
  const p = loadCompose(f, { processEnv: {} });
  assert.deepEqual(p.services.db.aliases, ['database.internal', 'pg']);
  assert.deepEqual(p.services.app.aliases, []);
  assert.equal(p.services.app.pullPolicy, 'missing');
  assert.deepEqual(p.networks, ['backend', 'front']);
  assert.deepEqual(Object.keys(p.volumes), ['data']);
  assert.ok(p.warnings.some((w) => /networks\.backend\.name "fixed_backend_name" is ignored/.test(w)), p.warnings.join('; '));
  assert.ok(p.warnings.some((w) => /volumes\.data\.name "fixed_volume_name" is ignored/.test(w)), p.warnings.join('; '));
  // every service joins the rollout's one network, under its name and its aliases; never another network
  const c = containerCreateOptions(p.services.db, { project: 'proj', network: 'proj_net', image: 'db-img', labels: {} });
  assert.equal(c.HostConfig?.NetworkMode, 'proj_net');
  assert.deepEqual(Object.keys(c.NetworkingConfig?.EndpointsConfig ?? {}), ['proj_net']);
  assert.deepEqual(c.NetworkingConfig?.EndpointsConfig?.proj_net.Aliases, ['db', 'database.internal', 'pg']);
  assert.deepEqual(c.HostConfig?.PortBindings, {});
});
