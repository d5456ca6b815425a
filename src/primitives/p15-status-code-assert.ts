import { z } from 'zod';
import { show } from './compare';
import { definePrimitive } from './types';

const Status = z.number().int().min(100).max(599);
const OneOrMany = z.union([Status, z.array(Status).min(1)]);

export const P15Schema = z
  .object({
    expected_status: OneOrMany.optional(),
    acceptable_statuses: z.array(Status).min(1).optional(),
    acceptable: OneOrMany.optional(),
  })
  .strict();

/**
 * P15: the chain's last response status is in the union of expected_status, acceptable_statuses
 * and acceptable; when none is given, any 2xx passes. No lenient "idempotent" rules.
 */
export const P15 = definePrimitive({
  id: 'P15',
  name: 'status_code_assert',
  schema: P15Schema,
  async run(input, { state }) {
    const last = state.last;
    if (!last) return { passed: false, message: 'no HTTP response to check' };
    const accepted = [...new Set([input.expected_status, input.acceptable_statuses, input.acceptable].flatMap((x) => (x === undefined ? [] : [x].flat())))].sort((a, b) => a - b);
    const passed = accepted.length ? accepted.includes(last.status) : last.status >= 200 && last.status < 300;
    const want = accepted.length ? accepted.join('|') : '2xx';
    return {
      passed,
      message: `${last.method} ${last.path} → ${last.status}; expected ${want}${passed ? '' : `; body ${show(last.body, 300)}`}`,
      data: { status: last.status, accepted: accepted.length ? accepted : '2xx' },
    };
  },
});
