import { P01 } from './p01-file-exists';
import { P02 } from './p02-file-content-match';
import { P03 } from './p03-file-count';
import { P04 } from './p04-http-request';
import { P05 } from './p05-api-crud';
import { P06 } from './p06-json-schema-match';
import { P07 } from './p07-json-value-assert';
import { P08 } from './p08-db-query';
import { P09 } from './p09-db-table-exists';
import { P10 } from './p10-db-column-check';
import { P11 } from './p11-db-index-check';
import { P12 } from './p12-docker-exec';
import { P13 } from './p13-auth-login';
import { P14 } from './p14-permission-check';
import { P15 } from './p15-status-code-assert';
import { P16 } from './p16-response-time-check';
import { P21 } from './p21-log-content-check';
import { P23 } from './p23-file-upload-download';
import { P24 } from './p24-queue-job-check';
import { P26 } from './p26-search-query';
import { P27 } from './p27-webhook-delivery';
import { P28 } from './p28-email-delivery';
import { P29 } from './p29-multi-step-workflow';
import { SCREENSHOT } from './browser-screenshot';
import { RENDER_DOM } from './browser-render-dom';
import { PUBLISHED_STUB } from './published-stub';
import { BROWSER_INTERACT } from './browser-interact';
import { DOM_ASSERT } from './dom-assert';
import { WEBSOCKET_CHECK } from './websocket-check';
import { GRAPHQL_QUERY } from './graphql-query';
import { METADATA_INGEST } from './metadata-ingest';
import { TOTP_CODE } from './totp-code';
import { OAUTH_FLOW } from './oauth-flow';
import { LAST_VARS_LOCAL } from './auth/request';
import type { Json } from '../model/json';
import type { Primitive } from './types';

const LAST_VARS = LAST_VARS_LOCAL;

const names = (v: unknown): string[] => (v && typeof v === 'object' ? Object.keys(v as object) : []);
const one = (v: unknown): string[] => (typeof v === 'string' && v ? [v] : []);

/** P04 exports its captures and save_as; previous and the last-response variables stay in the chain. */
const P04WithProduces: Primitive = {
  ...(P04 as unknown as Primitive),
  produces: (i) => ({ exported: [...names(i.capture), ...one(i.save_as)], local: ['previous', ...LAST_VARS] }),
};

const withProduces = (p: Primitive, produces: Primitive['produces']): Primitive => ({ ...p, produces });

const NAMESPACE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Captures are also exported under the node's id, so a dependent can name the producer when two
 * ancestors capture the same name: `{{CREATE_TOPIC.topic_id}}` (the plain `{{topic_id}}` is the
 * later ancestor's in topological order). Only ids that are valid variable names get a namespace.
 */
function namespaced(p: Primitive): Primitive {
  return {
    ...p,
    async run(input, ctx) {
      const out = await p.run(input, ctx);
      if (NAMESPACE.test(ctx.nodeId)) {
        const own: Record<string, Json> = {};
        for (const [k, v] of Object.entries(ctx.state.exports)) if (k !== ctx.nodeId) own[k] = v;
        if (Object.keys(own).length) ctx.state.exports[ctx.nodeId] = own;
      }
      return out;
    },
  };
}

/** Every primitive saasbench runs. Adding one = one module + one line here. */
export const CATALOGUE: Primitive[] = ([
  P01,
  P02,
  P03,
  P04WithProduces,
  P05,
  P06,
  P07,
  withProduces(P08 as unknown as Primitive, (i) => ({ exported: P08.produces!(i).exported, local: LAST_VARS })),
  P09,
  P10,
  P11,
  P12,
  P13,
  P14,
  P15,
  P16,
  P21,
  P23,
  P24,
  P26,
  P27,
  P28,
  P29,
  SCREENSHOT,
  RENDER_DOM,
  BROWSER_INTERACT,
  DOM_ASSERT,
  WEBSOCKET_CHECK,
  GRAPHQL_QUERY,
  METADATA_INGEST,
  TOTP_CODE,
  OAUTH_FLOW,
  PUBLISHED_STUB,
] as Primitive[]).map(namespaced);
