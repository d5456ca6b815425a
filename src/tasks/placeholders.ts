import type { InputIssue } from '../errors';
import { jsonPath } from '../model/json';
import { findPrimitive } from '../primitives/registry';
import { ID_LIKE } from '../primitives/published-id-capture';
import { captureStep } from '../primitives/step-captures';
import { clockNames } from '../primitives/run-clock';
import type { Dag } from '../model/dag';
import { ancestorsInOrder, topoOrder } from '../dag/topo';

/** Variables every chain has (src/activities/evaluate-node.ts). */
export const BUILTIN_VARS = ['run_id', 'base_url'];

/**
 * The names a task provides to every chain besides the builtins: its variables, its clock's
 * date/time variables and what its declared setups export.
 */
export function knownVariables(t: { variables: Record<string, unknown>; clock?: string; setup?: readonly { exports: readonly string[] }[] }): string[] {
  return [...Object.keys(t.variables), ...clockNames(t.clock), ...(t.setup ?? []).flatMap((s) => s.exports)];
}

/** Step types whose response the published-compatibility id capture reads. */
const HTTP_TYPES = new Set(['P04', 'HTTP_REQUEST', 'P05', 'API_CRUD', 'P14', 'PERMISSION_CHECK', 'P16', 'RESPONSE_TIME_CHECK', 'P23', 'FILE_UPLOAD_DOWNLOAD', 'P24', 'QUEUE_JOB_CHECK', 'P26', 'SEARCH_QUERY', 'P27', 'WEBHOOK_DELIVERY', 'P28', 'EMAIL_DELIVERY', 'P29', 'MULTI_STEP_WORKFLOW']);

const NAMESPACE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;

export interface PlaceholderCheckOptions {
  file: string;
  /** names of the task's seeded variables */
  variables: readonly string[];
  builtins?: readonly string[];
  /** published tasks: id-like names may come from the compatibility id capture of an earlier HTTP step */
  publishedIdCapture?: boolean;
}

function* placeholders(v: unknown, path: (string | number)[] = []): Generator<{ name: string; path: (string | number)[] }> {
  if (typeof v === 'string') {
    for (const m of v.matchAll(PLACEHOLDER)) yield { name: m[1], path };
  } else if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) yield* placeholders(x, [...path, i]);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) yield* placeholders(x, [...path, k]);
  }
}

export function produced(type: string, inputs: Record<string, unknown>): { exported: string[]; local: string[] } {
  const p = findPrimitive(type);
  try {
    return p?.produces?.(inputs) ?? { exported: [], local: [] };
  } catch {
    return { exported: [], local: [] };
  }
}

/** Names a primitive fills itself (Primitive.ownPlaceholders). */
function ownPlaceholders(type: string, inputs: Record<string, unknown>): string[] {
  try {
    return findPrimitive(type)?.ownPlaceholders?.(inputs) ?? [];
  } catch {
    return [];
  }
}

/** May the compatibility capture have produced `name` (`topic_id`, `id`, `category.id`)? */
function compatName(name: string): boolean {
  const [head, ...rest] = name.split('.');
  return ID_LIKE.test(head) || (rest.length === 1 && ID_LIKE.test(rest[0]));
}

export interface Unresolved {
  nodeId: string;
  /** the placeholder name as written (`a.b`) */
  name: string;
  /** JSON path of the string that holds it */
  path: string;
  ancestors: string[];
}

/**
 * Every `{{name}}` a step uses that nothing can produce before it runs: an earlier step of its
 * chain (capture, store_as, capture_stdout_as, `previous`, …), a transitive prereq's exported
 * captures (also as `{{PREREQ_ID.name}}`), a node it runs after (`after`: the published global
 * context, see published/context-edges.ts), the task variables, or a builtin.
 */
