/**
 * A check whose Docker exec fails transiently is retried by the activity's retry policy and ends
 * with the app's real result (issue 11). The fault is injected at the sandbox seam: the real
 * `evaluateNode` activity runs the tiny task's FILES_PRESENT chain (P01, P02, P12) through
 * `envFromStack` against the in-memory backend wrapped by `withTransientExecFaults`, under the
 * real rollout workflow on the time-skipping test server; the other activities are stubbed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { evaluateNode } from '../../src/activities/evaluate-node';
import type * as activities from '../../src/activities';
import { validateRolloutInput } from '../../src/activities/validate-input';
import type { EvalPlan, Provisioned, RolloutInput } from '../../src/model/rollout';
import { repoRoot } from '../../src/paths';
import { loadCompose, setSandboxBackend } from '../../src/sandbox';
import { loadRunnableTask } from '../../src/tasks/load';
import { rolloutWorkflow } from '../../src/workflows/rollout';
import { withTransientExecFaults } from '../helpers/faulty-backend';
import { MemoryBackend, ok, type ExecCall } from '../helpers/memory-backend';
import { timeSkippingWithBundle } from '../helpers/temporal';

const task = loadRunnableTask(join(repoRoot(), 'test', 'fixtures', 'tasks', 'tiny'));
const node = task.dag.nodes.find((n) => n.id === 'FILES_PRESENT')!;
const tmp = mkdtempSync(join(tmpdir(), 'sb-seam-fault-'));
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => ({ env, bundle } = await timeSkippingWithBundle()));
after(async () => {
  setSandboxBackend(undefined);
  await env?.teardown();
  rmSync(tmp, { recursive: true, force: true });
});

/** The app container answers the chain's shell commands from its in-memory files (a Perl app). */
function scripted({ cmd, files }: ExecCall) {
  const text = cmd.join(' ');
  const kind = /if \[ -d '([^']+)' \]; then echo dir; elif \[ -e '([^']+)' \]/.exec(text);
  if (kind) {
    const p = posix.normalize(kind[1]);
    return ok([...files.keys()].some((f) => f.startsWith(`${p}/`)) ? 'dir\n' : files.has(p) ? 'file\n' : '');
  }
  if (/perl -v/.test(text)) return ok('\nThis is perl 5, version 36\n');
  return undefined;
}

test('a check whose Docker exec fails transiently is retried and ends with the app real result', async () => {
  const mem = new MemoryBackend(scripted);
  const stack = await mem.up({ rolloutKey: 'fault1', taskId: task.id, project: loadCompose(task.environment.composeFile), images: {} });
  const app = stack.services[task.environment.appService].container;
  await mem.writeFiles(app, task.environment.workspace, [{ path: 'server.pl', content: 'use IO::Socket::INET;\n' }]);
  const faults = withTransientExecFaults(mem, 1);
  setSandboxBackend(faults.backend);

  const taskQueue = 'seam-fault';
  const plan: EvalPlan = {
    taskId: task.id,
    taskHash: task.hash,
    nodes: [{ id: node.id, prereqs: [], method: node.scoring.method, maxScore: node.scoring.maxScore, category: node.scoring.category, subcategory: node.scoring.subcategory }],
    order: [node.id],
    trajectories: {},
  };
  let attempts = 0;
  const acts: Partial<typeof activities> = {
    validateRolloutInput,
    provision: async (): Promise<Provisioned> => ({ host: 'h1', hostQueue: taskQueue, runDir: tmp, plan, stack, appUrl: 'http://app', provisionMs: 1 }),
    prepareWorkspace: async () => ({ promptFile: 'p' }),
    runAgent: async () => ({ agent: 'oracle', model: 'none', exitReason: 'completed', exitCode: 0, attempts: 1, agentSeconds: 1, message: 'done', history: [] }),
    // the real activity: Temporal's retry policy decides what a thrown SandboxInfraError means
    evaluateNode: async (i) => {
      attempts++;
      return evaluateNode(i);
    },
    persistResults: async () => ({ runDir: tmp }),
    teardown: async () => ({ containers: 0, networks: 0, volumes: 0 }),
  };
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: acts });
  const input: Partial<RolloutInput> = { taskDir: task.dir, taskId: task.id, agent: 'oracle', model: 'none', heartbeatSeconds: 30, evaluation: { parallelism: 1, judge: { enabled: false, model: 'x' } } };
  const result = await worker.runUntil(env.client.workflow.execute(rolloutWorkflow, { taskQueue, workflowId: 'rollout-seam-fault', args: [input as RolloutInput] }));

  assert.equal(faults.injected, 1, 'the first exec of the chain failed at the seam');
  assert.equal(attempts, 2, 'the activity was retried once, not frozen as the node result');
  const outcome = result.outcomes.find((o) => o.nodeId === node.id)!;
  assert.equal(outcome.status, 'PASSED', outcome.message);
  assert.equal(outcome.score, node.scoring.maxScore);
  const record = JSON.parse(readFileSync(join(tmp, 'nodes', `${node.id}.json`), 'utf8')) as { steps: unknown[] };
  assert.equal(record.steps.length, 3, 'P01, P02 and P12 all ran against the app on the second attempt');
});
