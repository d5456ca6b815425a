import { z } from 'zod';
import { JsonSchema } from '../model/json';
import { jsonType, show } from './compare';
import { dottedGet } from './jsonpath';
import { JSON_TYPES } from './p07-operators';
import { NO_RESPONSE, subjectBody } from './response';
import { definePrimitive } from './types';

const JsonType = z.enum(JSON_TYPES);

export const P06Schema = z
  .object({
    required_fields: z.array(z.string().min(1)),
    /** dotted path → JSON type (or list of types) the field must have; the field must be present */
    field_types: z.record(z.string().min(1), z.union([JsonType, z.array(JsonType).min(1)])).default({}),
    /** dotted path of the object the fields are looked up in (e.g. `data`) */
    root: z.string().min(1).optional(),
    /** when the object has one of these members (e.g. `data`), the fields are looked up in its value */
    unwrap: z.array(z.string().min(1)).default([]),
    /** the object has at least this many keys (an array: elements) */
    min_keys: z.number().int().min(0).optional(),
    /** response headers that must be present (names are case-insensitive) */
    required_headers: z.array(z.string().min(1)).default([]),
    body: JsonSchema.optional(),
  })
  .strict();

const typeOk = (v: unknown, want: readonly string[]) => want.includes(jsonType(v)) || (want.includes('integer') && typeof v === 'number' && Number.isInteger(v));

/**
 * P06: every dotted path in required_fields (and field_types) is present (null counts as present)
 * in `body` or the last response body — under `root` when given, inside an `unwrap` member when
 * the object has one — and every field_types entry has
 * its type. When the object is an array, a path whose first segment is not an index is looked up in
 * its first element. required_headers must be in the last response. An empty list passes. No
 * "idempotent" auto-pass.
 */
export const P06 = definePrimitive({
  id: 'P06',
  name: 'json_schema_match',
  schema: P06Schema,
  async run(input, ctx) {
    const subject = subjectBody(input, ctx);
    if (!subject) return { passed: false, message: NO_RESPONSE };
    let body = subject.body;
    if (input.root !== undefined) {
      const r = lookup(body, input.root);
      if (!r.found) return { passed: false, message: `root ${input.root} not found in body ${show(body, 300)}`, data: { source: subject.source, root: input.root } };
      body = r.value;
    }
    const wrapper = body !== null && typeof body === 'object' && !Array.isArray(body) ? input.unwrap.find((k) => Object.prototype.hasOwnProperty.call(body, k)) : undefined;
    if (wrapper !== undefined) body = (body as Record<string, unknown>)[wrapper];
    const missing = input.required_fields.filter((f) => !lookup(body, f).found);
    const wrongType: string[] = [];
    for (const [f, t] of Object.entries(input.field_types)) {
      const r = lookup(body, f);
      if (!r.found) { if (!missing.includes(f)) missing.push(f); continue; }
      const want = Array.isArray(t) ? t : [t];
      if (!typeOk(r.value, want)) wrongType.push(`${f} is ${jsonType(r.value)}, not ${want.join('|')}`);
    }
    if (input.min_keys !== undefined) {
      const n = Array.isArray(body) ? body.length : body !== null && typeof body === 'object' ? Object.keys(body).length : -1;
      if (n < input.min_keys) wrongType.push(n < 0 ? `the body is ${jsonType(body)}, not an object with at least ${input.min_keys} keys` : `${n} key(s), expected at least ${input.min_keys}`);
    }
    const headers = ctx.state.last ? Object.keys(ctx.state.last.headers).map((h) => h.toLowerCase()) : [];
    const missingHeaders = input.required_headers.filter((h) => !headers.includes(h.toLowerCase()));
    const passed = missing.length === 0 && wrongType.length === 0 && missingHeaders.length === 0;
    const total = input.required_fields.length + Object.keys(input.field_types).length;
    const problems = [
      missing.length ? `missing ${missing.length} field(s): ${missing.join(', ')}` : '',
      wrongType.length ? `wrong type: ${wrongType.join('; ')}` : '',
      missingHeaders.length ? `missing header(s): ${missingHeaders.join(', ')}${ctx.state.last ? '' : ' (no response in this chain)'}` : '',
    ].filter(Boolean);
    return {
      passed,
      message: passed ? `all ${total} field check(s) and ${input.required_headers.length} header(s) present` : `${problems.join('; ')} in body ${show(body, 300)}`,
      data: { source: subject.source, required: input.required_fields, missing, wrong_type: wrongType, missing_headers: missingHeaders },
    };
  },
});

function lookup(body: unknown, dotted: string): { found: boolean; value?: unknown } {
  const direct = dottedGet(body, dotted);
  if (direct.found) return direct;
  const first = dotted.split('.')[0];
  if (Array.isArray(body) && body.length > 0 && !/^\d+$/.test(first)) return dottedGet(body[0], dotted);
  return { found: false };
}
