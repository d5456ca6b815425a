/**
 * The host-move and fork branches of rolloutWorkflow on the time-skipping test server, activities
 * stubbed: a host whose queue nobody polls (schedule-to-start timeout) and a host whose containers
 * vanished (HostLostError) both move the rollout to another host with the latest snapshot; a
 * fork restores its parent's snapshot without the session and carries the parent link.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { rolloutWorkflow } from '../../src/workflows/rollout';
import type { AgentRunSummary, EvalPlan, Provisioned, RolloutInput, RolloutResult } from '../../src/model/rollout';
import type { SnapshotMeta } from '../../src/model/snapshot';
import type { RunAgentInput } from '../../src/activities/run-agent';
import { HostLostError } from '../../src/snapshots/errors';
import type * as activities from '../../src/activities';
import { validateRolloutInput } from '../../src/activities/validate-input';
import { devServer, timeSkippingWithBundle } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
before(async () => ({ env, bundle } = await timeSkippingWithBundle()));
after(async () => {
  await env?.teardown();
});

const plan: EvalPlan = { taskId: 't', taskHash: 'h', nodes: [{ id: 'A', prereqs: [], method: 'binary', maxScore: 2, category: 'API', subcategory: '' }], order: ['A'], trajectories: { T1: ['A'] } };
const completed: AgentRunSummary = { agent: 'claude-code', model: 'm', exitReason: 'completed', exitCode: 0, attempts: 2, agentSeconds: 30, message: 'done', history: [] };
const snap: SnapshotMeta = { id: 'k/0002', rolloutKey: 'k', seq: 2, takenAt: Date.now(), host: 'hostA', agentSeconds: 20, final: false, bytes: { workspace: 10 } };

type Acts = typeof activities;
interface Seen {
  provisions: number;
  runAgent: RunAgentInput[];
  teardowns: number;
}

let n = 0;
async function run(opts: { firstHostQueue: 'dead' | 'live'; runAgent(i: RunAgentInput, seen: Seen): Promise<AgentRunSummary>; input?: Partial<RolloutInput>; snapshot?: SnapshotMeta | null; env?: TestWorkflowEnvironment }): Promise<{ result: RolloutResult; seen: Seen }> {
  const taskQueue = `host-move-${++n}`;
  const seen: Seen = { provisions: 0, runAgent: [], teardowns: 0 };
  const provisioned = (host: string, hostQueue: string): Provisioned => ({ host, hostQueue, runDir: '/nonexistent', plan, stack: { rolloutKey: 'k', project: host, network: 'n', services: {} }, appUrl: 'http://x', provisionMs: 1 });
  const acts: Partial<Acts> = {
    validateRolloutInput,
    provision: async () => (++seen.provisions === 1 ? provisioned('hostA', opts.firstHostQueue === 'dead' ? `${taskQueue}-dead` : taskQueue) : provisioned('hostB', taskQueue)),
    prepareWorkspace: async () => ({ promptFile: 'p' }),
    runAgent: async (i) => {
      seen.runAgent.push(i);
      return opts.runAgent(i, seen);
    },
    latestSnapshot: async () => (opts.snapshot === undefined ? snap : opts.snapshot),
    evaluateNode: async (i) => ({ nodeId: i.nodeId, status: 'PASSED', score: 2, maxScore: 2, method: 'binary', category: 'API', subcategory: '', message: 'ok', exports: {}, durationMs: 1 }),
    persistResults: async () => ({ runDir: '/nonexistent' }),
    teardown: async () => {
      seen.teardowns++;
      return { containers: 0, networks: 0, volumes: 0 };
    },
  };
  const e = opts.env ?? env;
  const worker = await Worker.create({ connection: e.nativeConnection, taskQueue, workflowBundle: bundle, activities: acts });
  // host A provisioned (and, on the shared queue, prepared the workspace), then died: its queue
  // has no worker, so runAgent waits on a queue nobody polls
  const input = { taskDir: '/t', taskId: 't', agent: 'claude-code', model: 'm', heartbeatSeconds: 5, hostLossSeconds: 60, snapshotSeconds: 30, evaluation: { parallelism: 1, judge: { enabled: false, model: 'x' } }, ...opts.input } as RolloutInput;
  const result = await worker.runUntil(async () => {
    const h = await e.client.workflow.start(rolloutWorkflow, { taskQueue, workflowId: `rollout-${taskQueue}`, args: [input] });
    return h.result();
  });
  return { result, seen };
}

test('host queue unpolled past hostLossSeconds: provisioned again on another host, latest snapshot restored with its session, the move reported', async () => {
  // the time-skipping server never fires a schedule-to-start timeout: a real dev server, 5 s of waiting
  const dev = await devServer();
  const { result, seen } = await run({ firstHostQueue: 'dead', env: dev, input: { hostLossSeconds: 5 }, runAgent: async () => completed }).finally(() => dev.teardown());
  assert.equal(seen.provisions, 2, 'provisioned again (shared queue)');
  assert.equal(seen.runAgent.length, 1, 'runAgent never started on the dead host');
  assert.deepEqual(seen.runAgent[0].restore, { rolloutKey: 'adhoc.t.claude-code.m.0', seq: 2, session: true });
  assert.equal(seen.runAgent[0].snapshotSeconds, 30);
  assert.equal(seen.runAgent[0].ref.stack.project, 'hostB', 'the new stack');
  assert.equal(result.host, 'hostB');
  assert.equal(result.moves?.length, 1);
  const m = result.moves![0];
  assert.deepEqual([m.fromHost, m.toHost, m.snapshot], ['hostA', 'hostB', 'k/0002']);
  assert.match(m.reason, /unpolled for 5s/);
  assert.ok(m.downSeconds >= 5, `detection took the schedule-to-start timeout (${m.downSeconds}s)`);
  assert.equal(seen.teardowns, 1, 'teardown on the new host only (the dead host has no worker)');
  assert.equal(result.agentRun.exitReason, 'completed');
  assert.equal(result.score.overall.pct, 100);
});

test('containers missing (HostLostError): the old host cleans up, the rollout moves; without a snapshot the agent starts over', async () => {
  const { result, seen } = await run({
    firstHostQueue: 'live',
    snapshot: null,
    runAgent: async (_i, s) => {
      if (s.runAgent.length === 1) throw new HostLostError('rollout k: container gone');
      return completed;
    },
  });
  assert.equal(seen.runAgent.length, 2, 'HostLostError is not retried on the same host');
  assert.equal(seen.runAgent[1].restore, undefined, 'no snapshot: a fresh start');
  assert.equal(result.moves?.[0].snapshot, null);
  assert.match(result.moves![0].reason, /containers missing/);
  assert.equal(seen.teardowns, 2, 'old host and new host');
});

test('other agent failures do not move the rollout (recorded as infrastructure, as before)', async () => {
  const { result, seen } = await run({
    firstHostQueue: 'live',
    input: { agentRetry: { transientRetries: 0, backoffSeconds: 1, onLostProcess: 'fail' } },
    runAgent: async () => {
      throw new Error('boom');
    },
  });
  assert.equal(seen.provisions, 1);
  assert.equal(result.moves, undefined);
  assert.equal(result.agentRun.exitReason, 'infrastructure');
});

test('a fork restores the parent snapshot without its session and links the parent', async () => {
  const fromSnapshot = { workflowId: 'rollout/adhoc/t/claude-code/m/0', rolloutKey: 'parent-key', seq: 1, runDir: '/nonexistent-parent' };
  const { result, seen } = await run({ firstHostQueue: 'live', input: { fromSnapshot, repeat: 1 }, runAgent: async () => completed });
  assert.deepEqual(seen.runAgent[0].restore, { rolloutKey: 'parent-key', seq: 1, session: false });
  assert.deepEqual(result.parent, { workflowId: fromSnapshot.workflowId, rolloutKey: 'parent-key', snapshot: 'parent-key/0001', runDir: '/nonexistent-parent' });
});
