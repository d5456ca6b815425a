import type { Json } from '../model/json';
import type { DagNode } from '../model/dag';
import { continuesAfterFailure, scoreNode } from '../scoring/node-score';
import type { NodeStatus } from '../model/scores';
import { releaseChain } from './chain-resources';
import { findPrimitive } from './registry';
import { writeResponseLog } from './response-log';
import { applyCaptures, type CaptureOutcome } from './step-captures';
import { placeholdersIn, resolveTemplates } from './template';
import { clockValues } from './run-clock';
import type { ChainState, PrimitiveEnv, PrimitiveOutcome } from './types';
import { firstZodIssue } from '../zod-issues';
import { isInfraFailure } from '../errors';

export interface StepRecord {
  index: number;
  type: string;
  /** inputs after placeholder resolution (what was actually sent/queried) */
  inputs: unknown;
  passed: boolean;
  message: string;
  data?: Record<string, unknown>;
  /** what the node's `captures` took from this step's response */
  captures?: CaptureOutcome;
  durationMs: number;
}

export interface NodeRun {
  status: NodeStatus;
  score: number;
  message: string;
  steps: StepRecord[];
  exports: Record<string, Json>;
  /** the run's date/time variables this node saw (the task's clock family; the same for every node of a run) */
  clock?: { family: string; at: string; values: Record<string, string> };
  /** declared setups whose values this node read (names), and why any failed */
  setup?: { names: string[]; failures: string[] };
  error?: { name: string; message: string; stack?: string };
}

export interface RunNodeOptions {
  /** false when the judge is disabled or has no key: llm-judge nodes become SKIPPED_LLM without running */
  judgeEnabled: boolean;
  /** variables visible to the chain: task variables + exports of prereqs */
  vars: Record<string, Json>;
  /** the evaluation's start (ISO): the instant of the task's clock variables, the same for every node of a run */
  clockAt?: string;
}

/**
 * Run one node's primitive chain and score it. Primitive failures are results; an unexpected
 * exception of the system under test (or of the check's own input) makes the node ERROR. Trouble of
 * the host (InfraError, SandboxInfraError: a Docker or network hiccup) is re-thrown: the activity's
 * retry policy re-runs the node from scratch, and only after the retries is it the node's ERROR.
 */
export async function runNode(node: DagNode, env: PrimitiveEnv, opts: RunNodeOptions): Promise<NodeRun> {
  const { method, maxScore } = node.scoring;
  if (method === 'llm-judge' && !opts.judgeEnabled) {
    return { status: 'SKIPPED_LLM', score: 0, message: 'LLM judge disabled or unavailable: node left out of both sums', steps: [], exports: {} };
  }
  const clock = env.runClock ? { family: env.runClock, at: opts.clockAt ?? new Date().toISOString() } : undefined;
  const clockVars = clock ? clockValues(clock.family, clock.at) : {};
  const state: ChainState = { vars: { ...clockVars, ...opts.vars }, exports: {} };
  const setup = await setupValues(node, env, state.vars);
  Object.assign(state.vars, setup?.values ?? {});
  const recorded = { ...(clock ? { clock: { ...clock, values: clockVars } } : {}), ...(setup ? { setup: { names: setup.names, failures: setup.failures } } : {}) };
  const steps: StepRecord[] = [];
  const passes: boolean[] = [];
  let judge: { skipped: true } | { skipped: false; score: number } | undefined;
  try {
    for (const [index, step] of node.chain.entries()) {
      const started = Date.now();
      const before = state.last;
      const outcome = await runStep(step.type, step.inputs, env, state, node.id, node.prereqs, node.idCapture);
      const captures = node.captures ? applyCaptures(node.captures, index, state, before, node.id) : undefined;
      steps.push({ index, type: step.type, inputs: outcome.resolved, passed: outcome.result.passed, message: outcome.result.message, data: outcome.result.data, ...(captures ? { captures } : {}), durationMs: Date.now() - started });
      passes.push(outcome.result.passed);
      if (outcome.result.judge) judge = outcome.result.judge.skipped ? { skipped: true } : { skipped: false, score: outcome.result.judge.score };
      if (!outcome.result.passed && !continuesAfterFailure(method)) break;
    }
  } catch (err) {
    if (isInfraFailure(err)) throw err;
    const e = err as Error;
    return { status: 'ERROR', score: 0, message: `${e.name}: ${e.message}`, steps, exports: state.exports, ...recorded, error: { name: e.name, message: e.message, stack: e.stack } };
  } finally {
    // a browser page kept open by BROWSER_INTERACT for later steps of this chain
    await releaseChain(state);
  }
  // what this chain's requests answered, for the judge of a dependent node (P17 prereq_responses)
  try {
    writeResponseLog(env.artifactsDir, state.responses);
  } catch (err) {
    env.log.warn({ err: (err as Error).message }, 'could not write the response log');
  }
  const { status, score } = scoreNode({ method, maxScore, chainLength: node.chain.length, passes, judge });
  // captures of any outcome: dependents only run after PASSED prereqs, while nodes that run `after`
  // this one (the published run-wide context) see what it captured whatever its status
  const failed = setup?.failures.length ? `; declared setup failed: ${setup.failures.join('; ')}` : '';
  return { status, score, message: `${summarize(status, steps, node.chain.length)}${failed}`, steps, exports: state.exports, ...recorded };
}

