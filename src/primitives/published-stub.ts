import { z } from 'zod';
import { definePrimitive } from './types';

/**
 * A published step whose evaluator could never pass it (its copy of the type was a "not
 * implemented" stub) and whose inputs give it no meaning we could honour instead. It runs and
 * fails, so its node keeps its maxScore in the denominator as the paper counted it; `tasks
 * validate` and `benchmark stats` report the maxScore it makes unreachable.
 */
export const PUBLISHED_STUB = definePrimitive({
  id: 'PUBLISHED_STUB',
  name: 'published_stub',
  schema: z
    .object({
      /** the published type id, e.g. P20 */
      published_type: z.string().min(1),
      /** why it cannot pass, e.g. "task_x's evaluator: not implemented" */
      reason: z.string().min(1),
      /** the published inputs, kept for the record */
      published_inputs: z.record(z.string(), z.unknown()).default({}),
    })
    .strict(),
  async run(input) {
    return { passed: false, message: `${input.published_type} cannot pass: ${input.reason}`, data: { published_type: input.published_type } };
  },
});
