import type { InputIssue } from '../../../errors';
import { copy, isNoteKey, isObject, takeNotes, type Inputs } from './util';
import type { DialectContext } from './types';

/**
 * Node keys that document a node and never change its score: where the requirement comes from
 * (`evidence`, `source_evidence` quote the PRD; `kb_ref(s)` name knowledge-base entries) and
 * authors' notes. They are kept on the canonical node as `notes` and shown in its record.
 */
const DOC_MEANING: Record<string, string> = {
  evidence: 'the PRD passage the node checks; shown in its record',
  source_evidence: 'where in the original product the behaviour is; shown in its record',
  kb_ref: 'the knowledge-base entry the node relies on; shown in its record',
  kb_refs: 'the knowledge-base entries the node relies on; shown in its record',
  patch_note: "the author's note on a fix of the node; shown in its record",
  header_name_any_of: 'header names the author had in mind (the steps name the headers they send); shown in its record',
  coverage_refs: 'the PRD sections the node covers; shown in its record',
  merged_from: 'the earlier node ids merged into this one; shown in its record',
  produces: "the variables the node's steps capture (the steps' own captures are what runs); shown in its record",
};
const DOC_NODE_KEYS = Object.keys(DOC_MEANING);

/** Canonical node keys (the native dag.json node). */
const CANONICAL_NODE_KEYS = ['id', 'description', 'prereqs', 'primitive_chain', 'scoring', 'complexity_tier', 'trajectories', 'notes', 'id_capture', 'run_last', 'captures'];

export interface NodeNormalization {
  node: Inputs;
  /** published step objects with their index, for the step dialects */
  steps: { index: number; step: Inputs }[];
}

/**
 * The node-level dialect: documentation keys become `notes`, duplicated scoring keys at node level
 * (`maxScore`, `max_score`, `method`) must agree with `scoring`, and semantic node keys map onto
 * canonical ones (`no_entity_capture` → `id_capture: false`, `_run_last` → `run_last`).
 */
export function normalizeNode(raw: Inputs, at: string, ctx: DialectContext, issues: InputIssue[], file: string): Inputs {
  const node = copy(raw);
  const notes: Record<string, unknown> = {};
  const issue = (path: string, message: string) => issues.push({ file, path: `${at}.${path}`, nodeId: typeof node.id === 'string' ? node.id : undefined, message });

  if ('no_entity_capture' in node) {
    const v = node.no_entity_capture;
    delete node.no_entity_capture;
    if (typeof v !== 'boolean') issue('no_entity_capture', 'must be true or false');
    else node.id_capture = !v;
    ctx.spelling('no_entity_capture', 'id_capture: false', 'this node\'s responses are not searched for ids (the published id capture is off for it)');
  }
  if ('_run_last' in node) {
    const v = node._run_last;
    delete node._run_last;
    if (typeof v !== 'boolean') issue('_run_last', 'must be true or false');
    else node.run_last = v;
    ctx.spelling('_run_last', 'run_last', 'the node runs after every node not marked run_last has finished (it invalidates sessions others use)');
  }
  if ('forbid_elixir_errors' in node) forbidElixirErrors(node, issue, ctx);
  if (typeof node.complexity_tier === 'number') {
    node.complexity_tier = String(node.complexity_tier);
    ctx.spelling('complexity_tier: <number>', 'complexity_tier: "<number>"', 'the tier as a label (informational)');
  }
  if ('trajectory_tags' in node) {
    const v = node.trajectory_tags;
    delete node.trajectory_tags;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) issue('trajectory_tags', 'must be a list of trajectory names');
    else node.trajectories = [...new Set([...(Array.isArray(node.trajectories) ? (node.trajectories as string[]) : []), ...v])];
    ctx.spelling('trajectory_tags', 'trajectories', 'the trajectories the node belongs to (its trajectory subscores)');
  }
  const scoring = isObject(node.scoring) ? node.scoring : undefined;
  for (const [k, canonical] of [['maxScore', 'maxScore'], ['max_score', 'maxScore'], ['method', 'method']] as const) {
    if (!(k in node)) continue;
    const v = node[k];
    delete node[k];
    if (!scoring) continue;
    const want = scoring[canonical];
    const same = canonical === 'method' ? normMethod(v) === normMethod(want) : v === want;
    if (!same) issue(k, `node-level ${k} ${JSON.stringify(v)} disagrees with scoring.${canonical} ${JSON.stringify(want)}`);
    ctx.spelling(k, `scoring.${canonical}`, 'a copy of the scoring value at node level (checked to agree)');
  }
  if (scoring) {
    if ('rubricFile' in scoring) {
      // "inline", or the rubric's source document (gavmyneb: rubrics/*.md, not published); either
      // way the node's P17 step carries the rubric text itself, which is what the judge is given
      const v = scoring.rubricFile;
      const inlineRubric = Array.isArray(node.primitive_chain) && node.primitive_chain.some((st) => isObject(st) && isObject(st.inputs) && ['rubric', 'rubric_prompt', 'prompt'].some((r) => typeof (st.inputs as Inputs)[r] === 'string'));
      if (typeof v === 'string' && inlineRubric) {
        notes['scoring.rubricFile'] = v;
        delete scoring.rubricFile;
        ctx.spelling(v === 'inline' ? 'scoring.rubricFile: "inline"' : 'scoring.rubricFile: <path>', 'notes', v === 'inline' ? "the rubric is the P17 step's own prompt" : "where the rubric was written (not published); the P17 step carries the rubric text, which the judge gets");
      } else issue('scoring.rubricFile', `${JSON.stringify(v)}: a rubric file without the rubric text in the node's P17 step (rubric, rubric_prompt or prompt)`);
    }
    for (const k of ['notes', 'comment']) {
      if (typeof scoring[k] !== 'string') continue;
      notes[`scoring.${k}`] = scoring[k];
      delete scoring[k];
      ctx.spelling(`scoring.${k}`, 'notes', "the author's note on the node's scoring (e.g. why maxScore was capped); shown in its record");
    }
    for (const k of Object.keys(scoring)) if (k.startsWith('_')) {
      notes[`scoring.${k}`] = scoring[k];
      delete scoring[k];
    }
  }
  for (const k of Object.keys(node)) {
    if (CANONICAL_NODE_KEYS.includes(k)) continue;
    if (DOC_NODE_KEYS.includes(k) || isNoteKey(k)) {
      notes[k] = node[k];
      delete node[k];
      if (DOC_NODE_KEYS.includes(k)) ctx.spelling(k, 'notes', DOC_MEANING[k]);
    }
  }
  if (Object.keys(notes).length) node.notes = { ...(isObject(node.notes) ? node.notes : {}), ...notes };
  return node;
}

