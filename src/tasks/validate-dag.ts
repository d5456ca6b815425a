import type { InputIssue } from '../errors';
import { findPrimitive, isKnownPublishedType } from '../primitives/registry';
import { leavesResponse } from '../primitives/step-captures';
import { RawDagSchema, RawNodeSchema, type Dag, type DagNode } from '../model/dag';
import { zodInputIssues } from '../zod-issues';

export interface DagCheck {
  dag: Dag;
  issues: InputIssue[];
  /** published primitive types this build cannot run yet, with how often each is used */
  unsupported: Record<string, number>;
}

/**
 * Check a dag.json value: shape, unique ids, known prereqs, no cycles, methods, maxScore > 0 and
 * every primitive's inputs against that primitive's schema. Returns every issue, not just the first.
 */
export function checkDag(raw: unknown, file: string, extraTrajectories?: Record<string, string[]>, opts: { allowZeroMaxScore?: boolean; allowUnknownPrereqs?: boolean } = {}): DagCheck {
  const issues: InputIssue[] = [];
  const unsupported: Record<string, number> = {};
  const top = RawDagSchema.safeParse(raw);
  if (!top.success) return { dag: { nodes: [], trajectories: {} }, issues: zodInputIssues(top.error, file, ''), unsupported };

  const nodes: DagNode[] = [];
  const seen = new Map<string, number>();
  top.data.nodes.forEach((rawNode, i) => {
    const at = `nodes[${i}]`;
    const id = (rawNode as { id?: unknown })?.id;
    const nodeId = typeof id === 'string' ? id : undefined;
    const parsed = RawNodeSchema.safeParse(rawNode);
    if (!parsed.success) {
      issues.push(...zodInputIssues(parsed.error, file, at, nodeId));
      return;
    }
    const n = parsed.data;
    if (seen.has(n.id)) issues.push({ file, path: `${at}.id`, nodeId: n.id, message: `duplicate node id (first at nodes[${seen.get(n.id)}])` });
    seen.set(n.id, i);
    // the paper's M_v > 0; one published node (gmdnohlg) has 0 and is loaded as worth nothing
    if (n.scoring.maxScore === 0 && !opts.allowZeroMaxScore) issues.push({ file, path: `${at}.scoring.maxScore`, nodeId: n.id, message: 'maxScore must be greater than 0' });
    n.primitive_chain.forEach((step, j) => {
      const stepAt = `${at}.primitive_chain[${j}]`;
      const prim = findPrimitive(step.type);
      if (!prim) {
        if (isKnownPublishedType(step.type)) unsupported[step.type] = (unsupported[step.type] ?? 0) + 1;
        else issues.push({ file, path: `${stepAt}.type`, nodeId: n.id, message: `unknown primitive type "${step.type}"` });
        return;
      }
      const checked = prim.schema.safeParse(step.inputs);
      if (!checked.success) issues.push(...zodInputIssues(checked.error, file, `${stepAt}.inputs`, n.id));
    });
    (n.captures ?? []).forEach((c, k) => {
      if (c.step === undefined) return;
      const step = n.primitive_chain[c.step];
      if (!step) issues.push({ file, path: `${at}.captures[${k}].step`, nodeId: n.id, message: `step ${c.step} is not in the chain (${n.primitive_chain.length} steps)` });
      else if (findPrimitive(step.type) && !leavesResponse(step.type)) issues.push({ file, path: `${at}.captures[${k}].step`, nodeId: n.id, message: `step ${c.step} (${step.type}) leaves no response to capture from` });
    });
    if (n.scoring.method === 'llm-judge') {
      const judges = n.primitive_chain.filter((s) => ['P17', 'LLM_JUDGE'].includes(s.type.toUpperCase())).length;
      if (judges !== 1) issues.push({ file, path: `${at}.primitive_chain`, nodeId: n.id, message: `an llm-judge node needs exactly one P17 step (found ${judges})` });
    }
    nodes.push({
      id: n.id,
      description: n.description ?? '',
      prereqs: n.prereqs,
      chain: n.primitive_chain.map((s) => ({ type: s.type, inputs: s.inputs, ...(s.notes ? { notes: s.notes } : {}) })),
      scoring: { category: n.scoring.category, subcategory: n.scoring.subcategory ?? '', method: n.scoring.method, maxScore: n.scoring.maxScore },
      complexityTier: n.complexity_tier,
      ...(n.notes ? { notes: n.notes } : {}),
      ...(n.id_capture !== undefined ? { idCapture: n.id_capture } : {}),
      ...(n.run_last ? { runLast: true } : {}),
      ...(n.captures?.length ? { captures: n.captures } : {}),
    });
  });

  const index = new Map(nodes.map((n, i) => [n.id, i]));
  nodes.forEach((n) => {
    n.prereqs.forEach((p, k) => {
      // a published DAG may name a prereq that is not a node (cvyocaao's dag_cv2.json): it never
      // passes, so the node is always SKIPPED_DEPENDENCY (the scheduler's rule), counted as unreachable
      if (!index.has(p) && !opts.allowUnknownPrereqs) issues.push({ file, path: `nodes[${seen.get(n.id)}].prereqs[${k}]`, nodeId: n.id, message: `unknown prereq "${p}"` });
      if (p === n.id) issues.push({ file, path: `nodes[${seen.get(n.id)}].prereqs[${k}]`, nodeId: n.id, message: 'a node cannot depend on itself' });
    });
  });
  const cycle = findCycle(nodes);
  if (cycle) issues.push({ file, path: `nodes[${seen.get(cycle[0])}].prereqs`, nodeId: cycle[0], message: `dependency cycle: ${cycle.join(' -> ')}` });

  const trajectories: Dag['trajectories'] = {};
  const rawTraj = { ...(top.data.trajectories ?? {}) } as Record<string, { description?: string; node_ids?: string[]; nodes?: string[] }>;
  for (const [name, ids] of Object.entries(extraTrajectories ?? {})) rawTraj[name] ??= { node_ids: ids };
  for (const [name, t] of Object.entries(rawTraj)) {
    const ids = t.node_ids ?? t.nodes ?? [];
    ids.forEach((id, k) => {
      if (!index.has(id)) issues.push({ file, path: `trajectories.${name}.node_ids[${k}]`, message: `trajectory names unknown node "${id}"` });
    });
    trajectories[name] = { description: t.description ?? '', nodeIds: ids.filter((id) => index.has(id)) };
  }
  for (const n of nodes) {
    const raw = top.data.nodes[seen.get(n.id)!] as { trajectories?: string[] };
    for (const name of raw.trajectories ?? []) (trajectories[name] ??= { description: '', nodeIds: [] }).nodeIds.push(n.id);
  }
  return { dag: { nodes, trajectories }, issues, unsupported };
}

/** Returns one cycle as a list of ids (first id repeated at the end), or null. */
export function findCycle(nodes: readonly DagNode[]): string[] | null {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    const s = state.get(id);
    if (s === 2) return null;
    if (s === 1) return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, 1);
    stack.push(id);
    for (const p of byId.get(id)?.prereqs ?? []) {
      if (!byId.has(p)) continue;
      const c = visit(p);
      if (c) return c;
    }
    stack.pop();
    state.set(id, 2);
    return null;
  };
  for (const n of nodes) {
    const c = visit(n.id);
    if (c) return c.reverse();
  }
  return null;
}

