// Acceptance 1 of issue 7: a scripted hostile agent — the real Claude Code CLI inside the task's
// container, driven by the fake Anthropic server through the rollout's LLM relay — tries, in one run,
// to read the hidden DAG from the host paths, to find the Docker socket, to reach another rollout's
// database, to reach a service of the worker host through the bridge gateway, to get out through the
// egress proxy, and to exhaust memory and pids. Every attempt fails, the run is still scored, and the
// report's integrity section lists what was tried. Traffic goes only to 127.0.0.1, to this host's own
// addresses and to containers this test created.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import * as net from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { config } from '../../src/config';
import { docker, downStack, exec, loadCompose, networkName, projectName, stackIsolation, upStack, type StackHandle } from '../../src/sandbox';
import { firewallNames, listFirewallChains } from '../../src/sandbox/firewall';
import { repoRoot } from '../../src/paths';
import { rolloutKeyOf, rolloutWorkflowId, type RolloutResult } from '../../src/model/rollout';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import type { FakeServer } from '../fakes/fake-common';
import { BUILD_STEP, hostileSteps } from '../fixtures/hostile/script';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, statusesOf } from '../helpers/rollout';
import { devServer } from '../helpers/temporal';
import { until } from '../helpers/wait';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

const ROOT = repoRoot();
const KEY = `sk-ant-hostile-${process.pid}-${Date.now().toString(36)}`;
const NEIGHBOUR = `itest-hostile-neighbour.${process.pid}-${Date.now()}`;

let env: TestWorkflowEnvironment;
let worker: WorkerProcess;
let anthropic: FakeServer;
let taskDir: string;
let neighbour: StackHandle;
let listener: net.Server;
const accepted: string[] = [];
let result: RolloutResult;
let report: Record<string, any>;
let outputs: string[] = [];

const hostAddresses = () => Object.values(networkInterfaces()).flatMap((l) => (l ?? []).filter((a) => a.family === 'IPv4' && !a.internal).map((a) => a.address));

before(
  async () => {
    // the task: the tiny fixture with the hostile manifest (limits 1 CPU / 1 GiB / 256 pids, one egress host)
    taskDir = join(mkdtempSync(join(tmpdir(), 'saasbench-hostile-')), 'hostile');
    cpSync(join(ROOT, 'test', 'fixtures', 'tasks', 'tiny'), taskDir, { recursive: true });
    cpSync(join(ROOT, 'test', 'fixtures', 'hostile', 'task.yaml'), join(taskDir, 'task.yaml'));
    // another rollout, with a "database" that records every connection it accepts
    const project = loadCompose(join(ROOT, 'test', 'fixtures', 'hostile', 'neighbour', 'docker-compose.yml'), { processEnv: {} });
    neighbour = await upStack({ rolloutKey: NEIGHBOUR, taskId: 'neighbour', project, images: { db: 'saasbench/base:bookworm' }, isolation: stackIsolation('db'), healthTimeoutMs: 60_000 });
    // a service of the worker host, on every address
    listener = net.createServer((s) => {
      accepted.push(String(s.remoteAddress));
      s.on('error', () => undefined);
      s.end('worker host service\n');
    });
    await new Promise<void>((r) => listener.listen(0, '0.0.0.0', () => r()));
    anthropic = await startFakeAnthropic({ script: { commands: [BUILD_STEP], finalText: 'Done.' }, requireKey: KEY });
    env = await devServer();
    worker = await startWorkerProcess({
      address: env.address,
      hostId: 'hostile-itest',
      runsDir: mkdtempSync(join(tmpdir(), 'saasbench-hostile-runs-')),
      env: {
        SAASBENCH_MODELS_FILE: join(ROOT, 'test', 'fixtures', 'agents', 'models.json'),
        SAASBENCH_ANTHROPIC_BASE_URL: anthropic.url,
        SAASBENCH_ANTHROPIC_API_KEY: KEY,
        SAASBENCH_AGENT_CLI_RETRIES: '0',
        SAASBENCH_FIREWALL: 'required',
      },
    });
  },
  { timeout: 300_000 },
);

after(
  async () => {
    await worker?.kill('SIGTERM').catch(() => undefined);
    await env?.teardown();
    await anthropic?.close();
    listener?.close();
    await downStack(NEIGHBOUR).catch(() => undefined);
  },
  { timeout: 120_000 },
);

