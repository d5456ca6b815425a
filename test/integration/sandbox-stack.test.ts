// Real-Docker integration test: two stacks of one fixture side by side, container access, and
// label-based teardown. Needs dockerd and the local saasbench/base:bookworm image.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  buildImages,
  buildTag,
  copyDirInto,
  docker,
  downStack,
  exec,
  execDetached,
  findStack,
  ImageMissingError,
  listLabelledRollouts,
  loadCompose,
  readFile,
  reapStacks,
  SandboxInputError,
  upStack,
  volumeName,
  writeFiles,
  type ComposeProject,
  type StackHandle,
} from '../../src/sandbox';

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const fixture = path.join(repoRoot, 'test', 'fixtures', 'compose', 'two-service', 'docker-compose.yml');
const taskId = 'sbfixture';
const run = `${process.pid}-${Date.now()}`;
const keys = [`itest-sandbox.${run}.a`, `itest-sandbox.${run}.b`];
const testLabel = { 'saasbench.test': 'sandbox-stack' };

let project: ComposeProject;
let images: Record<string, string>;
let handles: StackHandle[] = [];

function httpGet(port: number, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('http timeout')));
    req.on('error', reject);
  });
}

const dockerCli = (...args: string[]) => execFileSync('docker', args, { encoding: 'utf8' }).trim();
const web = (i: number) => handles[i].services.web.container;

before(
  async () => {
    project = loadCompose(fixture, { processEnv: {} });
    images = await buildImages(project, taskId);
    handles = await Promise.all(keys.map((k) => upStack({ rolloutKey: k, taskId, project, images, labels: testLabel, healthTimeoutMs: 60_000 })));
  },
  { timeout: 300_000 },
);

after(
  async () => {
    for (const k of keys) await downStack(k).catch(() => undefined);
  },
  { timeout: 120_000 },
);

test('images are content-addressed and reused', async () => {
  assert.match(images.web, /^saasbench\/sbfixture-web:[0-9a-f]{12}$/);
  assert.match(images.db, /^saasbench\/sbfixture-db:[0-9a-f]{12}$/);
  const lines: string[] = [];
  const again = await buildImages(project, taskId, { onProgress: (l) => lines.push(l) });
  assert.deepEqual(again, images);
  assert.ok(lines.every((l) => /already built/.test(l)), lines.join('\n'));
  // .dockerignore'd files do not change the tag; build args do
  const ignored = path.join(project.dir, 'web', 'ignored.txt');
  const before = fs.readFileSync(ignored);
  try {
    fs.writeFileSync(ignored, 'changed ' + Date.now());
    assert.equal((await buildTag(project.services.web, taskId)).tag, images.web);
  } finally {
    fs.writeFileSync(ignored, before);
  }
  const withArg = { ...project.services.web, build: { ...project.services.web.build!, args: { BUILD_NOTE: 'other' } } };
  assert.notEqual((await buildTag(withArg, taskId)).tag, images.web);
  const note = await exec(web(0), ['cat', '/srv/build-note']);
  assert.equal(note.stdout, 'fixture-build\n');
});

test('two stacks run side by side on distinct loopback ports', async () => {
  const [a, b] = handles;
  assert.notEqual(a.project, b.project);
  assert.notEqual(a.network, b.network);
  assert.notEqual(a.services.web.container, b.services.web.container);
  const pa = a.services.web.ports['8080/tcp'];
  const pb = b.services.web.ports['8080/tcp'];
  assert.ok(pa > 0 && pb > 0 && pa !== pb, `ports ${pa} ${pb}`);
  assert.notEqual(pa, 18080, 'compose host port must be replaced');
  for (const h of handles) {
    const info = await docker().getContainer(h.services.web.container).inspect();
    assert.deepEqual(
      info.NetworkSettings.Ports['8080/tcp']?.map((x) => x.HostIp),
      ['127.0.0.1'],
    );
    const port = h.services.web.ports['8080/tcp'];
    assert.deepEqual(await httpGet(port, '/env'), { status: 200, body: 'hello from web|yes|two-service|db:5432' });
    assert.equal((await httpGet(port, '/greeting')).body, 'greetings from a bind mount\n');
  }
  assert.deepEqual(a.services.db.ports, {});
});

