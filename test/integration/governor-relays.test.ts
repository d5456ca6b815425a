/**
 * Acceptance of the rate governor (docs/gateway.md "Rate governor"): four rollouts at once, each
 * with its own LLM relay (the real one, the rollout's gate from src/governor) and a scripted
 * client speaking the Anthropic Messages protocol to it, under the real supervisor, against a fake
 * upstream that allows two streams at a time and answers 429 + Retry-After beyond that. The
 * governor workflow runs on a private Temporal dev server, started by updateWithStart as in
 * production. What must hold: the upstream never had to refuse (no 429), never saw more than two
 * streams, and each rollout's agent seconds leave out its governor waits — so a budget shorter
 * than the wall time but longer than the agent's own time is not exhausted.
 * (Not a full rollout per client: no containers; the agent "process" is the scripted client.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import pino from 'pino';
import { devServer } from '../helpers/temporal';
import { testWorkflowBundle } from '../helpers/workflow-bundle';
import { startRelay, type Relay } from '../../src/agents/llm-relay';
import { superviseAgent } from '../../src/agents/supervisor';
import type { AgentContext, AgentDriver } from '../../src/agents/types';
import type { SandboxBackend } from '../../src/sandbox/backend';
import { configureGovernor, providerGovernor } from '../../src/governor/client';
import { governorGate } from '../../src/governor/gate';
import { GOVERNOR_WORKFLOW, governorStateQuery, governorWorkflowId } from '../../src/governor/defs';

const STREAM_MS = 1500;
const LIMIT = 2;
const KEY = 'sk-real-key-governor-0123456789';

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
before(async () => {
  env = await devServer();
  worker = await Worker.create({ connection: env.nativeConnection, taskQueue: 'gov-it', workflowBundle: await testWorkflowBundle() });
  running = worker.run();
  configureGovernor({ client: env.client, taskQueue: 'gov-it' });
});
after(async () => {
  worker?.shutdown();
  await running?.catch(() => undefined);
  await env?.teardown();
});

/** An Anthropic-like upstream with a hard limit of LIMIT concurrent streams (429 + Retry-After beyond). */
async function limitedUpstream(): Promise<{ url: string; refused: number; maxStreams: number; served: number; close(): Promise<void> }> {
  const st = { url: '', refused: 0, maxStreams: 0, served: 0, close: async () => undefined };
  let open = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (open >= LIMIT) {
        st.refused++;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        return void res.end(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'too many streams' } }));
      }
      open++;
      st.maxStreams = Math.max(st.maxStreams, open);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      ev('message_start', { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'fake', content: [], usage: { input_tokens: 30, output_tokens: 0 } } });
      setTimeout(() => {
        ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
        ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } });
        ev('content_block_stop', { type: 'content_block_stop', index: 0 });
        ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } });
        ev('message_stop', { type: 'message_stop' });
        open--;
        st.served++;
        res.end();
      }, STREAM_MS);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  st.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  st.close = () => new Promise<undefined>((r) => server.close(() => r(undefined)));
  return st;
}

