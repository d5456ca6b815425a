import type { Logger } from 'pino';
import type { Json } from '../model/json';
import { envFromStack } from '../primitives/env-from-stack';
import { runNode, type NodeRun } from '../primitives/run-chain';
import type { JudgePort } from '../primitives/types';
import type { NodeOutcome } from '../model/scores';
import { planOf } from '../tasks/plan';
import type { Task } from '../model/task';
import { runDag } from '../dag/run-dag';
import { describeFailure, isInfraFailure } from '../errors';
import type { StackHandle } from '../model/sandbox';
import type { SandboxBackend } from '../sandbox/backend';
import type { IncrementalPlan } from './incremental';

export interface LocalEvaluation {
  outcomes: NodeOutcome[];
  runs: Map<string, NodeRun>;
  ms: number;
}

/**
 * Evaluate a task's DAG against a running stack in this process, with the same scheduler and chain
 * runner the workflow uses. For benchmarks and task authoring; rollouts go through Temporal.
 */
export async function evaluateLocally(opts: { sandbox?: SandboxBackend; task: Task; stack: StackHandle; parallelism: number; artifactsDir: string; log: Logger; judge?: JudgePort; vars?: Record<string, Json>; incremental?: IncrementalPlan }): Promise<LocalEvaluation> {
  const started = Date.now();
  const clockAt = new Date(started).toISOString();
  const byId = new Map(opts.task.dag.nodes.map((n) => [n.id, n]));
  const runs = new Map<string, NodeRun>();
  const outcomes = await runDag(planOf(opts.task), {
    parallelism: opts.parallelism,
    evaluate: async (p, context) => {
      // incremental re-scoring: an unchanged node keeps its last outcome (src/evaluation/incremental.ts)
      const why = opts.incremental ? opts.incremental.decide(p) : null;
      if (opts.incremental && why === null) return opts.incremental.reuse(p.id);
      const env = envFromStack(opts.task, opts.stack, `${opts.artifactsDir}/${p.id}`, opts.log.child({ node: p.id }), opts.sandbox);
      if (opts.judge) env.judge = opts.judge;
      const vars = { base_url: env.baseUrl, ...opts.task.variables, ...(opts.vars ?? {}), ...context };
      const t0 = Date.now();
      // no retry policy here: host trouble is the node's ERROR, with what went wrong
      const run = await runNode(byId.get(p.id)!, env, { judgeEnabled: !!opts.judge, vars, clockAt }).catch((err: unknown): NodeRun => {
        if (!isInfraFailure(err)) throw err;
        return { status: 'ERROR', score: 0, message: describeFailure(err), steps: [], exports: {} };
      });
      runs.set(p.id, run);
      const outcome: NodeOutcome = { nodeId: p.id, status: run.status, score: run.score, maxScore: p.maxScore, method: p.method, category: p.category, subcategory: p.subcategory, message: run.message, exports: run.exports, durationMs: Date.now() - t0 };
      opts.incremental?.evaluatedAs(outcome, why ?? '');
      return outcome;
    },
    onOutcome: (o) => opts.incremental?.observe(o),
    stalled: (message) => new Error(message),
  });
  return { outcomes, runs, ms: Date.now() - started };
}