export function unresolvedPlaceholders(dag: Dag, rawNodes: readonly unknown[], o: Omit<PlaceholderCheckOptions, 'file'>): Unresolved[] {
  const out: Unresolved[] = [];
  const base = new Set([...o.variables, ...(o.builtins ?? BUILTIN_VARS)]);
  const indexOf = new Map<string, number>();
  rawNodes.forEach((n, i) => {
    const id = (n as { id?: unknown })?.id;
    if (typeof id === 'string' && !indexOf.has(id)) indexOf.set(id, i);
  });
  const exportsOf = nodeExports(dag);
  const httpIn = new Map<string, boolean>();
  // a node with id_capture: false (published no_entity_capture) gives its dependents no compat ids
  for (const n of dag.nodes) httpIn.set(n.id, n.idCapture !== false && n.chain.some((s) => HTTP_TYPES.has(s.type.toUpperCase())));
  const order = topoOrder(dag.nodes);
  for (const n of dag.nodes) {
    const ancestors = ancestorsInOrder(n.id, dag.nodes, order);
    const available = new Set(base);
    const namespaces = new Map<string, Set<string>>();
    let http = false;
    for (const a of ancestors) {
      for (const v of exportsOf.get(a) ?? []) available.add(v);
      if (NAMESPACE.test(a) && exportsOf.get(a)?.size) namespaces.set(a, exportsOf.get(a)!);
      http ||= !!httpIn.get(a);
    }
    for (const a of n.after ?? []) {
      for (const v of exportsOf.get(a) ?? []) available.add(v);
      if (NAMESPACE.test(a) && exportsOf.get(a)?.size) namespaces.set(a, exportsOf.get(a)!);
    }
    const i = indexOf.get(n.id);
    n.chain.forEach((step, j) => {
      const seen = new Set<string>();
      const own = new Set(ownPlaceholders(step.type, step.inputs));
      for (const ph of placeholders(step.inputs)) {
        const [head, second] = ph.name.split('.');
        if (own.has(head) || available.has(head) || (o.publishedIdCapture && http && compatName(ph.name))) continue;
        // `{{NODE_ID.var}}`: a capture of that ancestor, by its namespace
        if (second !== undefined && namespaces.get(head)?.has(second)) continue;
        const where = jsonPath(ph.path, `nodes[${i ?? '?'}].primitive_chain[${j}].inputs`);
        if (seen.has(`${ph.name}@${where}`)) continue;
        seen.add(`${ph.name}@${where}`);
        out.push({ nodeId: n.id, name: ph.name, path: where, ancestors });
      }
      const p = produced(step.type, step.inputs);
      for (const v of [...p.exported, ...p.local]) available.add(v);
      for (const c of n.captures ?? []) if (captureStep(c, n.chain) === j) available.add(c.name);
      http ||= n.idCapture !== false && HTTP_TYPES.has(step.type.toUpperCase());
    });
  }
  return out;
}

/** The variables each node exports to its dependents (what its steps' `produces` declare). */
export function nodeExports(dag: Dag): Map<string, Set<string>> {
  const exportsOf = new Map<string, Set<string>>();
  for (const n of dag.nodes) {
    const ex = new Set<string>();
    for (const s of n.chain) for (const v of produced(s.type, s.inputs).exported) ex.add(v);
    for (const c of n.captures ?? []) if (!c.local) ex.add(c.name);
    exportsOf.set(n.id, ex);
  }
  return exportsOf;
}

/**
 * Load-time check that every `{{name}}` a step uses can be produced before it runs (see
 * unresolvedPlaceholders). One issue per placeholder and place, naming the node and the JSON path
 * of the string that holds it. The runtime check stays: a capture that the app did not deliver
 * still fails the step naming the variable.
 */
export function checkPlaceholders(dag: Dag, rawNodes: readonly unknown[], o: PlaceholderCheckOptions): InputIssue[] {
  const builtins = [...(o.builtins ?? BUILTIN_VARS)].join(', ');
  return unresolvedPlaceholders(dag, rawNodes, o).map((u) => ({
    file: o.file,
    path: u.path,
    nodeId: u.nodeId,
    message: `placeholder {{${u.name}}} is produced by no earlier step of this chain, none of ${u.ancestors.length ? `its prereqs (${u.ancestors.join(', ')})` : 'its prereqs (none)'}, no task variable and no builtin (${builtins})`,
  }));
}
