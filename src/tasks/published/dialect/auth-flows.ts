import type { StepDialect } from './types';
import type { Inputs } from './util';

/** Tasks whose evaluator's P25 was a stub that always failed. */
const P25_STUB: Record<string, string> = {
  aoiwqoiq: 'not implemented',
  gmdnohlg: '"P25 not fully implemented" (always fails)',
  jzssnoqp: 'not implemented',
};

/** P30 (sgdoserd) → TOTP_CODE; P25 → OAUTH_FLOW, or PUBLISHED_STUB where the task's evaluator was a stub. */
export const authFlowsDialect: StepDialect = {
  types: ['P25', 'P30'],
  normalize(type, raw, ctx) {
    const i: Inputs = { ...raw };
    if (type === 'P30') {
      const out: Inputs = {};
      if ('secret' in i) out.secret = i.secret;
      else {
        const key = i.secret_context_key ?? 'mfa_secret';
        if (typeof key !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) ctx.issue('inputs.secret_context_key', 'must name a variable');
        out.secret = `{{${String(key)}}}`;
        ctx.spelling('secret_context_key', 'secret: "{{<key>}}"', 'the TOTP secret is the value of this chain variable');
      }
      delete i.secret;
      delete i.secret_context_key;
      out.store_as = i.store_as ?? 'mfa_code';
      delete i.store_as;
      for (const [from, to] of [['digits', 'digits'], ['step', 'step_seconds'], ['offset', 'offset']]) {
        if (from in i) {
          out[to] = i[from];
          delete i[from];
        }
      }
      return { type: 'TOTP_CODE', inputs: { ...out, ...i } };
    }
    if (P25_STUB[ctx.task]) return { type: 'PUBLISHED_STUB', inputs: { published_type: 'P25', reason: `task_${ctx.task}'s evaluator: ${P25_STUB[ctx.task]}`, published_inputs: i } };
    return { type: 'OAUTH_FLOW', inputs: oauth(i) };
  },
};

function oauth(i: Inputs): Inputs {
  return i;
}
