import { z } from 'zod';
import { JsonSchema } from '../json';
import { show } from './compare';
import { dottedGet } from './jsonpath';
import { NO_RESPONSE, subjectBody } from './response';
import { definePrimitive } from './types';

export const P06Schema = z
  .object({
    required_fields: z.array(z.string().min(1)),
    body: JsonSchema.optional(),
  })
  .strict();

/**
 * P06: every dotted path in required_fields is present (null counts as present) in `body` or the
 * last response body. When the body is an array, a path whose first segment is not an index is
 * looked up in its first element. An empty list passes. No "idempotent" auto-pass.
 */
export const P06 = definePrimitive({
  id: 'P06',
  name: 'json_schema_match',
  schema: P06Schema,
  async run(input, ctx) {
    const subject = subjectBody(input, ctx);
    if (!subject) return { passed: false, message: NO_RESPONSE };
    const { body } = subject;
    const missing = input.required_fields.filter((f) => !lookup(body, f));
    const passed = missing.length === 0;
    return {
      passed,
      message: passed
        ? `all ${input.required_fields.length} required field(s) present`
        : `missing ${missing.length}/${input.required_fields.length} field(s): ${missing.join(', ')} in body ${show(body, 300)}`,
      data: { source: subject.source, required: input.required_fields, missing },
    };
  },
});

function lookup(body: unknown, dotted: string): boolean {
  if (dottedGet(body, dotted).found) return true;
  const first = dotted.split('.')[0];
  return Array.isArray(body) && body.length > 0 && !/^\d+$/.test(first) && dottedGet(body[0], dotted).found;
}
