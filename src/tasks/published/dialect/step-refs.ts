import { findPrimitive } from '../../../primitives/registry';
import { leavesResponse } from '../../../primitives/step-captures';
import type { DialectContext } from './types';
import { isObject, type Inputs } from './util';

/**
 * Placeholders that name the result of an earlier step of the same chain, per fork
 * (docs/compatibility.md#chain-context):
 *  - gmdnohlg `{{step_N.a.b}}`: N counts from 0; the fork's harness kept each primitive's result
 *    under `step_N` (harness.py execute_chain), for an HTTP step the response body's fields (the OCS
 *    envelope under `api`, which the fork also found under `ocs`), for a query its `rows`;
 *  - ychlukjm `{{from_step_N.a.b}}`: N counts from 1 (every use in its DAG names the GraphQL step
 *    before it: `from_step_2` after the mutation at index 1), the step's response body.
 * Each becomes a chain-local capture on step N (`captures: [{step, name: step_N_a_b, path, local}]`)
 * and the placeholder reads that variable: the canonical chain runner keeps no per-step results.
 *
 * lgzivily `{{ctx.x}}`: the fork's run context was the dict `ctx` (harness.py), so `{{ctx.x}}` is the
 * run variable `x` (filled by its keyword captures, now the pack's capture rules).
 *
 * hhrdixum's P13 kept each role's token in the run context as `<role>_token` (primitives.py
 * P13_auth_login), which its DAG reads (`Token {{admin_token}}`): its P13 steps get `token_as`
 * for the roles whose token the DAG reads.
 */
const ROLE_TOKEN_TASKS = new Set(['hhrdixum']);

const REF: Record<string, { re: RegExp; base: 0 | 1; spelling: string; meaning: string }> = {
  gmdnohlg: { re: /\{\{\s*step_(\d+)((?:\.[A-Za-z0-9_]+)+)\s*\}\}/g, base: 0, spelling: '{{step_N.…}}', meaning: "a field of step N's result (N from 0): the response body, or a query's rows" },
  ychlukjm: { re: /\{\{\s*from_step_(\d+)((?:\.[A-Za-z0-9_]+)+)\s*\}\}/g, base: 1, spelling: '{{from_step_N.…}}', meaning: "a field of step N's response body (N from 1)" },
};

interface Capture {
  step: number;
  name: string;
  from: 'body';
  path: string | string[];
  when: 'any';
  local: true;
  note: string;
}

/** `.api.data.0.id` → `$.api.data[0].id` */
const toJsonPath = (rest: string) => `$${rest.replace(/\.(\d+)(?=\.|$)/g, '[$1]')}`;

function rewrite(v: unknown, fn: (s: string) => string): unknown {
  if (typeof v === 'string') return fn(v);
  if (Array.isArray(v)) return v.map((x) => rewrite(x, fn));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rewrite(x, fn)]));
  return v;
}

/** Map the node's step references onto local captures (gmdnohlg, ychlukjm) and `{{ctx.x}}` onto `{{x}}` (lgzivily). */
export function stepReferences(node: Inputs, ctx: DialectContext, dagText = ''): void {
  if (!Array.isArray(node.primitive_chain)) return;
  const chain = node.primitive_chain as unknown[];
  if (ROLE_TOKEN_TASKS.has(ctx.task)) {
    for (const s of chain) {
      if (!isObject(s) || s.type !== 'P13' || !isObject(s.inputs) || typeof s.inputs.role !== 'string' || s.inputs.token_as !== undefined) continue;
      const name = `${s.inputs.role.replace(/[^A-Za-z0-9_]/g, '_')}_token`;
      if (!new RegExp(`\\{\\{\\s*${name}\\s*\\}\\}`).test(dagText)) continue;
      s.inputs.token_as = [name];
      ctx.spelling('P13 (hhrdixum)', 'token_as: [<role>_token]', "the fork's P13 kept the role's token as <role>_token, which the DAG reads");
    }
    return;
  }
  if (ctx.task === 'lgzivily') {
    chain.forEach((s) => {
      if (!isObject(s)) return;
      s.inputs = rewrite(s.inputs, (t) =>
        t.replace(/\{\{\s*ctx\.([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_]+)*)\s*\}\}/g, (_m, name: string, rest: string) => {
          ctx.spelling('{{ctx.x}}', '{{x}}', "a variable of the run (the fork's run context was the dict ctx)");
          return `{{${name}${rest}}}`;
        }),
      );
    });
    return;
  }
  const ref = REF[ctx.task];
  if (!ref) return;
  const caps = new Map<string, Capture>();
  chain.forEach((s, j) => {
    if (!isObject(s)) return;
    s.inputs = rewrite(s.inputs, (t) =>
      t.replace(ref.re, (m, n: string, rest: string) => {
        const step = Number(n) - ref.base;
        const target = chain[step];
        const type = isObject(target) && typeof target.type === 'string' ? target.type : '';
        if (step >= j || !type || !leavesResponse(type)) {
          ctx.issue(`primitive_chain[${j}].inputs`, `${m}: step ${step} ${step >= j ? 'does not come before this step' : `(${type || 'missing'}) leaves no response`}`);
          return m;
        }
        const sql = findPrimitive(type)?.id === 'P08';
        const name = `${ref.base === 0 ? 'step' : 'from_step'}_${n}${rest.replace(/\./g, '_')}`;
        // gmdnohlg's OCS envelope: `api` as written, or `ocs` where the app kept that name
        const path = ctx.task === 'gmdnohlg' && !sql && rest.startsWith('.api.') ? [toJsonPath(rest), toJsonPath(rest.replace(/^\.api/, '.ocs'))] : toJsonPath(rest);
        caps.set(name, { step, name, from: 'body', path, when: 'any', local: true, note: `${ctx.task} ${m}` });
        ctx.spelling(ref.spelling, 'captures[] (local) + {{name}}', ref.meaning);
        return `{{${name}}}`;
      }),
    );
  });
  if (caps.size) node.captures = [...(Array.isArray(node.captures) ? node.captures : []), ...caps.values()];
}
