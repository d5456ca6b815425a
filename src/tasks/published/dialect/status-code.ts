import { lastResponseStep, stepReference } from './json-chain';
import type { CanonicalStep, DialectContext, StepDialect } from './types';
import { copy, type Inputs } from './util';

/**
 * P15 status_code_assert: `expected_status` / `acceptable_statuses` / `acceptable` are canonical
 * (their union). gmdnohlg's `response: "{{step_N}}"` names the latest response (the one P15 reads
 * anyway). sgdoserd's `command_exit_code` after a P12 asserts the command's exit code — a check of
 * the command result, so the canonical step is a P07 on `{{previous}}` (P12's {stdout, output, exit_code}).
 */
export const P15Dialect: StepDialect = {
  types: ['P15', 'STATUS_CODE_ASSERT'],
  normalize(type: string, raw: Inputs, ctx: DialectContext): CanonicalStep {
    const inputs = copy(raw);
    if ('response' in inputs) {
      const r = inputs.response;
      delete inputs.response;
      const ref = typeof r === 'string' ? stepReference(r, ctx) : undefined;
      if (ref?.ok) ctx.spelling(`response: "${ref.label}"`, '(the last response)', "the response of the step it names, which is the chain's latest");
      else ctx.issue('inputs.response', ref && !ref.ok ? ref.message : 'P15 checks the latest response; response must name it ({{step_N}})');
    }
    if ('command_exit_code' in inputs) {
      const code = inputs.command_exit_code;
      delete inputs.command_exit_code;
      const last = lastResponseStep(ctx);
      if (last?.type !== 'P12') ctx.issue('inputs.command_exit_code', 'command_exit_code needs a P12 before it in the chain');
      if (typeof code !== 'number' || !Number.isInteger(code)) ctx.issue('inputs.command_exit_code', 'command_exit_code must be an integer');
      const statusKeys = Object.keys(inputs).filter((k) => !k.startsWith('_'));
      if (statusKeys.length) ctx.issue(`inputs.${statusKeys[0]}`, 'a status set beside command_exit_code');
      ctx.spelling('command_exit_code', 'P07 {body: "{{previous}}", assertions: [{path: $.exit_code, equals}]}', "the exit code of the chain's last command");
      const notes = Object.fromEntries(Object.entries(inputs).filter(([k]) => k.startsWith('_')));
      return { type: 'P07', inputs: { body: '{{previous}}', assertions: [{ path: '$.exit_code', operator: 'equals', expected: code }], ...notes } };
    }
    return { type, inputs };
  },
};
