import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { sessionRequest } from './auth/request';
import { show } from './compare';
import { HttpTransportError } from '../http/request';
import { VarName } from './p04-http-request';
import { definePrimitive } from './types';

export const GraphqlQuerySchema = z
  .object({
    /** the GraphQL endpoint's path */
    endpoint: z.string().startsWith('/', 'endpoint must start with /').default('/graphql'),
    query: z.string().min(1),
    variables: z.record(z.string(), JsonSchema).optional(),
    operation_name: z.string().min(1).optional(),
    headers: z.record(z.string().min(1), z.string()).default({}),
    /** also require HTTP 2xx, no `errors` and a non-null `data` */
    expect_no_errors: z.boolean().default(false),
    /** keep the whole response body in this chain variable (exported) */
    store_as: VarName.optional(),
    timeout: z.number().positive().max(600).default(15),
  })
  .strict();

/** A GraphQL response: a JSON object with `data` or `errors`. */
export function isGraphqlResponse(body: unknown): body is { data?: unknown; errors?: unknown } {
  return !!body && typeof body === 'object' && !Array.isArray(body) && ('data' in body || 'errors' in body);
}

/**
 * GRAPHQL_QUERY: POST {query, variables, operationName} as JSON in the chain's session; the
 * response becomes the chain's last response (P06/P07/P15 read it). Passes when the answer is a
 * GraphQL response (a JSON object with `data` or `errors`), and with expect_no_errors when it is
 * also a 2xx without errors and with data.
 */
export const GRAPHQL_QUERY = definePrimitive({
  id: 'GRAPHQL_QUERY',
  name: 'graphql_query',
  schema: GraphqlQuerySchema,
  produces: (i) => ({ exported: typeof i.store_as === 'string' ? [i.store_as] : [], local: ['last_status', 'last_body'] }),
  async run(input, ctx) {
    const payload: Record<string, Json> = { query: input.query };
    if (input.variables) payload.variables = input.variables as Json;
    if (input.operation_name) payload.operationName = input.operation_name;
    let res;
    try {
      res = await sessionRequest(ctx, { method: 'POST', path: input.endpoint, headers: input.headers, json: payload, timeoutMs: input.timeout * 1000 });
    } catch (e) {
      if (e instanceof HttpTransportError) return { passed: false, message: `POST ${input.endpoint}: ${e.message}` };
      throw e;
    }
    const body = res.body;
    if (input.store_as && body !== undefined && body !== '') ctx.setVar(input.store_as, body as Json);
    const head = `POST ${input.endpoint} → ${res.status}`;
    if (!isGraphqlResponse(body)) return { passed: false, message: `${head}: not a GraphQL response (${show(typeof body === 'string' ? body.slice(0, 120) : body)})`, data: { status: res.status } };
    const errors = Array.isArray(body.errors) ? body.errors : body.errors ? [body.errors] : [];
    const firstError = errors.length ? show((errors[0] as { message?: unknown })?.message ?? errors[0]) : '';
    if (input.expect_no_errors) {
      const problems = [
        res.status < 200 || res.status >= 300 ? `status ${res.status}` : '',
        errors.length ? `${errors.length} error(s), first: ${firstError}` : '',
        body.data === null || body.data === undefined ? 'no data' : '',
      ].filter(Boolean);
      if (problems.length) return { passed: false, message: `${head}: ${problems.join('; ')}`, data: { status: res.status, errors: errors.slice(0, 3) } };
    }
    return { passed: true, message: `${head}${errors.length ? `; ${errors.length} error(s), first: ${firstError}` : '; no errors'}`, data: { status: res.status, errors: errors.slice(0, 3) } };
  },
});