test('service aliases resolve inside each stack network', async () => {
  for (const i of [0, 1]) {
    const r = await exec(web(i), ['bash', '-c', 'exec 3<>/dev/tcp/db/5432; echo hello >&3; cat <&3'], { timeoutMs: 10_000 });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, 'echo hello\n');
  }
  // each stack's "db" is its own: the volume write shows up only in that stack's db
  const started = await exec(handles[0].services.db.container, ['cat', '/data/started']);
  assert.equal(started.exitCode, 0);
});

test('labels on containers, network and volumes', async () => {
  const h = handles[0];
  for (const [service, s] of Object.entries(h.services)) {
    const l = (await docker().getContainer(s.container).inspect()).Config.Labels;
    assert.equal(l['saasbench.rollout'], keys[0]);
    assert.equal(l['saasbench.task'], taskId);
    assert.equal(l['saasbench.service'], service);
    assert.equal(l['saasbench.managed'], 'true');
    assert.equal(l['saasbench.test'], 'sandbox-stack');
  }
  const net = await docker().getNetwork(h.network).inspect();
  assert.equal(net.Labels?.['saasbench.rollout'], keys[0]);
  assert.equal(net.Labels?.['saasbench.managed'], 'true');
  for (const v of ['dbdata', 'webdata']) {
    const vol = await docker().getVolume(volumeName(h.project, v)).inspect();
    assert.equal(vol.Labels['saasbench.rollout'], keys[0]);
    assert.equal(vol.Labels['saasbench.task'], taskId);
  }
});