function ask(relay: Relay): Promise<number> {
  const body = Buffer.from(JSON.stringify({ model: 'fake', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] }));
  return new Promise((resolve, reject) => {
    const req = http.request(`${relay.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length), 'x-api-key': relay.token } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A sandbox whose one "process" is the scripted client: alive until it settles, then exit 0 at that moment. */
function clientSandbox(run: () => Promise<void>): SandboxBackend {
  let exit: { code: number; at: number } | null = null;
  const exec = async () => ({ exitCode: 0, stdout: exit ? `0 0 ${exit.code} ${exit.at}` : '1 0 none 0', stderr: '' });
  return {
    execDetached: async () => {
      void run().then(
        () => (exit = { code: 0, at: Date.now() }),
        () => (exit = { code: 1, at: Date.now() }),
      );
      return { pid: 4242 };
    },
    exec,
    readFile: async () => null,
  } as unknown as SandboxBackend;
}

test('4 rollouts, an upstream of 2 streams: no 429 reaches anyone, and agent seconds leave out the governor waits', async () => {
  const up = await limitedUpstream();
  const gov = providerGovernor('fake-2-streams', { concurrent: LIMIT, rpm: 600 });
  const driver: AgentDriver = { name: 'scripted', launch: () => ({ script: 'scripted' }) } as unknown as AgentDriver;
  const log = pino({ level: 'silent' });
  const t0 = Date.now();
  try {
    const runs = await Promise.all(
      [1, 2, 3, 4].map(async (i) => {
        const key = `gov-it-r${i}`;
        const gate = governorGate(gov, key);
        const relay = await startRelay({ key, bindHost: '127.0.0.1', upstream: { baseUrl: up.url, key: KEY, auth: 'x-api-key', keyEnv: 'X', protocol: 'anthropic' }, stateDir: mkdtempSync(join(tmpdir(), 'gov-relay-')), gate });
        const statuses: number[] = [];
        const ctx = { rolloutKey: key, sandbox: clientSandbox(async () => {
          for (let k = 0; k < 2; k++) statuses.push(await ask(relay));
        }), container: 'c', workspace: '/w', model: 'fake', runDir: mkdtempSync(join(tmpdir(), 'gov-run-')), prompt: '', log } as unknown as AgentContext;
        try {
          // budget 5 s: the slowest rollout's wall time is ~6 s (8 streams of 1.5 s over 2 slots), its own ~3 s
          const run = await superviseAgent(driver, ctx, { budgetSeconds: 5, idleSeconds: 30, transientRetries: 0, transientBackoffSeconds: 0, onLostProcess: 'fail', pollMs: 100, heartbeat: () => undefined, sleep: (ms) => new Promise((r) => setTimeout(r, ms)), unbilledMs: () => gate.unbilledMs() });
          return { run, statuses, waits: { ...gate.stats }, stats: relay.stats };
        } finally {
          await relay.close();
        }
      }),
    );
    const wallS = (Date.now() - t0) / 1000;
    assert.equal(up.refused, 0, 'the upstream never had to answer 429');
    assert.equal(up.maxStreams, LIMIT);
    assert.equal(up.served, 8);
    for (const r of runs) {
      assert.deepEqual(r.statuses, [200, 200]);
      assert.equal(r.run.exitReason, 'completed', r.run.message);
      assert.equal(r.waits.requests, 2);
      assert.deepEqual(r.stats.governor, r.waits, 'relay stats carry the rollout\'s governor waits');
      // own time = two streams (+ overhead); the waits are not in it
      assert.ok(r.run.agentSeconds >= 2.9 && r.run.agentSeconds < 4.5, `agentSeconds ${r.run.agentSeconds} (waited ${r.waits.waitMs} ms)`);
    }
    const totalWait = runs.reduce((a, r) => a + r.waits.waitMs, 0);
    assert.ok(totalWait >= 4000, `four rollouts over two slots must queue (waited ${totalWait} ms in all)`);
    assert.ok(runs.some((r) => r.waits.waited > 0));
    assert.ok(wallS > 5.5, `the slowest rollout outlived the 5 s budget in wall time (${wallS} s) and still completed`);
    const s = await env.client.workflow.getHandle(governorWorkflowId('fake-2-streams')).query(governorStateQuery);
    assert.deepEqual({ inFlight: s.inFlight, waiting: s.waiting, granted: s.granted }, { inFlight: 0, waiting: 0, granted: 8 });
    assert.equal(s.windowTokens, 8 * 35, 'the release replaced each estimate with the usage the upstream reported');
  } finally {
    await up.close();
  }
});

// the test timeout is the guard: an ask lost in a rollover would hang until the client's ~60 s poll gives up
test('continue-as-new under concurrent asks on the real server: every ask is answered, none waits for a timeout', { timeout: 30_000 }, async () => {
  const provider = 'fake-rollover';
  await env.client.workflow.start(GOVERNOR_WORKFLOW, { workflowId: governorWorkflowId(provider), taskQueue: 'gov-it', args: [{ provider, limits: { concurrent: 3 }, maxHistory: 60 }] });
  const gov = providerGovernor(provider, { concurrent: 3 });
  let inFlight = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 24 }, async () => {
      const a = await gov.admit('r', 10);
      assert.ok(a.leaseId, 'admitted with a lease (not the fail-open path)');
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 50));
      inFlight--;
      a.release({ tokens: 10 });
    }),
  );
  // the releases are fire-and-forget signals: wait until the governor applied them all, so none is
  // still on the wire when the server goes away (a call on a closed channel fails the file)
  let s = await env.client.workflow.getHandle(governorWorkflowId(provider)).query(governorStateQuery);
  for (let i = 0; i < 100 && s.inFlight > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    s = await env.client.workflow.getHandle(governorWorkflowId(provider)).query(governorStateQuery);
  }
  assert.equal(s.inFlight, 0, 'every lease released');
  assert.ok(s.runs > 1, `rolled over (runs=${s.runs})`);
  assert.equal(s.granted, 24);
  assert.ok(most <= 3, `at most 3 leases at once, saw ${most}`);
});