/** The values of the task's declared setups that this chain reads and does not have yet. */
async function setupValues(node: DagNode, env: PrimitiveEnv, vars: Record<string, Json>): Promise<{ names: string[]; values: Record<string, Json>; failures: string[] } | undefined> {
  if (!env.taskSetup) return undefined;
  const names = [...placeholdersIn(node.chain.map((s) => s.inputs))].map((n) => n.split('.')[0]).filter((n, i, a) => a.indexOf(n) === i && vars[n] === undefined && env.taskSetup!.provides(n));
  if (!names.length) return undefined;
  return { names, ...(await env.taskSetup.values(names, env, vars)) };
}

async function runStep(type: string, rawInputs: Record<string, unknown>, env: PrimitiveEnv, state: ChainState, nodeId: string, prereqs: readonly string[] = [], idCapture?: boolean): Promise<{ resolved: unknown; result: PrimitiveOutcome }> {
  const primitive = findPrimitive(type);
  if (!primitive) return { resolved: rawInputs, result: { passed: false, message: `primitive ${type} is not supported` } };
  let resolved: unknown;
  try {
    const own = primitive.ownPlaceholders?.(rawInputs);
    resolved = resolveTemplates(rawInputs, { ...state.vars, ...lastVars(state) }, own?.length ? { keep: new Set(own) } : {});
  } catch (err) {
    return { resolved: rawInputs, result: { passed: false, message: (err as Error).message } };
  }
  const parsed = primitive.schema.safeParse(resolved);
  if (!parsed.success) {
    const first = firstZodIssue(parsed.error);
    return { resolved, result: { passed: false, message: `inputs after templating are invalid at ${first.path || '(root)'}: ${first.message}` } };
  }
  const before = state.last;
  const result = await primitive.run(parsed.data, {
    env,
    state,
    nodeId,
    prereqs,
    ...(idCapture === false ? { idCapture: false } : {}),
    setVar(name, value) {
      state.vars[name] = value;
      state.exports[name] = value;
    },
  });
  if (state.last && state.last !== before) (state.responses ??= []).push(state.last);
  return { resolved, result };
}

/** `{{last_status}}` and `{{last_body.x}}` let a chain refer to its own previous response. */
function lastVars(state: ChainState): Record<string, Json> {
  if (!state.last) return {};
  return { last_status: state.last.status, last_body: (state.last.body ?? null) as Json };
}

function summarize(status: NodeStatus, steps: StepRecord[], k: number): string {
  const passed = steps.filter((s) => s.passed).length;
  const firstFail = steps.find((s) => !s.passed);
  if (status === 'PASSED' && passed === k) return `all ${k} primitives passed`;
  const head = `${passed}/${k} primitives passed`;
  return firstFail ? `${head}; first failure ${firstFail.type}#${firstFail.index}: ${firstFail.message}` : head;
}