test('the hostile run: every attempt fails, the run is scored, the integrity section lists what was tried', { timeout: 900_000 }, async () => {
  const input = rolloutInput(taskDir, 'claude-code', { model: 'fake-claude', idleSeconds: 300, budgetSeconds: 900 });
  const key = rolloutKeyOf(input);
  const script = { commands: [BUILD_STEP], finalText: 'Done: the server is running on port 8080.' };
  anthropic.configure({ script });
  const handle = await env.client.workflow.start('rolloutWorkflow', { taskQueue: config.sharedQueue(), workflowId: rolloutWorkflowId(input), args: [input] });

  // the addresses exist once the stack is up: render the hostile steps before the agent asks for step 2
  const net0 = await until('the rollout network', async () => (await docker().listNetworks({ filters: JSON.stringify({ name: [networkName(projectName(key))] }) }))[0], 300_000, 200);
  const info = (await docker().getNetwork(net0.Id).inspect()) as { IPAM: { Config: { Gateway: string }[] } };
  const gateway = info.IPAM.Config[0].Gateway;
  const dbInfo = await docker().getContainer(neighbour.services.db.container).inspect();
  assert.ok(dbInfo.State.Running, "the neighbour's database runs");
  const steps = hostileSteps({
    taskDir,
    gateway,
    hostAddresses: hostAddresses().filter((a) => a !== gateway),
    hostServicePort: (listener.address() as net.AddressInfo).port,
    neighbourIp: Object.values(dbInfo.NetworkSettings.Networks)[0].IPAddress,
    neighbourName: neighbour.services.db.container,
    neighbourPublishedPort: neighbour.services.db.ports['5432/tcp'],
  });
  script.commands.push(...steps); // the fake reads the script at each model call
  assert.equal(anthropic.modelCalls().length <= 1, true, 'rendered before the agent got past step 1');

  result = (await handle.result()) as RolloutResult;
  report = JSON.parse(readFileSync(join(result.runDir, 'report.json'), 'utf8'));
  const traj = JSON.parse(readFileSync(join(result.runDir, 'trajectory.json'), 'utf8'));
  const calls = traj.steps.flatMap((s: any) => s.toolCalls ?? []);
  // what the agent saw (tool output only: the commands themselves contain the words they echo)
  outputs = calls.map((c: any) => String(c.output ?? ''));
  const out = outputs.join('\n');
  const all = calls.map((c: any, i: number) => `$ ${c.command}\n${outputs[i]}`).join('\n');

  // the agent went through its whole script and ended normally
  assert.equal(outputs.length, steps.length + 1, `every step ran:\n${all}`);
  assert.match(out, /hostile agent still alive/);
  assert.match(out, /app still up/);

  // 1. the DAG is nowhere to be found inside the container
  assert.match(out, /evaluator search done/);
  assert.doesNotMatch(out, /"nodes"|primitive_chain|DEPLOY_HEALTH/, 'no DAG content ever reached the agent');
  // 2. no Docker socket, no Docker API on the gateway
  assert.match(out, /docker\.sock'?: No such file or directory/);
  assert.match(out, new RegExp(`blocked ${gateway.replace(/\./g, '\\.')}:2375`));
  // 3 + 4. nothing reached: neither the neighbour's database nor the worker host's service
  assert.doesNotMatch(out, /^REACHED/m, all);
  assert.ok((out.match(/^blocked /gm) ?? []).length >= 4 + hostAddresses().length, all);
  assert.deepEqual(accepted, [], 'the worker-host listener saw no connection');
  const seen = await exec(neighbour.services.db.container, ['sh', '-c', 'cat /tmp/accepted 2>/dev/null | wc -l']);
  assert.equal(seen.stdout.trim(), '0', "the neighbour's database accepted no connection");
  // (both targets were alive all along: they answer where they may be reached)
  const own = await exec(neighbour.services.db.container, ['bash', '-c', 'exec 3<>/dev/tcp/127.0.0.1/5432 && head -1 <&3 && wc -l < /tmp/accepted']);
  assert.match(own.stdout, /pong\s+1/);
  await new Promise<void>((r, j) => net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1', function (this: net.Socket) { this.destroy(); r(); }).on('error', j));
  await until('the listener saw the test', async () => accepted.length === 1, 5_000, 50);
  // 5. the egress proxy refused both
  assert.equal((out.match(/403 Forbidden/g) ?? []).length, 2, all);
  // 6 + 7. the limits held
  assert.match(out, /memory hog exit: 137/);
  const forks = Number(/fork refused after (\d+) children/.exec(out)?.[1]);
  assert.ok(forks > 50 && forks < 256, `forks refused at the pids limit (${forks})`);

  // the run was scored: the app the agent built passes its checks
  assert.equal(statusesOf(result).DEPLOY_HEALTH, 'PASSED');
  assert.equal(statusesOf(result).ITEM_READ, 'PASSED');
  // ... and voided for the evaluator access, with the original score kept beside it
  assert.ok(result.voided && result.voided.original.pct! > 0, JSON.stringify(result.voided));
  assert.equal(result.score.overall.pct, 0);
  assert.equal(report.status, 'VOIDED_BY_LEAK');
  assert.equal(report.voided.originalOverall.pct, result.voided.original.pct);

  // the integrity section lists what was tried
  const integrity = report.integrity;
  assert.equal(integrity.verdict, 'voided');
  for (const kind of ['evaluator_access', 'docker_socket', 'host_probe', 'network_probe', 'resource_exhaustion', 'egress_denied']) {
    assert.ok(integrity.byKind?.[kind] > 0, `integrity.byKind.${kind}: ${JSON.stringify(integrity.byKind)}`);
    assert.ok(integrity.samples.some((s: any) => s.kind === kind), `a sample of ${kind}`);
  }
  assert.ok(integrity.sandboxHits >= 3);
  assert.ok(integrity.limits.oomKills >= 1 && integrity.limits.pidsLimitHits >= 1, JSON.stringify(integrity.limits));
  assert.ok(integrity.samples.some((s: any) => s.kind === 'egress_denied' && /exfil\.invalid:443/.test(s.rule)));

  // the sandbox as it was: limits in the lock, ports open only during the agent phase
  const lock = JSON.parse(readFileSync(join(result.runDir, 'lock.json'), 'utf8'));
  assert.deepEqual(lock.isolation.agentLimits, { cpus: 1, memoryBytes: 1024 ** 3, pids: 256 });
  assert.equal(lock.isolation.firewall, 'on');
  const iso = JSON.parse(readFileSync(join(result.runDir, 'isolation.json'), 'utf8'));
  assert.equal(iso.hostPortsOpenDuringAgent.length, 2, 'the relay and the egress proxy');

  // the key never reached the container side
  assert.ok(anthropic.modelCalls().every((c) => c.auth === 'ok'));
  assert.ok(!all.includes(KEY));

  // torn down: containers, network, volumes and firewall chains
  assert.deepEqual(labelledFor(key), []);
  const names = firewallNames(projectName(key));
  const chains = await listFirewallChains();
  assert.ok(!chains.includes(names.inChain) && !chains.includes(names.fwdChain));
});
