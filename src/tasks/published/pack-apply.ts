import type { InputIssue } from '../../errors';
import { jsonPath } from '../../model/json';
import { findPrimitive } from '../../primitives/registry';
import { leavesResponse, requestMatches } from '../../primitives/step-captures';
import type { SetupItem } from '../../model/setup';
import { produced } from '../placeholders';
import { zodInputIssues } from '../../zod-issues';
import type { PackCapture } from './pack';

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

interface RawNode {
  id?: unknown;
  primitive_chain?: unknown;
  captures?: unknown;
}

const chainOf = (n: RawNode): { type: string }[] => (Array.isArray(n.primitive_chain) ? n.primitive_chain.filter(isObj).map((s) => ({ type: String(s.type ?? '') })) : []);

/**
 * Add the pack's capture rules to the canonical (raw) nodes before they are checked, so the
 * placeholder check, the published-context edges, `tasks import` and the run all see them. A rule
 * that names no node, a node without such a step, or a step that leaves no response is an error of
 * the pack (naming the entry and the rule); `node_contains` adds the rule to every node whose id
 * contains the text and whose chain leaves a response (at `step`, when the rule names one).
 */
export function applyPackCaptures(nodes: unknown[], rules: readonly PackCapture[], file: string): { issues: InputIssue[]; added: number; nodes: number } {
  const issues: InputIssue[] = [];
  const touched = new Set<string>();
  let added = 0;
  rules.forEach((rule, i) => {
    const at = `captures[${i}]`;
    const { node, node_contains: contains, node_matches: matches, ignore_case: ci, step_types: types, last_response: lastOnly, ...capture } = rule;
    const typeOk = (t: string) => !types || types.some((x) => x.toUpperCase() === t.toUpperCase());
    const re = matches !== undefined ? new RegExp(matches, ci ? 'i' : '') : undefined;
    const hit = (id: string) => (node !== undefined ? id === node : re ? re.test(id) : ci ? id.toLowerCase().includes(contains!.toLowerCase()) : id.includes(contains!));
    const targets = nodes.filter((n): n is RawNode => isObj(n) && typeof n.id === 'string' && hit(n.id));
    // the steps of a node the rule reads: its `step`, else every step that leaves a response
    // (and, with if_request, sends a request the rule names — one capture per such step)
    const stepsOf = (n: RawNode): (number | undefined)[] => {
      const chain = chainOf(n);
      if (capture.step !== undefined) return chain[capture.step] && leavesResponse(chain[capture.step].type) && typeOk(chain[capture.step].type) ? [capture.step] : [];
      const responding = chain.map((s, j) => (leavesResponse(s.type) && typeOk(s.type) ? j : -1)).filter((j) => j >= 0);
      const fitting = capture.if_request ? responding.filter((j) => requestMayMatch(capture, rawStep(n, j))) : responding;
      if (lastOnly) return fitting.length ? [fitting[fitting.length - 1]] : [];
      if (!capture.if_request && !types) return fitting.length ? [undefined] : [];
      return fitting;
    };
    if (node !== undefined && !targets.length) return issues.push({ file, path: `${at}.node`, message: `no node "${node}" in the DAG` });
    let hits = 0;
    for (const n of targets) {
      const steps = stepsOf(n);
      if (!steps.length && node !== undefined) {
        const chain = chainOf(n);
        const what = capture.step === undefined ? `no step of its chain leaves a response${capture.if_request ? ' to such a request' : ''}` : !chain[capture.step] ? `its chain has ${chain.length} steps` : `its step ${capture.step} (${chain[capture.step].type}) leaves no response`;
        issues.push({ file, path: `${at}.step`, message: `node ${node}: ${what}` });
      }
      for (const step of steps) {
        n.captures = [...(Array.isArray(n.captures) ? n.captures : []), { ...capture, ...(step !== undefined ? { step } : {}) }];
        touched.add(String(n.id));
        added++;
        hits++;
      }
    }
    if (!hits && node === undefined) issues.push({ file, path: `${at}.${matches !== undefined ? 'node_matches' : 'node_contains'}`, message: `no node matching "${matches ?? contains}" has ${capture.step === undefined ? 'a step that leaves a response' : `a step ${capture.step} that leaves a response`}${capture.if_request ? ' to such a request' : ''}` });
  });
  return { issues, added, nodes: touched.size };
}

const rawStep = (n: RawNode, j: number): Record<string, unknown> => {
  const s = (n.primitive_chain as unknown[])[j];
  return isObj(s) && isObj(s.inputs) ? s.inputs : {};
};

/**
 * Can a step's request match `if_request`? Read from its (untemplated) inputs: the method (P04's
 * default GET) and the path, whose placeholders stay as written; a step without a literal path may.
 */
function requestMayMatch(c: Pick<PackCapture, 'if_request'>, inputs: Record<string, unknown>): boolean {
  const path = typeof inputs.path === 'string' ? inputs.path : typeof inputs.url === 'string' ? inputs.url.replace(/^https?:\/\/[^/]+/, '') : undefined;
  const method = typeof inputs.method === 'string' ? inputs.method : 'GET';
  return path === undefined || requestMatches(c, method, path);
}

/**
 * Mark the pack's `literal` names as content: every `{{ name }}` in a step's inputs becomes
 * `{{raw: name }}`, which the chain sends as `{{ name }}` (src/primitives/template.ts). A name that
 * occurs nowhere is an error of the pack.
 */
export function applyPackLiterals(nodes: unknown[], literal: Record<string, string>, file: string): InputIssue[] {
  const issues: InputIssue[] = [];
  for (const name of Object.keys(literal)) {
    const re = new RegExp(`\\{\\{(\\s*)(${name.replace(/\./g, '\\.')})(\\s*)\\}\\}`, 'g');
    let count = 0;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return v.replace(re, (_m, a: string, n: string, b: string) => (count++, `{{raw:${a}${n}${b}}}`));
      if (Array.isArray(v)) return v.map(walk);
      if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
      return v;
    };
    for (const n of nodes) {
      if (!isObj(n) || !Array.isArray(n.primitive_chain)) continue;
      for (const s of n.primitive_chain) if (isObj(s) && isObj(s.inputs)) s.inputs = walk(s.inputs);
    }
    if (!count) issues.push({ file, path: `literal.${name}`, message: `{{${name}}} occurs in no step of the DAG` });
  }
  return issues;
}

/**
 * Check the pack's setups like DAG steps: each step's inputs against its primitive's schema, and
 * every declared export captured by some step of the chain.
 */
export function checkPackSetup(setup: readonly SetupItem[], file: string): InputIssue[] {
  const issues: InputIssue[] = [];
  setup.forEach((item, i) => {
    const made = new Set<string>();
    item.chain.forEach((step, j) => {
      const at = `setup[${i}].chain[${j}]`;
      const p = findPrimitive(step.type);
      if (!p) return issues.push({ file, path: `${at}.type`, message: `unknown primitive type "${step.type}"` });
      const checked = p.schema.safeParse(step.inputs);
      if (!checked.success) issues.push(...zodInputIssues(checked.error, file, `${at}.inputs`));
      for (const v of produced(step.type, step.inputs).exported) made.add(v);
    });
    item.exports.forEach((e, k) => {
      if (!made.has(e)) issues.push({ file, path: jsonPath(['setup', i, 'exports', k]), message: `"${e}" is captured by no step of this setup's chain` });
    });
  });
  return issues;
}
