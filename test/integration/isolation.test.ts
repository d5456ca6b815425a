// Real-Docker, real-iptables test of a rollout's sandbox (docs/security.md), without an agent:
// limits and hardening on the agent's container, the firewall between the containers and the worker
// host / a neighbouring rollout, ports opened and closed, the egress proxy, and cleanup on teardown.
// Traffic goes only to 127.0.0.1, to this host's own addresses and to containers this test created.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import * as path from 'node:path';
import { buildImages, docker, downStack, exec, loadCompose, projectName, stackIsolation, upStack, type ComposeProject, type StackHandle } from '../../src/sandbox';
import { closeHostPort, firewallNames, listFirewallChains, openHostPort, openPorts } from '../../src/sandbox/firewall';
import { readEgressLog, startEgressProxy } from '../../src/security/egress-proxy';
import { openAgentNetwork } from '../../src/security/agent-network';
import { limitSignals } from '../../src/security/signals';
import { dockerBackend } from '../../src/sandbox';
const gatewayOf = (network: string, container: string) => dockerBackend().gateway(network, container);

const root = path.resolve(__dirname, '..', '..', '..');
const fixture = path.join(root, 'test', 'fixtures', 'compose', 'two-service', 'docker-compose.yml');
const run = `${process.pid}-${Date.now()}`;
const KEY = `itest-isolation.${run}.a`;
const NEIGHBOUR = `itest-isolation.${run}.b`;
const MiB = 1024 ** 2;

let project: ComposeProject;
let a: StackHandle;
let b: StackHandle;
let gw: string;
let listener: net.Server;
let listenerPort: number;
const accepted: string[] = [];

const web = () => a.services.web.container;
const sh = (container: string, script: string, timeoutMs = 30_000) => exec(container, ['bash', '-c', script], { timeoutMs });
/** bash's /dev/tcp connect from inside a container, bounded */
const connect = (container: string, host: string, port: number) => sh(container, `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port} && echo CONNECTED' 2>&1; true`);
const hostIps = () => Object.values(networkInterfaces()).flatMap((l) => (l ?? []).filter((x) => x.family === 'IPv4' && !x.internal).map((x) => x.address));

before(
  async () => {
    project = loadCompose(fixture, { processEnv: {} });
    // the fixture's web binds a host file; a task's agent service may not (checked at task load), so drop it here
    project.services.web.mounts = project.services.web.mounts.filter((m) => m.type !== 'bind');
    const images = await buildImages(project, 'sbfixture');
    const iso = stackIsolation('web', { cpus: 1, memoryBytes: 256 * MiB, pids: 128 });
    [a, b] = await Promise.all([
      upStack({ rolloutKey: KEY, taskId: 'sbfixture', project, images, isolation: iso, healthTimeoutMs: 60_000 }),
      upStack({ rolloutKey: NEIGHBOUR, taskId: 'sbfixture', project, images, isolation: iso, healthTimeoutMs: 60_000 }),
    ]);
    gw = await gatewayOf(a.network, web());
    listener = net.createServer((s) => {
      accepted.push(String(s.remoteAddress));
      s.on('error', () => undefined);
      s.end('hello from the worker host\n');
    });
    await new Promise<void>((r) => listener.listen(0, '0.0.0.0', () => r()));
    listenerPort = (listener.address() as net.AddressInfo).port;
  },
  { timeout: 300_000 },
);

after(
  async () => {
    listener?.close();
    for (const k of [KEY, NEIGHBOUR]) await downStack(k).catch(() => undefined);
  },
  { timeout: 120_000 },
);

