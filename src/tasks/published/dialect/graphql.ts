import type { StepDialect } from './types';
import { rename, type Inputs } from './util';

/** Tasks whose evaluator's P22 was a stub that always failed. */
const P22_STUB: Record<string, string> = {
  aoiwqoiq: 'not implemented',
  jzssnoqp: 'not implemented',
  xayqujrv: '"GraphQL not in scope for this REST-only platform" (always fails)',
};
/** The endpoint each task's evaluator used when the step names none. */
const DEFAULT_ENDPOINT: Record<string, string> = { ychlukjm: '/api/v2/graphql', fpumriig: '/graphql', rjhcjrst: '/graphql', gavmyneb: '/api/graphql' };
/** Tasks whose evaluator defaulted expect_no_errors to true (the canonical default is false). */
const NO_ERRORS_BY_DEFAULT = ['rjhcjrst', 'gavmyneb'];

/** P22 → GRAPHQL_QUERY; ychlukjm's P_INGEST → METADATA_INGEST. */
export const graphqlDialect: StepDialect = {
  types: ['P22', 'P_INGEST'],
  normalize(type, raw, ctx) {
    const i: Inputs = { ...raw };
    if (type === 'P22') {
      if (P22_STUB[ctx.task]) return { type: 'PUBLISHED_STUB', inputs: { published_type: 'P22', reason: `task_${ctx.task}'s evaluator: ${P22_STUB[ctx.task]}`, published_inputs: i } };
      if ('path' in i) rename(i, 'path', 'endpoint', ctx, 'the GraphQL endpoint\'s path');
      if (!('endpoint' in i) && DEFAULT_ENDPOINT[ctx.task]) {
        i.endpoint = DEFAULT_ENDPOINT[ctx.task];
        ctx.spelling('(no endpoint)', `endpoint: ${DEFAULT_ENDPOINT[ctx.task]}`, 'the endpoint this task\'s evaluator used by default');
      }
      if (!('expect_no_errors' in i) && NO_ERRORS_BY_DEFAULT.includes(ctx.task)) i.expect_no_errors = true;
      if ('token' in i) {
        const t = i.token;
        delete i.token;
        i.headers = { ...(typeof i.headers === 'object' && i.headers ? (i.headers as Inputs) : {}), Authorization: `Bearer ${String(t)}` };
        ctx.spelling('token', 'headers.Authorization: Bearer <token>', 'send the query with this bearer token');
      }
      return { type: 'GRAPHQL_QUERY', inputs: i };
    }
    const map: [string, string, string][] = [
      ['entityType', 'entity_type', 'the entity type (dataset, glossaryTerm, …)'],
      ['entityUrn', 'entity_urn', 'the entity URN'],
      ['aspectName', 'aspect_name', 'the aspect name'],
      ['aspectValue', 'aspect_value', 'the aspect as JSON text'],
      ['changeType', 'change_type', 'the change type (UPSERT, …)'],
    ];
    for (const [from, to, meaning] of map) rename(i, from, to, ctx, meaning);
    return { type: 'METADATA_INGEST', inputs: i };
  },
};
