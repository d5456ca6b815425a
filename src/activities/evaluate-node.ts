import { join } from 'node:path';
import { config } from '../config';
import { rolloutLogger } from '../log';
import { envFromStack } from '../primitives/env-from-stack';
import { runNode } from '../primitives/run-chain';
import { nodeFileName, readJsonIfExists, writeJson } from '../runs/files';
import type { NodeOutcome } from '../model/scores';
import { judgeFor } from '../judge/judge-port';
import type { EvaluateNodeInput } from '../model/rollout';
import { taskFor } from './task-cache';
import { withHeartbeat } from './heartbeat';
import { runIdOf } from '../evaluation/run-id';

/** The per-node record on disk: the outcome plus every primitive's resolved inputs and evidence. */
export interface NodeRecord extends NodeOutcome {
  taskHash: string;
  description: string;
  inputsVars: string[];
  steps: unknown[];
  /** the run's date/time variables (one instant per evaluation) */
  clock?: { family: string; at: string; values: Record<string, string> };
  /** declared setups whose values the node read */
  setup?: { names: string[]; failures: string[] };
  error?: unknown;
  finishedAt: string;
}

/**
 * Evaluate one DAG node against the running stack. Runs on the rollout's host. If a previous
 * attempt already recorded this node (the worker died after writing), that record is the result.
 */
export async function evaluateNode(i: EvaluateNodeInput): Promise<NodeOutcome> {
  return withHeartbeat(() => evaluate(i));
}

async function evaluate(i: EvaluateNodeInput): Promise<NodeOutcome> {
  const file = join(i.ref.runDir, 'nodes', nodeFileName(i.nodeId));
  const previous = readJsonIfExists<NodeRecord>(file);
  if (previous && previous.taskHash === i.ref.taskHash) return outcomeOf(previous);

  const task = taskFor(i.ref.taskDir, i.ref.taskHash);
  const node = task.dag.nodes.find((n) => n.id === i.nodeId);
  if (!node) throw new Error(`node ${i.nodeId} is not in task ${task.id}`);
  const log = rolloutLogger(i.ref.rolloutKey, { node: i.nodeId });
  const env = envFromStack(task, i.ref.stack, join(i.ref.runDir, 'artifacts', i.nodeId), log);
  const judge = judgeFor(i.judge, config.judge());
  if (judge) env.judge = judge;
  const vars = { run_id: runIdOf(i.ref.rolloutKey), base_url: env.baseUrl, ...task.variables, ...i.vars };
  const started = Date.now();
  const run = await runNode(node, env, { judgeEnabled: !!judge, vars, ...(i.clockAt ? { clockAt: i.clockAt } : {}) });
  const record: NodeRecord = {
    nodeId: node.id,
    description: node.description,
    status: run.status,
    score: run.score,
    maxScore: node.scoring.maxScore,
    method: node.scoring.method,
    category: node.scoring.category,
    subcategory: node.scoring.subcategory,
    message: run.message,
    exports: run.exports,
    durationMs: Date.now() - started,
    taskHash: i.ref.taskHash,
    inputsVars: Object.keys(vars),
    steps: run.steps,
    ...(run.clock ? { clock: run.clock } : {}),
    ...(run.setup ? { setup: run.setup } : {}),
    error: run.error,
    finishedAt: new Date().toISOString(),
  };
  writeJson(file, record);
  log.info({ status: run.status, score: run.score, max: node.scoring.maxScore }, 'node evaluated');
  return outcomeOf(record);
}

function outcomeOf(r: NodeRecord): NodeOutcome {
  const { nodeId, status, score, maxScore, method, category, subcategory, message, exports, durationMs } = r;
  return { nodeId, status, score, maxScore, method, category, subcategory, message: message.slice(0, 500), exports, durationMs };
}
