// The OpenHands sidecar's sandbox (issue 13 item 5), without OpenHands: the container the driver
// starts — same spec builder (openhandsSidecarSpec), same agent network (egress and exec proxy
// ports opened on the gateway by openAgentNetwork) — with saasbench/base as a stand-in image and a
// scripted hostile shell instead of OpenHands. It has no Docker socket, no host network, cannot
// reach a service on the worker host's loopback or on its gateway, nor another rollout's container;
// its DOCKER_HOST (the exec proxy) runs commands in its own app container and refuses every other
// container and every other engine call. Traffic goes only to 127.0.0.1, this host's addresses and
// containers this test created. (The real OpenHands version: agents-openhands-hostile.test.ts.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openhandsSidecarSpec } from '../../src/agents/openhands/sidecar';
import { docker, dockerBackend, downStack, loadCompose, stackIsolation, upStack, type StackHandle } from '../../src/sandbox';
import { openPorts } from '../../src/sandbox/firewall';
import { openAgentNetwork, type AgentNetwork } from '../../src/security/agent-network';
import { repoRoot } from '../../src/paths';
import { labelledFor } from '../helpers/docker';
import { hostTrap } from '../helpers/openhands';

const ROOT = repoRoot();
const run = `${process.pid}-${Date.now().toString(36)}`;
const KEY = `itest-ohside.${run}.a`;
const NEIGHBOUR = `itest-ohside.${run}.b`;
const sb = dockerBackend();

let stack: StackHandle;
let neighbour: StackHandle;
let agentNet: AgentNetwork | null = null;
let gateway: string;
let sidecar: string;
let loopback: { server: net.Server; port: number } | undefined;
let anyAddr: { server: net.Server; port: number } | undefined;
const accepted: string[] = [];
const hostIps = () => Object.values(networkInterfaces()).flatMap((l) => (l ?? []).filter((x) => x.family === 'IPv4' && !x.internal).map((x) => x.address));

const sh = async (script: string) => (await sb.exec(sidecar, ['bash', '-c', script], { timeoutMs: 60_000 })).stdout;
const probe = (host: string, port: number) => `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null && echo "REACHED ${host}:${port}" || echo "blocked ${host}:${port}"`;

/** A minimal HTTP/1.0 client in bash (the stand-in has neither curl nor the docker CLI): req METHOD PATH BODY [TOKEN-PREFIX] */
const REQ = [
  'req() {',
  '  local hp=${DOCKER_HOST#tcp://}; local base=/${hp#*/}; hp=${hp%%/*}; local tok=${4-$base}',
  '  exec 3<>/dev/tcp/${hp%:*}/${hp#*:} || { echo "CONNECT-FAILED"; return; }',
  "  printf '%s %s HTTP/1.0\\r\\nHost: docker\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n%s' \"$1\" \"$tok$2\" \"${#3}\" \"$3\" >&3",
  '  timeout 20 cat <&3; exec 3<&-',
  '}',
].join('\n');

before(
  async () => {
    const project = loadCompose(join(ROOT, 'test', 'fixtures', 'tasks', 'tiny', 'environment', 'docker-compose.yml'), { processEnv: {} });
    const other = loadCompose(join(ROOT, 'test', 'fixtures', 'hostile', 'neighbour', 'docker-compose.yml'), { processEnv: {} });
    [stack, neighbour] = await Promise.all([
      upStack({ rolloutKey: KEY, taskId: 'tiny', project, images: { app: 'saasbench/base:bookworm' }, isolation: stackIsolation('app'), healthTimeoutMs: 60_000 }),
      upStack({ rolloutKey: NEIGHBOUR, taskId: 'neighbour', project: other, images: { db: 'saasbench/base:bookworm' }, isolation: stackIsolation('db'), healthTimeoutMs: 60_000 }),
    ]);
    const app = stack.services.app.container;
    gateway = await sb.gateway(stack.network, app);
    loopback = await hostTrap('127.0.0.1', accepted);
    anyAddr = await hostTrap('0.0.0.0', accepted);
    const runDir = mkdtempSync(join(tmpdir(), 'saasbench-ohside-'));
    mkdirSync(join(runDir, 'agent'));
    // the agent network as run-agent opens it for a sidecar agent (no relay here: no model)
    agentNet = await openAgentNetwork({ rolloutKey: KEY, project: stack.project, gateway, runDir, allow: [], noProxy: Object.keys(stack.services), execInto: { container: app } });
    const venv = join(runDir, 'venv');
    mkdirSync(venv);
    const ctx = { stack, rolloutKey: KEY, task: { id: 'tiny' } as never, extraEnv: agentNet.env };
    sidecar = await sb.startSidecar(openhandsSidecarSpec(ctx, { image: 'saasbench/base:bookworm', venv, hostDir: join(runDir, 'openhands') }));
  },
  { timeout: 120_000 },
);

