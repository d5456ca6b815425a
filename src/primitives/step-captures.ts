import type { Json } from '../model/json';
import { toJson } from './compare';
import { queryJsonPath } from './jsonpath';
import { findPrimitive } from './registry';
import type { ChainState } from './types';
import type { NodeCapture } from '../model/capture';

export { NodeCaptureSchema, type NodeCapture } from '../model/capture';

/**
 * Node-level captures (dag.json `captures`): variables taken from the response a step of the
 * chain leaves, declared beside the chain rather than inside one primitive's inputs. They exist
 * for values the published evaluators copied out of responses by rules of their own (node-id
 * keywords, "last created" keys, per-step result references — docs/compatibility.md#chain-context):
 * the benchmark pack and the dialects write those rules down here, so the load-time placeholder
 * check, the published-context ordering edges and the run all see the same, reviewable capture.
 *
 * A capture never fails its step: a value that is not there is simply not set (recorded in the
 * step's record), and a later step that reads it fails naming the variable — as a published
 * heuristic that found nothing left the placeholder unset.
 */

/** Canonical primitives whose steps leave a response (HTTP, query, GraphQL, login) a capture can read. */
const RESPONSE_TYPES = new Set(['P04', 'P05', 'P08', 'P13', 'P14', 'P16', 'P23', 'P24', 'P26', 'P27', 'P28', 'P29', 'GRAPHQL_QUERY', 'METADATA_INGEST', 'OAUTH_FLOW']);

/** Does a step of this type leave a response to capture from? */
export function leavesResponse(type: string): boolean {
  const p = findPrimitive(type);
  return !!p && RESPONSE_TYPES.has(p.id.toUpperCase());
}

/** The step after which a capture's variable exists: its own step, else the first step that leaves a response. */
export function captureStep(c: { step?: number }, chain: readonly { type: string }[]): number | undefined {
  if (c.step !== undefined) return c.step;
  const i = chain.findIndex((s) => leavesResponse(s.type));
  return i < 0 ? undefined : i;
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === want) return v;
  return undefined;
}

/** Does the request of this response match the capture's `if_request`? */
export function requestMatches(c: Pick<NodeCapture, 'if_request'>, method: string, path: string): boolean {
  const r = c.if_request;
  if (!r) return true;
  const methods = r.method === undefined ? undefined : (Array.isArray(r.method) ? r.method : [r.method]).map((m) => m.toUpperCase());
  if (methods && !methods.includes(method.toUpperCase())) return false;
  return r.path === undefined || new RegExp(r.path).test(path);
}

function found(c: NodeCapture, last: NonNullable<ChainState['last']>): Json | undefined {
  const { status, headers, body } = last;
  if (c.when === '2xx' && (status < 200 || status > 299)) return undefined;
  if (!requestMatches(c, last.method, last.path)) return undefined;
  let value: Json | undefined;
  for (const p of Array.isArray(c.path) ? c.path : [c.path]) {
    if (c.from === 'header') value = headerValue(headers, p);
    else {
      const hit = queryJsonPath(body, p)[0];
      value = hit === undefined || hit === null ? undefined : toJson(hit);
    }
    if (value !== undefined) break;
  }
  if (value === undefined || !c.pattern) return value;
  const m = new RegExp(c.pattern).exec(typeof value === 'string' ? value : JSON.stringify(value));
  return m ? (m[1] ?? m[0]) : undefined;
}

export interface CaptureOutcome {
  captured: Record<string, Json>;
  /** names whose value was not in the response */
  missing: string[];
  /** names kept because the chain already had them (keep_existing) */
  kept: string[];
}

/**
 * Apply the node's captures after step `index` ran. Only a step that left a new response (state.last
 * changed) is read. Exported captures also enter the node's namespace (`{{NODE_ID.name}}`).
 */
export function applyCaptures(captures: readonly NodeCapture[], index: number, state: ChainState, before: ChainState['last'], nodeId: string): CaptureOutcome | undefined {
  const mine = captures.filter((c) => c.step === undefined || c.step === index);
  const last = state.last;
  if (!mine.length || !last || last === before) return undefined;
  const out: CaptureOutcome = { captured: {}, missing: [], kept: [] };
  for (const c of mine) {
    if (c.keep_existing && state.vars[c.name] !== undefined) {
      out.kept.push(c.name);
      continue;
    }
    const v = found(c, last);
    if (v === undefined) {
      // a capture without a step looks at every response: only the named step's absence is news
      if (c.step !== undefined) out.missing.push(c.name);
      continue;
    }
    out.captured[c.name] = v;
    state.vars[c.name] = v;
    if (c.local) continue;
    state.exports[c.name] = v;
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(nodeId)) {
      const ns = state.exports[nodeId];
      state.exports[nodeId] = { ...(ns && typeof ns === 'object' && !Array.isArray(ns) ? ns : {}), [c.name]: v };
    }
  }
  return out;
}
