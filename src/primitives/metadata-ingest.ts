import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { sessionRequest } from './auth/request';
import { HttpTransportError } from '../http/request';
import { definePrimitive } from './types';

export const MetadataIngestSchema = z
  .object({
    entity_type: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/).default('dataset'),
    /** the entity URN (urn:li:…); checked when the step runs, since it is often a placeholder */
    entity_urn: z.string().min(1),
    aspect_name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/),
    /** the aspect as JSON text, or as a JSON object (serialized) */
    aspect_value: z.union([z.string().min(1), z.record(z.string(), JsonSchema)]),
    change_type: z.enum(['UPSERT', 'CREATE', 'UPDATE', 'DELETE', 'PATCH', 'RESTATE', 'CREATE_ENTITY']).default('UPSERT'),
    /** tried in order until one accepts the proposal */
    transports: z.array(z.enum(['graphql', 'restli'])).min(1).default(['graphql', 'restli']),
    graphql_endpoint: z.string().startsWith('/').default('/api/graphql'),
    restli_path: z.string().startsWith('/').default('/aspects?action=ingestProposal'),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (typeof v.aspect_value === 'string') {
      try {
        JSON.parse(v.aspect_value);
      } catch {
        ctx.addIssue({ code: 'custom', path: ['aspect_value'], message: 'aspect_value is not JSON text' });
      }
    }
  });

const gqlString = (s: string) => JSON.stringify(s);

/**
 * METADATA_INGEST: submit one metadata change proposal (DataHub-style: entity URN, aspect name,
 * aspect JSON, change type) — first as the GraphQL mutation `ingestProposal`, then as the Rest.li
 * action `POST /aspects?action=ingestProposal`. Passes when one of them accepted it (GraphQL:
 * `data.ingestProposal` set; Rest.li: 2xx with `value: "success"`). The chain's last response is
 * `{value: "success"|"failed", data: {ingestProposal}, urn}` for the P07 steps that follow.
 */
export const METADATA_INGEST = definePrimitive({
  id: 'METADATA_INGEST',
  name: 'metadata_ingest',
  schema: MetadataIngestSchema,
  produces: () => ({ exported: [], local: ['last_status', 'last_body'] }),
  async run(input, ctx) {
    if (!input.entity_urn.startsWith('urn:')) return { passed: false, message: `entity_urn ${JSON.stringify(input.entity_urn.slice(0, 120))} is not a URN` };
    const value = typeof input.aspect_value === 'string' ? input.aspect_value : JSON.stringify(input.aspect_value);
    const tried: string[] = [];
    let lastStatus = 0;
    for (const t of input.transports) {
      try {
        if (t === 'graphql') {
          const query = `mutation { ingestProposal(input: { entityType: ${input.entity_type.toUpperCase()}, entityUrn: ${gqlString(input.entity_urn)}, aspectName: ${gqlString(input.aspect_name)}, aspect: { contentType: "application/json", value: ${gqlString(value)} }, changeType: ${input.change_type} }) }`;
          const r = await sessionRequest(ctx, { method: 'POST', path: input.graphql_endpoint, json: { query }, timeoutMs: 15_000, record: false });
          lastStatus = r.status;
          const urn = (r.body as { data?: { ingestProposal?: unknown } } | undefined)?.data?.ingestProposal;
          tried.push(`GraphQL ${input.graphql_endpoint} → ${r.status}${urn ? '' : ' (no ingestProposal)'}`);
          if (r.status === 200 && urn) return accepted(typeof urn === 'string' ? urn : input.entity_urn, (r.body as { data: Json }).data, r.status, tried, input.graphql_endpoint);
        } else {
          const proposal = { entityType: input.entity_type, entityUrn: input.entity_urn, aspectName: input.aspect_name, changeType: input.change_type, aspect: { contentType: 'application/json', value } };
          const r = await sessionRequest(ctx, { method: 'POST', path: input.restli_path, json: { proposal }, timeoutMs: 15_000, record: false });
          lastStatus = r.status;
          const ok = r.status >= 200 && r.status < 300 && (r.body as { value?: unknown } | undefined)?.value === 'success';
          tried.push(`Rest.li ${input.restli_path.split('?')[0]} → ${r.status}${ok ? '' : ' (no value "success")'}`);
          if (ok) return accepted(input.entity_urn, { ingestProposal: input.entity_urn }, r.status, tried, input.restli_path);
        }
      } catch (e) {
        if (!(e instanceof HttpTransportError)) throw e;
        tried.push(`${t}: ${e.message}`);
      }
    }
    ctx.state.last = { method: 'POST', path: input.graphql_endpoint, status: lastStatus, headers: {}, body: { value: 'failed', data: { ingestProposal: null }, urn: null }, elapsedMs: 0 };
    return { passed: false, message: `${input.aspect_name} of ${input.entity_urn} not accepted: ${tried.join('; ')}`, data: { tried } };

    function accepted(urn: string, data: Json, status: number, tried: string[], path: string) {
      ctx.state.last = { method: 'POST', path, status, headers: {}, body: { value: 'success', data, urn }, elapsedMs: 0 };
      return { passed: true, message: `${input.change_type} ${input.aspect_name} of ${urn}: ${tried[tried.length - 1]}`, data: { tried } };
    }
  },
});