test('limits and hardening: the agent service gets the task limits, the others the service defaults; no host path, no docker socket', async () => {
  const info = await docker().getContainer(web()).inspect();
  assert.equal(info.HostConfig.Memory, 256 * MiB);
  assert.equal(info.HostConfig.MemorySwap, 256 * MiB, 'no swap beyond the limit');
  assert.equal(info.HostConfig.PidsLimit, 128);
  assert.equal(info.HostConfig.NanoCpus, 1e9);
  assert.deepEqual(info.HostConfig.CapDrop, ['NET_RAW']);
  assert.deepEqual(info.HostConfig.SecurityOpt, ['no-new-privileges:true']);
  assert.ok(info.Mounts.every((m) => m.Type === 'volume'), `only volumes: ${JSON.stringify(info.Mounts)}`);
  const db = await docker().getContainer(a.services.db.container).inspect();
  assert.equal(db.HostConfig.Memory, 2 * 1024 * MiB);
  assert.equal(db.HostConfig.SecurityOpt ?? null, null);
  const r = await sh(web(), 'ls -la /var/run/docker.sock /run/docker.sock 2>&1; ls /work 2>&1; true');
  assert.match(r.stdout, /No such file/);
  assert.doesNotMatch(r.stdout, /srw/);
  for (const p of Object.values(info.NetworkSettings.Ports ?? {})) for (const bnd of p ?? []) assert.equal(bnd.HostIp, '127.0.0.1');
});

test('the network: own bridge name, no masquerading, firewall chains in place', async () => {
  const n = await docker().getNetwork(a.network).inspect();
  const names = firewallNames(projectName(KEY));
  assert.equal(n.Options?.['com.docker.network.bridge.name'], names.bridge);
  assert.equal(n.Options?.['com.docker.network.bridge.enable_ip_masquerade'], 'false');
  const chains = await listFirewallChains();
  assert.ok(chains.includes(names.inChain) && chains.includes(names.fwdChain), chains.join(' '));
  assert.deepEqual(await openPorts(projectName(KEY)), [], 'nothing open before the agent phase');
});

test('containers of one stack still reach each other', async () => {
  const r = await sh(web(), `exec 3<>/dev/tcp/db/5432 && echo ping >&3 && read -r l <&3 && echo "$l"`);
  assert.equal(r.stdout.trim(), 'pong');
});

test('a service of the worker host is out of reach through the gateway and the host addresses; opening one port opens only it', async () => {
  for (const ip of [gw, ...hostIps()]) {
    const r = await connect(web(), ip, listenerPort);
    assert.doesNotMatch(r.stdout, /CONNECTED/, `${ip}:${listenerPort} must be unreachable: ${r.stdout}`);
  }
  assert.deepEqual(accepted, [], 'the listener saw no connection');
  await openHostPort(projectName(KEY), gw, listenerPort);
  assert.deepEqual(await openPorts(projectName(KEY)), [listenerPort]);
  assert.match((await connect(web(), gw, listenerPort)).stdout, /CONNECTED/, 'an opened port is reachable on the gateway');
  assert.equal(accepted.length, 1);
  const other = hostIps().find((ip) => ip !== gw);
  if (other) assert.doesNotMatch((await connect(web(), other, listenerPort)).stdout, /CONNECTED/, 'only on the gateway address');
  // the neighbour's firewall is its own
  assert.doesNotMatch((await connect(b.services.web.container, await gatewayOf(b.network, b.services.web.container), listenerPort)).stdout, /CONNECTED/);
  await closeHostPort(projectName(KEY), gw, listenerPort);
  assert.doesNotMatch((await connect(web(), gw, listenerPort)).stdout, /CONNECTED/);
  assert.equal(accepted.length, 1);
});

test("another rollout's database is unreachable: by address, by name, and through its loopback port", async () => {
  const bDb = await docker().getContainer(b.services.db.container).inspect();
  const ip = Object.values(bDb.NetworkSettings.Networks)[0].IPAddress;
  assert.ok(ip);
  assert.doesNotMatch((await connect(web(), ip, 5432)).stdout, /CONNECTED/, `neighbour db ${ip}:5432`);
  assert.doesNotMatch((await connect(web(), b.services.db.container, 5432)).stdout, /CONNECTED/);
  const published = b.services.db.ports['5432/tcp'];
  if (published) assert.doesNotMatch((await connect(web(), gw, published)).stdout, /CONNECTED/);
  // and the neighbour's db works for its own stack
  assert.equal((await sh(b.services.web.container, `exec 3<>/dev/tcp/db/5432 && echo ping >&3 && read -r l <&3 && echo "$l"`)).stdout.trim(), 'pong');
});