/**
 * orghjavi sets `forbid_elixir_errors` on a node as well as on its P12 steps: the node-level flag
 * applies to every P12 step of the node (its steps' own flag, when given, must agree).
 */
function forbidElixirErrors(node: Inputs, issue: (path: string, message: string) => void, ctx: DialectContext) {
  const v = node.forbid_elixir_errors;
  delete node.forbid_elixir_errors;
  if (typeof v !== 'boolean') return issue('forbid_elixir_errors', 'must be true or false');
  ctx.spelling('node forbid_elixir_errors', 'P12 steps forbid_elixir_errors', 'every P12 step of the node fails on Elixir/Mix error output');
  if (!Array.isArray(node.primitive_chain)) return;
  node.primitive_chain.forEach((s, j) => {
    if (!isObject(s) || String(s.type ?? s.primitive).toUpperCase() !== 'P12' || !isObject(s.inputs)) return;
    if (s.inputs.forbid_elixir_errors === undefined) s.inputs.forbid_elixir_errors = v;
    else if (s.inputs.forbid_elixir_errors !== v) issue(`primitive_chain[${j}].inputs.forbid_elixir_errors`, 'disagrees with the node-level forbid_elixir_errors');
  });
}

const normMethod = (m: unknown) => (m === 'llm_judge' ? 'llm-judge' : m);

/**
 * The step-level dialect: jtbxfpny names the type `primitive`; rjhcjrst puts `save_as` beside
 * `inputs` (moved into the inputs, where the type's dialect maps it); notes beside `inputs` are kept.
 */
export function normalizeStepShell(raw: unknown, at: string, ctx: DialectContext, issues: InputIssue[], file: string, nodeId?: string): { type: unknown; inputs: Inputs; notes: Record<string, unknown> } | null {
  if (!isObject(raw)) {
    issues.push({ file, path: at, nodeId, message: 'a step is an object {type, inputs}' });
    return null;
  }
  const step = copy(raw);
  if ('primitive' in step) {
    if ('type' in step && step.type !== step.primitive) issues.push({ file, path: `${at}.primitive`, nodeId, message: `"primitive" and "type" disagree (${JSON.stringify(step.primitive)} vs ${JSON.stringify(step.type)})` });
    step.type = step.type ?? step.primitive;
    delete step.primitive;
    ctx.spelling('primitive', 'type', 'the step\'s primitive type');
  }
  const inputs = isObject(step.inputs) ? step.inputs : step.inputs === undefined ? {} : null;
  if (inputs === null) {
    issues.push({ file, path: `${at}.inputs`, nodeId, message: 'inputs must be an object' });
    return null;
  }
  if ('save_as' in step) {
    if ('save_as' in inputs) issues.push({ file, path: `${at}.save_as`, nodeId, message: 'save_as is given beside and inside inputs' });
    else inputs.save_as = step.save_as;
    delete step.save_as;
    ctx.spelling('save_as (beside inputs)', 'inputs.save_as', 'a capture named beside the inputs (read as the same input inside them)');
  }
  const type = step.type;
  delete step.type;
  delete step.inputs;
  const notes = takeNotes(step);
  for (const k of Object.keys(step)) issues.push({ file, path: `${at}.${k}`, nodeId, message: `unknown step key "${k}"` });
  return { type, inputs, notes };
}
