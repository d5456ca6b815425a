/**
 * Issue 12 item 6: the helpdesk task declares parallel evaluation safe (task.yaml
 * evaluation.parallelSafe), so evaluating its DAG one node at a time and four at a time against the
 * same running reference solution must give identical statuses and scores. A published task (no
 * declaration) defaults to one node at a time.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { oracleAgent } from '../../src/agents/oracle';
import { evaluateLocally } from '../../src/evaluation/evaluate-local';
import { log } from '../../src/log';
import { buildImages, downStack, execDetached, loadCompose, readFile, sandboxBackend, upStack } from '../../src/sandbox';
import { loadRunnableTask } from '../../src/tasks/load';
import { planOf } from '../../src/tasks/plan';
import type { Task } from '../../src/model/task';
import { repoRoot } from '../../src/paths';
import type { StackHandle } from '../../src/model/sandbox';

let task: Task;
let stack: StackHandle;
let rolloutKey: string;
let dir: string;

before(async () => {
  task = loadRunnableTask(join(repoRoot(), 'tasks', 'helpdesk'));
  rolloutKey = `evalorder-${Date.now().toString(36)}`;
  dir = mkdtempSync(join(tmpdir(), 'sb-evalorder-'));
  const project = loadCompose(task.environment.composeFile);
  const images = await buildImages(project, task.id);
  stack = await upStack({ rolloutKey, taskId: task.id, project, images });
  const container = stack.services[task.environment.appService].container;
  const ctx = { rolloutKey, sandbox: sandboxBackend(), task, stack, container, workspace: task.environment.workspace, model: 'none', runDir: dir, prompt: '', log };
  await oracleAgent.prepare!(ctx);
  const l = oracleAgent.launch(ctx);
  await execDetached(container, l.script, { workdir: l.workdir, controlDir: '/tmp/.saasbench/evalorder' });
  for (let i = 0; i < 600; i++) {
    const b = await readFile(container, '/tmp/.saasbench/evalorder/exit_code');
    if (b) {
      assert.equal(b.toString().trim(), '0', 'the reference solution started');
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the reference solution did not start');
});

after(async () => {
  if (rolloutKey) await downStack(rolloutKey);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('helpdesk: the default is parallel (declared safe); 1 and 4 nodes at a time give identical statuses and scores', async () => {
  assert.equal(task.parallelSafe, true);
  assert.equal(planOf(task).defaultParallelism, 4);
  const quiet = log.child({ test: 'evaluation-order' });
  quiet.level = 'warn';
  const seq = await evaluateLocally({ task, stack, parallelism: 1, artifactsDir: join(dir, 'p1'), log: quiet, vars: { run_id: 'order-p1' } });
  const par = await evaluateLocally({ task, stack, parallelism: 4, artifactsDir: join(dir, 'p4'), log: quiet, vars: { run_id: 'order-p4' } });
  const view = (o: typeof seq.outcomes) => o.map((x) => `${x.nodeId} ${x.status} ${x.score}`).sort();
  assert.equal(seq.outcomes.length, task.dag.nodes.length);
  assert.deepEqual(view(par.outcomes), view(seq.outcomes));
  assert.ok(seq.outcomes.filter((o) => o.status === 'PASSED').length > 90, 'the reference solution passes (nearly) everything');
});
