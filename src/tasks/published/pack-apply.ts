import type { InputIssue } from '../../errors';
import { jsonPath } from '../../json';
import { findPrimitive } from '../../primitives/registry';
import { leavesResponse } from '../../primitives/step-captures';
import type { SetupItem } from '../../primitives/task-setup';
import { produced } from '../placeholders';
import { zodInputIssues } from '../zod-issues';
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
    const { node, node_contains: contains, ...capture } = rule;
    const targets = nodes.filter((n): n is RawNode => isObj(n) && typeof n.id === 'string' && (node !== undefined ? n.id === node : n.id.includes(contains!)));
    const fits = (n: RawNode) => {
      const chain = chainOf(n);
      return capture.step === undefined ? chain.some((s) => leavesResponse(s.type)) : !!chain[capture.step] && leavesResponse(chain[capture.step].type);
    };
    if (node !== undefined) {
      const n = targets[0];
      if (!n) return issues.push({ file, path: `${at}.node`, message: `no node "${node}" in the DAG` });
      if (!fits(n)) {
        const chain = chainOf(n);
        const what = capture.step === undefined ? 'no step of its chain leaves a response' : !chain[capture.step] ? `its chain has ${chain.length} steps` : `its step ${capture.step} (${chain[capture.step].type}) leaves no response`;
        return issues.push({ file, path: `${at}.step`, message: `node ${node}: ${what}` });
      }
    }
    const hits = targets.filter(fits);
    if (!hits.length) return issues.push({ file, path: `${at}.node_contains`, message: `no node whose id contains "${contains}" has ${capture.step === undefined ? 'a step that leaves a response' : `a step ${capture.step} that leaves a response`}` });
    for (const n of hits) {
      n.captures = [...(Array.isArray(n.captures) ? n.captures : []), capture];
      touched.add(String(n.id));
      added++;
    }
  });
  return { issues, added, nodes: touched.size };
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