test('memory and pids limits hold, and the kernel counts it', async () => {
  const mem = await sh(web(), 'head -c 1G /dev/zero | tail | wc -c; echo "tail rc=${PIPESTATUS[1]}"', 60_000);
  assert.match(mem.stdout, /tail rc=137/, `the memory hog was killed: ${mem.stdout}`);
  const pids = await sh(web(), `perl -e 'my $n = 0; for (1..1000) { my $p = fork; if (!defined $p) { print "refused after $n\\n"; last } if (!$p) { sleep 3; exit } $n++ } 1 while wait != -1'`, 60_000);
  const n = Number(/refused after (\d+)/.exec(pids.stdout)?.[1]);
  assert.ok(n > 50 && n < 128, `forks refused at the pids limit (${pids.stdout.trim()})`);
  const s = await limitSignals(dockerBackend(), web());
  assert.ok(s && s.oomKills >= 1 && s.pidsLimitHits >= 1, JSON.stringify(s));
  // and the container is still usable
  assert.equal((await sh(web(), 'echo alive')).stdout.trim(), 'alive');
});

test('the egress proxy: an allowlisted destination passes, anything else is refused and recorded', async () => {
  const target = http.createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  const tport = (target.address() as net.AddressInfo).port;
  const stateDir = mkdtempSync(path.join(tmpdir(), 'egress-'));
  const proxy = await startEgressProxy({ key: KEY, bindHost: gw, allow: [`127.0.0.1:${tport}`, 'registry.npmjs.org'], stateDir });
  try {
    await openHostPort(projectName(KEY), gw, proxy.port);
    const get = (url: string, host: string) =>
      sh(web(), `exec 3<>/dev/tcp/${gw}/${proxy.port} || exit 9; printf 'GET ${url} HTTP/1.1\\r\\nHost: ${host}\\r\\nConnection: close\\r\\n\\r\\n' >&3; timeout 5 cat <&3`);
    const ok = await get(`http://127.0.0.1:${tport}/pkg`, `127.0.0.1:${tport}`);
    assert.match(ok.stdout, /200 OK[\s\S]*hello \/pkg/, ok.stdout);
    const no = await get('http://forbidden.invalid/x', 'forbidden.invalid');
    assert.match(no.stdout, /403[\s\S]*not in the task's network.allow/, no.stdout);
    const tunnel = await sh(web(), `exec 3<>/dev/tcp/${gw}/${proxy.port}; printf 'CONNECT 127.0.0.1:${listenerPort} HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' >&3; timeout 5 cat <&3`);
    assert.match(tunnel.stdout, /403/, 'the proxy is no way around the firewall');
    const log = readEgressLog(stateDir);
    assert.deepEqual(log.map((d) => [d.host, d.allowed]), [['127.0.0.1', true], ['forbidden.invalid', false], ['127.0.0.1', false]]);
    assert.ok(JSON.parse(readFileSync(path.join(stateDir, 'egress.json'), 'utf8')).port === proxy.port);
  } finally {
    await closeHostPort(projectName(KEY), gw, proxy.port);
    await proxy.close();
    target.close();
  }
});

test('teardown removes the firewall with the stack', async () => {
  const names = firewallNames(projectName(NEIGHBOUR));
  await downStack(NEIGHBOUR);
  const chains = await listFirewallChains();
  assert.ok(!chains.includes(names.inChain) && !chains.includes(names.fwdChain), chains.join(' '));
  await downStack(NEIGHBOUR); // idempotent
});

test('two overlapping agent phases of one rollout (a retried attempt): the relay port stays open until the last one closes', async () => {
  const runDir = mkdtempSync(path.join(tmpdir(), 'saasbench-agent-net-'));
  const opts = { rolloutKey: KEY, project: projectName(KEY), gateway: gw, runDir, allow: [], relayPort: listenerPort, noProxy: Object.keys(a.services) };
  const first = await openAgentNetwork(opts);
  const second = await openAgentNetwork(opts);
  assert.ok((await openPorts(projectName(KEY))).includes(listenerPort));
  await first.close();
  await first.close(); // a second close of the same holder must not release the other's
  assert.ok((await openPorts(projectName(KEY))).includes(listenerPort), 'attempt 1 closing must not cut attempt 2 off its relay');
  assert.match((await connect(web(), gw, listenerPort)).stdout, /CONNECTED/);
  await second.close();
  assert.deepEqual(await openPorts(projectName(KEY)), [], 'the last holder closes every port');
});
