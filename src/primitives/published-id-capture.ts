import type { Json } from '../model/json';
import { toJson } from './compare';
import type { PrimitiveContext } from './types';

/**
 * Compatibility for published SaaSBench DAGs, which read ids that their evaluator copied out of
 * responses implicitly (`{{topic_id}}`, `{{id}}`, `{{category.id}}`). Switched on only for tasks in
 * the published layout (env.compat.publishedIdCapture). Unlike the published evaluator it is
 * chain-scoped (exported to dependents like any capture, merged in topological order), the latest
 * response wins, and it only reads 2xx JSON bodies. The rules, in order:
 *  1. body = the JSON object, or the first element of a JSON array body;
 *  2. every top-level string/number field named `id`, `*_id`, `key`, `api_key`, `token`, `uuid` or
 *     `username` → a variable of the same name;
 *  3. every top-level object field `k` with a scalar `id` → `k_id` = that id and `k` = the object
 *     (so `{{category.id}}` resolves); its own `*_id` fields → variables unless rule 2 set them;
 *  4. `post.id` or `data.id` (or `data[0].id`) → `id` when the body has no top-level `id`.
 */
export const ID_LIKE = /^(id|key|api_key|token|uuid|username|[A-Za-z0-9_]+_id)$/;

const isScalar = (v: unknown): v is string | number => typeof v === 'string' || typeof v === 'number';
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function publishedIds(status: number, body: unknown): Record<string, Json> {
  if (status < 200 || status > 299) return {};
  const b = Array.isArray(body) ? body[0] : body;
  if (!isObj(b)) return {};
  const out: Record<string, Json> = {};
  const top = new Set<string>();
  for (const [k, v] of Object.entries(b)) {
    if (isScalar(v) && ID_LIKE.test(k)) {
      out[k] = v;
      top.add(k);
    }
  }
  for (const [k, v] of Object.entries(b)) {
    const o = k === 'data' && Array.isArray(v) ? v[0] : v;
    if (!isObj(o) || !isScalar(o.id)) continue;
    if (!top.has(`${k}_id`)) out[`${k}_id`] = o.id;
    out[k] = toJson(o);
    for (const [j, x] of Object.entries(o)) if (j !== 'id' && isScalar(x) && ID_LIKE.test(j) && !top.has(j) && !(j in out)) out[j] = x;
    if ((k === 'post' || k === 'data') && !top.has('id')) out.id = o.id;
  }
  return out;
}

/**
 * Run the capture on the chain's last response. Off for native tasks, for nodes that opted out
 * (`id_capture: false`, published `no_entity_capture`: ctx.idCapture) and for SQL results; steps
 * that opt out themselves (P04 `id_capture: false`) do not call it.
 */
export function capturePublishedIds(ctx: PrimitiveContext): string[] {
  if (!ctx.env.compat?.publishedIdCapture || ctx.idCapture === false || !ctx.state.last || ctx.state.last.method === 'SQL') return [];
  const ids = publishedIds(ctx.state.last.status, ctx.state.last.body);
  for (const [k, v] of Object.entries(ids)) ctx.setVar(k, v);
  return Object.keys(ids);
}