after(
  async () => {
    await agentNet?.close();
    loopback?.server.close();
    anyAddr?.server.close();
    for (const k of [KEY, NEIGHBOUR]) await downStack(k).catch(() => undefined);
  },
  { timeout: 60_000 },
);

test('the OpenHands sidecar: no socket, no host network, no host or neighbour service; the exec proxy runs commands in its own app container only', { timeout: 60_000 }, async () => {
  const app = stack.services.app.container;
  const db = neighbour.services.db.container;
  // the container as the driver configures it
  const info = await docker().getContainer(sidecar).inspect();
  assert.equal(info.HostConfig.NetworkMode, stack.network);
  assert.deepEqual(Object.keys(info.NetworkSettings.Networks), [stack.network], 'only the rollout network');
  assert.ok(!(info.HostConfig.Binds ?? []).some((b) => /docker\.sock|^\/var\/run|^\/run/.test(b)), JSON.stringify(info.HostConfig.Binds));
  assert.deepEqual(info.HostConfig.CapDrop, ['NET_RAW']);
  const dockerHost = info.Config.Env.find((e) => e.startsWith('DOCKER_HOST='))!.slice('DOCKER_HOST='.length);
  assert.match(dockerHost, new RegExp(`^tcp://${gateway.replace(/\./g, '\\.')}:${agentNet!.execProxyPort}/[0-9a-f]+$`));
  assert.ok((await openPorts(stack.project)).includes(agentNet!.execProxyPort!), 'the firewall opened the exec proxy port');

  const dbIp = (await sb.addresses(db))[0];
  // (other rollouts' bridges come and go while this runs: take the host's addresses once)
  const others = hostIps().filter((a) => a !== gateway);
  const out = await sh(
    [
      'ls -la /var/run/docker.sock /run/docker.sock 2>&1',
      probe('127.0.0.1', loopback!.port),
      probe(gateway, anyAddr!.port),
      ...others.map((a) => probe(a, anyAddr!.port)),
      probe(gateway, 2375),
      probe(dbIp, 5432),
      probe(gateway, neighbour.services.db.ports['5432/tcp']),
      'echo "probes done"',
    ].join('; '),
  );
  assert.match(out, /docker\.sock'?: No such file or directory/);
  assert.doesNotMatch(out, /^REACHED/m, out);
  assert.equal((out.match(/^blocked /gm) ?? []).length, 5 + others.length, out);
  assert.deepEqual(accepted, [], 'neither host listener saw a connection');

  // the exec proxy: exec into the app container works (create, then start with a TTY: a plain stream)
  const ok = await sh(`${REQ}
    id=$(req POST /v1.41/containers/${app}/exec '{"Cmd":["bash","-c","echo in-app:$(hostname)"],"AttachStdout":true,"Tty":true}' | grep -o '"Id":"[0-9a-f]*"' | cut -d'"' -f4)
    echo "id=$id"; req POST /v1.41/exec/$id/start '{"Detach":false,"Tty":true}'`);
  const appHost = (await docker().getContainer(app).inspect()).Config.Hostname;
  assert.match(ok, new RegExp(`in-app:${appHost}`), ok);
  // ... and nothing else: another rollout's container, the sidecar itself, listing, creating,
  // images, copying files into the app, a privileged exec, an exec id it did not create, no token
  const refusals = await sh(`${REQ}
    req POST /v1.41/containers/${db}/exec '{"Cmd":["true"]}'
    req POST /v1.41/containers/${sidecar}/exec '{"Cmd":["true"]}'
    req GET /v1.41/containers/json ''
    req POST /v1.41/containers/create '{"Image":"saasbench/base:bookworm","HostConfig":{"Binds":["/:/host"]}}'
    req POST '/v1.41/images/create?fromImage=alpine' ''
    req PUT '/v1.41/containers/${app}/archive?path=/tmp' 'x'
    req POST /v1.41/containers/${app}/exec '{"Cmd":["true"],"Privileged":true}'
    req POST /v1.41/exec/${'f'.repeat(64)}/start '{}'
    req GET /_ping '' ''`);
  const statuses = [...refusals.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]);
  assert.deepEqual(statuses, Array(9).fill('403'), refusals);
  assert.match(refusals, /not this rollout's app container/);
  const seen = await sb.exec(db, ['sh', '-c', 'cat /tmp/accepted 2>/dev/null | wc -l']);
  assert.equal(seen.stdout.trim(), '0', "the neighbour's database accepted no connection");

  // after the agent phase the proxy is gone and its port closed
  await agentNet!.close();
  agentNet = null;
  assert.doesNotMatch(await sh(`${REQ}; req GET /_ping ''`), /OK/);
  assert.deepEqual(await openPorts(stack.project), []);
  await downStack(KEY);
  assert.deepEqual(labelledFor(KEY), [], 'down() removed the sidecar with the stack');
});
