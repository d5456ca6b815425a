import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { show } from './compare';
import { appendQuery } from '../http/request';
import { queryJsonPath } from './jsonpath';
import { PathSchema, RoleName } from './p04-http-request';
import { LAST_VARS_LOCAL } from './auth/request';
import { definePrimitive } from './types';
import { Method, sendRequest, Status } from './workflow-http';

export const P26Schema = z
  .object({
    method: Method.default('GET'),
    path: PathSchema,
    query: z.record(z.string().min(1), JsonSchema).optional(),
    body: JsonSchema.optional(),
    headers: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).default({}),
    role: RoleName.optional(),
    /** where the results are: JSONPaths tried in order (an array: its length; a number: the count); default the body */
    results_path: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    min_count: z.number().int().min(0).default(1),
    max_count: z.number().int().min(0).optional(),
    /** the first result's JSON text contains this */
    first_result_contains: z.string().min(1).optional(),
    expected_status: z.array(Status).min(1).default([200]),
    timeout: z.number().positive().max(600).default(15),
  })
  .strict()
  .refine((v) => v.max_count === undefined || v.max_count >= v.min_count, { message: 'max_count is below min_count', path: ['max_count'] });

/** The results of a search answer: {count, first} from the first results_path that matches, else the body. */
export function searchResults(body: unknown, paths: string[]): { count: number; first?: unknown; from: string } {
  for (const p of paths) {
    const hit = queryJsonPath(body, p)[0];
    if (hit === undefined || hit === null) continue;
    if (Array.isArray(hit)) return { count: hit.length, first: hit[0], from: p };
    if (typeof hit === 'number') return { count: hit, from: p };
    if (typeof hit === 'object') return { count: 1, first: hit, from: p };
  }
  if (Array.isArray(body)) return { count: body.length, first: body[0], from: '$' };
  if (body && typeof body === 'object') return { count: 1, first: body, from: '$' };
  return { count: 0, from: '$' };
}

/**
 * P26: a search request; passes when it answers an expected status and the results number at
 * least min_count (at most max_count), the first containing first_result_contains.
 */
export const P26 = definePrimitive({
  id: 'P26',
  name: 'search_query',
  schema: P26Schema,
  produces: () => ({ exported: [], local: LAST_VARS_LOCAL }),
  async run(input, ctx) {
    const path = input.query ? appendQuery(input.path, input.query as Record<string, Json>) : input.path;
    const out = await sendRequest(ctx, { method: input.method, path, body: input.body, headers: input.headers, role: input.role, expected_status: input.expected_status }, input.timeout, 'search');
    if (out.problem) return { passed: false, message: out.problem };
    const body = out.res!.body;
    const r = searchResults(body, typeof input.results_path === 'string' ? [input.results_path] : input.results_path ?? []);
    const problems: string[] = [];
    if (r.count < input.min_count) problems.push(`${r.count} result(s), need at least ${input.min_count}`);
    if (input.max_count !== undefined && r.count > input.max_count) problems.push(`${r.count} result(s), at most ${input.max_count} expected`);
    if (input.first_result_contains && !(r.first !== undefined && JSON.stringify(r.first).includes(input.first_result_contains))) problems.push(`the first result does not contain ${JSON.stringify(input.first_result_contains)}: ${show(r.first, 200)}`);
    return { passed: problems.length === 0, message: `${out.line}: ${r.count} result(s) at ${r.from}${problems.length ? `; ${problems.join('; ')}` : ''}`, data: { count: r.count, from: r.from } };
  },
});
