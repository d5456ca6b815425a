import type { InputIssue } from '../../../errors';
import { dbQueryDialect } from './db-query';
import { dbSchemaDialect } from './db-schema';
import { execDialect } from './exec';
import { filesDialect } from './files';
import { normalizeNode, normalizeStepShell } from './node';
import { stepReferences } from './step-refs';
import { P04_DIALECT } from './p04';
import { P05_DIALECT } from './p05';
import { P14_DIALECT } from './p14';
import { P16_DIALECT, P23_DIALECT } from './p16-p23';
import { P27_DIALECT } from './p27';
import { P29_DIALECT } from './p29';
import { WORKFLOW_DIALECTS } from './workflow';
import { judgeDialect } from './judge';
import { P13_DIALECT } from './p13';
import type { DialectContext, SpellingUse, StepDialect } from './types';
import { browserDialect } from './browser';
import { realtimeDialect } from './realtime';
import { graphqlDialect } from './graphql';
import { authFlowsDialect } from './auth-flows';
import { isObject, takeNotes, type Inputs } from './util';
import { P07Dialect } from './json-assert';
import { P06Dialect } from './json-schema';
import { P15Dialect } from './status-code';

/**
 * Every published type's dialect. Adding one = one module + one line here. A type without a
 * dialect passes through unchanged and meets the canonical schema as it is.
 */
const DIALECTS: StepDialect[] = [
  filesDialect, // P01–P03
  P06Dialect,
  P07Dialect,
  dbQueryDialect, // P08
  dbSchemaDialect, // P09–P11
  execDialect, // P12
  P15Dialect,
  P04_DIALECT,
  P05_DIALECT,
  P14_DIALECT,
  P16_DIALECT,
  P23_DIALECT,
  P27_DIALECT,
  P29_DIALECT,
  ...WORKFLOW_DIALECTS,
  P13_DIALECT,
  judgeDialect,
  browserDialect,
  realtimeDialect,
  graphqlDialect,
  authFlowsDialect,
];

const byType = new Map<string, StepDialect>();
for (const d of DIALECTS) for (const t of d.types) byType.set(t.toUpperCase(), d);

export interface NormalizedDag {
  /** the DAG in the canonical (native dag.json) shape */
  dag: { nodes: unknown[]; trajectories?: unknown };
  issues: InputIssue[];
  spellings: SpellingUse[];
}

/** Top-level keys of published DAGs that are summaries or metadata (totals are recomputed; see scoring-config.ts). */
const TOP_META = ['meta', '_meta', 'scoring_config', 'scoring_config_summary', '_self_check', 'version', 'total_nodes', 'total_max_score', 'categories'];

/**
 * Read a published dag.json in any of its dialects into the canonical shape. Issues point at the
 * published file's JSON paths; the canonical result is then checked by checkDag like a native DAG.
 */
export function normalizePublishedDag(raw: unknown, o: { task: string; file: string }): NormalizedDag {
  const issues: InputIssue[] = [];
  const spellings: SpellingUse[] = [];
  if (!isObject(raw) || !Array.isArray(raw.nodes)) {
    return { dag: { nodes: isObject(raw) && Array.isArray(raw.nodes) ? raw.nodes : [] }, issues: [{ file: o.file, path: 'nodes', message: 'a DAG is an object with a "nodes" list' }], spellings };
  }
  for (const k of Object.keys(raw)) {
    if (k !== 'nodes' && k !== 'trajectories' && !TOP_META.includes(k)) issues.push({ file: o.file, path: k, message: `unknown top-level key "${k}"` });
  }
  const dagText = JSON.stringify(raw.nodes);
  const nodes = raw.nodes.map((rawNode, i) => {
    const at = `nodes[${i}]`;
    if (!isObject(rawNode)) return rawNode;
    const nodeId = typeof rawNode.id === 'string' ? rawNode.id : `#${i}`;
    const ctx = context(o.task, nodeId, at, spellings, issues, o.file, 'node');
    const node = normalizeNode(rawNode, at, ctx, issues, o.file);
    if (Array.isArray(node.primitive_chain)) {
      const chain: readonly unknown[] = node.primitive_chain;
      node.primitive_chain = chain.map((s, j) => normalizeStep(s, `${at}.primitive_chain[${j}]`, o.task, nodeId, spellings, issues, o.file, { chain, index: j }));
      // references to an earlier step's result (gmdnohlg, ychlukjm) and lgzivily's {{ctx.x}}
      stepReferences(node, context(o.task, nodeId, at, spellings, issues, o.file, 'chain'), dagText);
    }
    return node;
  });
  return { dag: { nodes, ...(raw.trajectories !== undefined ? { trajectories: raw.trajectories } : {}) }, issues, spellings };
}

function normalizeStep(raw: unknown, at: string, task: string, nodeId: string, spellings: SpellingUse[], issues: InputIssue[], file: string, where: { chain: readonly unknown[]; index: number }): unknown {
  const shellCtx = context(task, nodeId, at, spellings, issues, file, 'step');
  const shell = normalizeStepShell(raw, at, shellCtx, issues, file, nodeId);
  if (!shell) return raw;
  if (typeof shell.type !== 'string') return { type: shell.type, inputs: shell.inputs };
  const type = shell.type.toUpperCase();
  const dialect = byType.get(type);
  const ctx = { ...context(task, nodeId, at, spellings, issues, file, type), ...where };
  const out = dialect ? dialect.normalize(type, shell.inputs, ctx) : { type: shell.type, inputs: shell.inputs };
  // notes left in the inputs after the dialect mapped what it knows
  const notes = { ...shell.notes, ...takeNotes(out.inputs as Inputs) };
  return { type: out.type, inputs: out.inputs, ...(Object.keys(notes).length ? { notes } : {}) };
}

function context(task: string, nodeId: string, at: string, spellings: SpellingUse[], issues: InputIssue[], file: string, primitive: string): DialectContext {
  return {
    task,
    nodeId,
    at,
    spelling(spelling, canonical, meaning) {
      spellings.push({ primitive, spelling, canonical, meaning, task });
    },
    issue(path, message) {
      issues.push({ file, path: `${at}.${path}`, nodeId, message });
    },
  };
}

/** Spelling uses folded into table rows: one per (primitive, spelling, canonical), with the tasks that use it. */
export function spellingTable(uses: readonly SpellingUse[]): { primitive: string; spelling: string; canonical: string; meaning: string; tasks: string[]; count: number }[] {
  const rows = new Map<string, { primitive: string; spelling: string; canonical: string; meaning: string; tasks: Set<string>; count: number }>();
  for (const u of uses) {
    const key = `${u.primitive}\u0000${u.spelling}\u0000${u.canonical}`;
    const r = rows.get(key) ?? { primitive: u.primitive, spelling: u.spelling, canonical: u.canonical, meaning: u.meaning, tasks: new Set<string>(), count: 0 };
    r.tasks.add(u.task);
    r.count++;
    rows.set(key, r);
  }
  return [...rows.values()]
    .map((r) => ({ ...r, tasks: [...r.tasks].sort() }))
    .sort((a, b) => a.primitive.localeCompare(b.primitive) || a.spelling.localeCompare(b.spelling));
}