test('exec: exit codes, streams, stdin, env, workdir, user, timeout', async () => {
  const c = web(0);
  assert.deepEqual(await exec(c, ['bash', '-c', 'echo out; echo err >&2; exit 7']), { exitCode: 7, stdout: 'out\n', stderr: 'err\n', timedOut: false });
  assert.equal((await exec(c, ['cat'], { stdin: 'piped\n' })).stdout, 'piped\n');
  const r = await exec(c, ['bash', '-c', 'echo "$FOO:$(pwd):$(id -u)"'], { env: { FOO: 'bar' }, workdir: '/tmp', user: 'nobody' });
  assert.equal(r.stdout, 'bar:/tmp:65534\n');
  const t0 = Date.now();
  const slow = await exec(c, ['bash', '-c', 'echo before; sleep 30 & sleep 30'], { timeoutMs: 700 });
  assert.equal(slow.timedOut, true);
  assert.equal(slow.stdout, 'before\n');
  assert.ok(Date.now() - t0 < 6000, `timeout took ${Date.now() - t0} ms`);
  const left = await exec(c, ['bash', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done | grep -c "^sleep 30" || true']);
  assert.equal(left.stdout.trim(), '0', 'the timed-out process group was killed');
});

test('execDetached outlives its exec and records the exit code', async () => {
  const c = web(0);
  const controlDir = '/tmp/ctl-detached';
  // The script waits for a go-file instead of sleeping, so a loaded machine cannot make it finish early.
  const { pid } = await execDetached(c, 'echo "started $MARK in $(pwd)"; while [ ! -f /tmp/ctl-go ]; do sleep 0.05; done; echo oops >&2; exit 3', {
    controlDir,
    env: { MARK: 'm1' },
    workdir: '/srv',
  });
  assert.ok(pid > 1);
  assert.equal((await readFile(c, `${controlDir}/pid`))?.toString().trim(), String(pid));
  // the script arrived on the launch exec's stdin, byte for byte
  assert.match((await readFile(c, `${controlDir}/script.sh`))?.toString() ?? '', /^echo "started \$MARK in \$\(pwd\)"; while/);
  assert.equal(await readFile(c, `${controlDir}/exit_code`), null, 'still running after execDetached returned');
  assert.equal((await exec(c, ['bash', '-c', `kill -0 ${pid}`])).exitCode, 0, 'process alive');
  await exec(c, ['touch', '/tmp/ctl-go']);
  let code: Buffer | null = null;
  for (let i = 0; i < 50 && !code; i++) {
    await new Promise((r) => setTimeout(r, 200));
    code = await readFile(c, `${controlDir}/exit_code`);
  }
  assert.equal(code?.toString(), '3\n');
  assert.equal((await readFile(c, `${controlDir}/stdout.log`))?.toString(), 'started m1 in /srv\n');
  assert.equal((await readFile(c, `${controlDir}/stderr.log`))?.toString(), 'oops\n');
  // a rerun in the same control dir starts clean
  await execDetached(c, 'sleep 0.2; exit 0', { controlDir });
  for (let i = 0; i < 50; i++) {
    const again = await readFile(c, `${controlDir}/exit_code`);
    if (again) {
      assert.equal(again.toString(), '0\n');
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
});

test('execDetached with settleMs: a process that ends at once is reported with its exit and log sizes; a running one is not', async () => {
  const c = web(0);
  const quick = await execDetached(c, 'echo hi; echo err >&2; exit 4', { controlDir: '/tmp/ctl-settle-1', settleMs: 5000 });
  assert.deepEqual({ ...quick.exited, at: undefined }, { exitCode: 4, at: undefined, stdoutBytes: 3, stderrBytes: 4 });
  assert.ok(Math.abs(quick.exited!.at - Date.now()) < 60_000, 'the exit time is the exit record\'s, in ms');
  const slow = await execDetached(c, 'sleep 3', { controlDir: '/tmp/ctl-settle-2', settleMs: 50 });
  assert.equal(slow.exited, undefined);
  assert.ok(slow.pid > 1);
});

test('execDetached with files: they are in place, byte for byte, before the script starts; an image without tar gets them too', async () => {
  const c = web(0);
  const kb = Buffer.from('{"clarifications":[{"q":"ünïcode ✓"}]}\n');
  const files = { dir: '/srv/seed', files: [{ path: 'task.md', content: Buffer.from('# PRD\n') }, { path: 'kb/knowledge_base.json', content: kb }] };
  // the script sees the files at its start: it copies them before anything else could write them
  const r = await execDetached(c, 'cat /srv/seed/task.md /srv/seed/kb/knowledge_base.json', { controlDir: '/tmp/ctl-seed-1', settleMs: 5000, files });
  assert.equal(r.exited?.exitCode, 0);
  assert.equal((await readFile(c, '/tmp/ctl-seed-1/stdout.log'))?.toString(), `# PRD\n${kb.toString()}`);
  assert.deepEqual(await readFile(c, '/srv/seed/kb/knowledge_base.json'), kb);
  assert.equal((await exec(c, ['stat', '-c', '%a %U', '/srv/seed/task.md'])).stdout.trim(), '644 root');
  // no tar in the image: the files go in by a separate write, the launch still happens once
  assert.equal((await exec(c, ['sh', '-c', 'mv "$(command -v tar)" /tmp/tar.away'])).exitCode, 0);
  try {
    const again = await execDetached(c, 'cat /srv/seed2/task.md', { controlDir: '/tmp/ctl-seed-2', settleMs: 5000, files: { ...files, dir: '/srv/seed2' } });
    assert.equal(again.exited?.exitCode, 0);
    assert.equal((await readFile(c, '/tmp/ctl-seed-2/stdout.log'))?.toString(), '# PRD\n');
  } finally {
    await exec(c, ['sh', '-c', 'mv /tmp/tar.away /bin/tar || mv /tmp/tar.away /usr/bin/tar']);
  }
  // a path that leaves its folder is refused before anything runs
  await assert.rejects(execDetached(c, 'true', { controlDir: '/tmp/ctl-seed-3', files: { dir: '/srv/seed', files: [{ path: '../escape', content: Buffer.from('x') }] } }), SandboxInputError);
});

test('readFile / writeFiles / copyDirInto round trip', async () => {
  const c = web(1);
  await writeFiles(c, '/tmp/wf/nested', [
    { path: 'a.txt', content: 'alpha' },
    { path: 'deep/b.bin', content: Buffer.from([0, 1, 2, 255]), mode: 0o755 },
  ]);
  assert.equal((await readFile(c, '/tmp/wf/nested/a.txt'))?.toString(), 'alpha');
  assert.deepEqual(await readFile(c, '/tmp/wf/nested/deep/b.bin'), Buffer.from([0, 1, 2, 255]));
  assert.equal((await exec(c, ['stat', '-c', '%a', '/tmp/wf/nested/deep/b.bin'])).stdout.trim(), '755');
  assert.equal(await readFile(c, '/tmp/wf/nope.txt'), null);
  assert.equal((await readFile(c, '/tmp/wf/nested/a.txt', { maxBytes: 3 }))?.toString(), 'alp');
  await exec(c, ['ln', '-s', 'nested/a.txt', '/tmp/wf/link']);
  assert.equal((await readFile(c, '/tmp/wf/link'))?.toString(), 'alpha');
  await assert.rejects(readFile(c, '/tmp/wf/nested'), SandboxInputError);
  await assert.rejects(writeFiles(c, '/tmp', [{ path: '../etc/x', content: '' }]), SandboxInputError);

  const host = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-copy-'));
  try {
    fs.mkdirSync(path.join(host, 'node_modules', 'pkg'), { recursive: true });
    fs.writeFileSync(path.join(host, 'node_modules', 'pkg', 'index.js'), 'module.exports = 1;\n');
    fs.writeFileSync(path.join(host, 'start.sh'), '#!/bin/bash\necho hi\n', { mode: 0o755 });
    fs.writeFileSync(path.join(host, 'debug.log'), 'excluded');
    fs.mkdirSync(path.join(host, 'tmpcache'));
    fs.writeFileSync(path.join(host, 'tmpcache', 'x'), 'excluded');
    fs.symlinkSync('start.sh', path.join(host, 'run.sh'));
    await copyDirInto(c, host, '/opt/solution', { exclude: ['*.log', 'tmpcache'] });
    const listing = await exec(c, ['bash', '-c', 'cd /opt/solution && find . | sort']);
    assert.deepEqual(listing.stdout.trim().split('\n'), ['.', './node_modules', './node_modules/pkg', './node_modules/pkg/index.js', './run.sh', './start.sh']);
    assert.equal((await exec(c, ['/opt/solution/run.sh'])).stdout, 'hi\n');
    assert.equal((await readFile(c, '/opt/solution/node_modules/pkg/index.js'))?.toString(), 'module.exports = 1;\n');
  } finally {
    fs.rmSync(host, { recursive: true, force: true });
  }
});

test('findStack returns an equal handle; upStack is idempotent', async () => {
  assert.deepEqual(await findStack(keys[0]), handles[0]);
  const ids = async (h: StackHandle) =>
    Promise.all(Object.values(h.services).map(async (s) => (await docker().getContainer(s.container).inspect()).Id));
  const before = await ids(handles[0]);
  const again = await upStack({ rolloutKey: keys[0], taskId, project, images, labels: testLabel });
  assert.deepEqual(again, handles[0]);
  assert.deepEqual(await ids(again), before);
  assert.equal(await findStack(`itest-sandbox.${run}.never`), null);
});

test('a partial stack is replaced on upStack', async () => {
  await docker().getContainer(web(1)).remove({ force: true });
  assert.equal(await findStack(keys[1]), null);
  const h = await upStack({ rolloutKey: keys[1], taskId, project, images, labels: testLabel });
  assert.equal(h.services.web.container, handles[1].services.web.container);
  handles[1] = h;
  assert.equal((await httpGet(h.services.web.ports['8080/tcp'], '/')).body, 'ok web\n');
});

test('listLabelledRollouts, reapStacks and downStack remove everything', async () => {
  const listed = await listLabelledRollouts();
  for (const k of keys) assert.ok(listed.includes(k), `${k} listed`);
  // Only our key b counts as dead: other engineers' stacks on this engine must survive.
  const reaped = await reapStacks(async (k) => k !== keys[1]);
  assert.deepEqual(reaped, [keys[1]]);
  assert.equal(await findStack(keys[1]), null);
  assert.deepEqual(await downStack(keys[0]), { removed: { containers: 2, networks: 1, volumes: 2 } });
  assert.deepEqual(await downStack(keys[0]), { removed: { containers: 0, networks: 0, volumes: 0 } });
  for (const k of keys) {
    const f = `label=saasbench.rollout=${k}`;
    assert.equal(dockerCli('ps', '-aq', '--filter', f), '');
    assert.equal(dockerCli('network', 'ls', '-q', '--filter', f), '');
    assert.equal(dockerCli('volume', 'ls', '-q', '--filter', f), '');
  }
  assert.ok(!(await listLabelledRollouts()).some((k) => keys.includes(k)));
});

test('a missing image: service fails with ImageMissingError naming the service', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-missing-'));
  try {
    const f = path.join(dir, 'docker-compose.yml');
    fs.writeFileSync(f, 'services:\n  cache:\n    image: saasbench/definitely-missing:nope\n');
    const p = loadCompose(f, { processEnv: {} });
    await assert.rejects(buildImages(p, taskId), (e: unknown) => {
      assert.ok(e instanceof ImageMissingError, String(e));
      assert.equal(e.service, 'cache');
      assert.match(e.message, /service "cache".*saasbench\/definitely-missing:nope/);
      return true;
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
