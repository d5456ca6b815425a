import type { Json } from '../model/json';
import { resolvePartially } from '../primitives/template';
import { clockValues } from '../primitives/run-clock';
import { captureStep } from '../primitives/step-captures';
import type { NodeOutcome } from '../model/scores';
import { scoreTask } from '../scoring/task-score';
import { type TaskScore } from '../model/scores';
import { nodeExports, produced } from '../tasks/placeholders';
import type { Task } from '../model/task';
import { ancestorsInOrder, topoOrder } from '../dag/topo';

export interface DryRunStep {
  index: number;
  type: string;
  /** the inputs with every placeholder the dry run can resolve resolved */
  inputs: unknown;
  /** placeholder → where its value comes from at run time ("nothing produces it" when nowhere) */
  pending: Record<string, string>;
}

export interface DryRunNode {
  nodeId: string;
  prereqs: string[];
  after: string[];
  steps: DryRunStep[];
}

export interface DryRun {
  outcomes: NodeOutcome[];
  nodes: DryRunNode[];
  score: TaskScore;
}

/**
 * Walk a task's DAG without running anything: every node is DRY_RUN (score 0, maxScore kept in
 * the denominator, as the paper counts an administrative skip), every placeholder the task
 * variables and builtins resolve is resolved, and every other one names where its value will come
 * from (a capture of an earlier step, a prereq, a node it runs after) or says nothing produces it.
 */
export function dryRunTask(task: Task, extraVars: Record<string, Json> = {}): DryRun {
  const vars: Record<string, Json> = { run_id: 'dry-run', base_url: `http://${task.environment.appService}:${task.environment.appPort}`, ...clockValues(task.clock, new Date().toISOString()), ...task.variables, ...extraVars };
  const order = topoOrder(task.dag.nodes);
  const exportsOf = nodeExports(task.dag);
  const byId = new Map(task.dag.nodes.map((n) => [n.id, n]));
  const nodes: DryRunNode[] = [];
  for (const id of order) {
    const n = byId.get(id)!;
    const ancestors = ancestorsInOrder(id, task.dag.nodes, order);
    const sources = (name: string, stepIndex: number): string => {
      const head = name.split('.')[0];
      const inChain = n.chain.slice(0, stepIndex).findIndex((s) => {
        const p = produced(s.type, s.inputs);
        return p.exported.includes(head) || p.local.includes(head);
      });
      if (inChain >= 0) return `captured by step ${inChain} of this node`;
      const cap = (n.captures ?? []).find((c) => c.name === head && (captureStep(c, n.chain) ?? Infinity) < stepIndex);
      if (cap) return `captured by the node's captures from step ${captureStep(cap, n.chain)}`;
      const setup = (task.setup ?? []).findIndex((s) => s.exports.includes(head));
      if (setup >= 0) return `the task's declared setup[${setup}] (run once before the first node that reads it)`;
      const from = [...ancestors].reverse().find((a) => exportsOf.get(a)?.has(head));
      if (from) return `captured by prereq ${from}`;
      const after = (n.after ?? []).filter((a) => exportsOf.get(a)?.has(head));
      if (after.length) return `captured by ${after.join(', ')} (run before, not a prereq)`;
      return task.publishedIdCapture && /(^|_)(id|key|token|uuid)$/.test(head) ? 'an id the published id capture may copy from an earlier response' : 'nothing produces it';
    };
    const steps = n.chain.map((s, index) => {
      const r = resolvePartially(s.inputs, vars);
      return { index, type: s.type, inputs: r.value, pending: Object.fromEntries(r.missing.map((m) => [m, sources(m, index)])) };
    });
    nodes.push({ nodeId: id, prereqs: n.prereqs, after: n.after ?? [], steps });
  }
  const outcomes: NodeOutcome[] = nodes.map((d) => {
    const n = byId.get(d.nodeId)!;
    const pending = d.steps.reduce((a, s) => a + Object.keys(s.pending).length, 0);
    return {
      nodeId: n.id,
      status: 'DRY_RUN',
      score: 0,
      maxScore: n.scoring.maxScore,
      method: n.scoring.method,
      category: n.scoring.category,
      subcategory: n.scoring.subcategory,
      message: `dry run: ${n.chain.length} step(s) not executed${pending ? `; ${pending} placeholder(s) resolved at run time` : ''}`,
      exports: {},
      durationMs: 0,
    };
  });
  const trajectories = Object.fromEntries(Object.entries(task.dag.trajectories).map(([k, t]) => [k, t.nodeIds]));
  return { outcomes, nodes, score: scoreTask(outcomes, trajectories) };
}
