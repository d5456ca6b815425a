import type { Logger } from 'pino';
import type { Json } from '../model/json';
import { envFromStack } from '../primitives/env-from-stack';
import { runNode, type NodeRun } from '../primitives/run-chain';
import type { JudgePort } from '../primitives/types';
import type { NodeOutcome } from '../model/scores';
import { planOf } from '../tasks/plan';
import type { Task } from '../model/task';
import { DagScheduler } from '../dag/scheduler';
import type { StackHandle } from '../model/sandbox';
import type { SandboxBackend } from '../sandbox/backend';

export interface LocalEvaluation {
  outcomes: NodeOutcome[];
  runs: Map<string, NodeRun>;
  ms: number;
}

/**
 * Evaluate a task's DAG against a running stack in this process, with the same scheduler and chain
 * runner the workflow uses. For benchmarks and task authoring; rollouts go through Temporal.
 */
export async function evaluateLocally(opts: { sandbox?: SandboxBackend; task: Task; stack: StackHandle; parallelism: number; artifactsDir: string; log: Logger; judge?: JudgePort; vars?: Record<string, Json> }): Promise<LocalEvaluation> {
  const started = Date.now();
  const clockAt = new Date(started).toISOString();
  const sched = new DagScheduler(planOf(opts.task));
  const byId = new Map(opts.task.dag.nodes.map((n) => [n.id, n]));
  const runs = new Map<string, NodeRun>();
  const running = new Map<string, Promise<void>>();
  while (!sched.done()) {
    sched.takeBlocked();
    for (const p of sched.takeReady(opts.parallelism - running.size)) {
      const node = byId.get(p.id)!;
      const env = envFromStack(opts.task, opts.stack, `${opts.artifactsDir}/${p.id}`, opts.log.child({ node: p.id }), opts.sandbox);
      if (opts.judge) env.judge = opts.judge;
      const vars = { base_url: env.baseUrl, ...opts.task.variables, ...(opts.vars ?? {}), ...sched.contextFor(p.id) };
      const t0 = Date.now();
      const job = runNode(node, env, { judgeEnabled: !!opts.judge, vars, clockAt }).then((run) => {
        runs.set(p.id, run);
        sched.complete({ nodeId: p.id, status: run.status, score: run.score, maxScore: p.maxScore, method: p.method, category: p.category, subcategory: p.subcategory, message: run.message, exports: run.exports, durationMs: Date.now() - t0 });
      });
      running.set(p.id, job.finally(() => running.delete(p.id)));
    }
    if (running.size === 0) {
      if (sched.done()) break;
      throw new Error('DAG scheduler stalled: no node can run');
    }
    await Promise.race(running.values());
  }
  return { outcomes: sched.results(), runs, ms: Date.now() - started };
}
