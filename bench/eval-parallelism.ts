/**
 * Evaluation speed with node parallelism 1 vs 8: one helpdesk stack with the reference solution
 * running, the same DAG evaluated twice in this process, side by side. Prints both times, their
 * ratio, and whether every node got the same status.
 */
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { oracleAgent } from '../src/agents/oracle';
import { evaluateLocally } from '../src/evaluation/evaluate-local';
import { log } from '../src/log';
import { buildImages, downStack, execDetached, loadCompose, readFile, sandboxBackend, upStack } from '../src/sandbox';
import { loadRunnableTask } from '../src/tasks/load';
import { repoRoot } from '../src/paths';

async function waitExit(container: string, controlDir: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const b = await readFile(container, `${controlDir}/exit_code`);
    if (b) return b.toString().trim();
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('reference solution did not start');
}

async function main(): Promise<void> {
  const task = loadRunnableTask(join(repoRoot(), 'tasks', 'helpdesk'));
  const rolloutKey = `bench-eval-${Date.now().toString(36)}`;
  const project = loadCompose(task.environment.composeFile);
  const images = await buildImages(project, task.id);
  const stack = await upStack({ rolloutKey, taskId: task.id, project, images });
  try {
    const container = stack.services[task.environment.appService].container;
    const ctx = { rolloutKey, sandbox: sandboxBackend(), task, stack, container, workspace: task.environment.workspace, model: 'none', runDir: mkdtempSync(join(tmpdir(), 'bench-')), prompt: '', log };
    await oracleAgent.prepare!(ctx);
    const l = oracleAgent.launch(ctx);
    await execDetached(container, l.script, { workdir: l.workdir, controlDir: '/tmp/.saasbench/bench' });
    const code = await waitExit(container, '/tmp/.saasbench/bench');
    if (code !== '0') throw new Error(`reference solution start.sh exited ${code}`);

    const artifacts = mkdtempSync(join(tmpdir(), 'bench-artifacts-'));
    const quiet = log.child({ bench: true });
    quiet.level = 'warn';
    const p1 = await evaluateLocally({ task, stack, parallelism: 1, artifactsDir: artifacts, log: quiet, vars: { run_id: 'p1' } });
    const p8 = await evaluateLocally({ task, stack, parallelism: 8, artifactsDir: artifacts, log: quiet, vars: { run_id: 'p8' } });
    const s1 = Object.fromEntries(p1.outcomes.map((o) => [o.nodeId, o.status]));
    const s8 = Object.fromEntries(p8.outcomes.map((o) => [o.nodeId, o.status]));
    const differing = Object.keys(s1).filter((k) => s1[k] !== s8[k]);
    const passed = (o: typeof p1.outcomes) => o.filter((x) => x.status === 'PASSED').length;
    console.log(`helpdesk DAG: ${p1.outcomes.length} nodes (judge disabled)`);
    console.log(`parallelism 1: ${(p1.ms / 1000).toFixed(2)} s  (${passed(p1.outcomes)} passed)`);
    console.log(`parallelism 8: ${(p8.ms / 1000).toFixed(2)} s  (${passed(p8.outcomes)} passed)`);
    console.log(`speed-up (p1 / p8): ${(p1.ms / p8.ms).toFixed(2)}x`);
    console.log(differing.length ? `node statuses DIFFER on: ${differing.join(', ')}` : 'node statuses identical: yes');
    if (differing.length) process.exitCode = 1;
  } finally {
    await downStack(rolloutKey);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
