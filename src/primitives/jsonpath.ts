import { JSONPath } from 'jsonpath-plus';

/**
 * JSONPath (jsonpath-plus dialect) over a response body. A path without a leading `$` is read as
 * relative to the root (`data.id` ≡ `$.data.id`), as published DAGs sometimes write it.
 * Returns every match, in document order; [] when nothing matches.
 */
export function normalizeJsonPath(path: string): string {
  const p = path.trim();
  if (p.startsWith('$')) return p;
  return p.startsWith('[') ? `$${p}` : `$.${p}`;
}

export function queryJsonPath(body: unknown, path: string): unknown[] {
  const p = normalizeJsonPath(path);
  if (p === '$') return [body];
  if (body === null || body === undefined || typeof body !== 'object') return [];
  const out = JSONPath({ path: p, json: body as object, wrap: true, eval: 'safe' }) as unknown[] | undefined;
  return Array.isArray(out) ? out : [];
}

/**
 * Dotted path (`user.id`, `items.0.name`) into a value: object keys, and numeric segments index
 * arrays. Returns `{found:false}` when a segment is missing (a present `null` is found).
 */
export function dottedGet(body: unknown, dotted: string): { found: boolean; value?: unknown } {
  let cur: unknown = body;
  for (const seg of dotted.split('.')) {
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(seg)) return { found: false };
      const i = Number(seg);
      if (i >= cur.length) return { found: false };
      cur = cur[i];
    } else if (cur !== null && typeof cur === 'object') {
      if (!Object.prototype.hasOwnProperty.call(cur, seg)) return { found: false };
      cur = (cur as Record<string, unknown>)[seg];
    } else {
      return { found: false };
    }
    if (cur === undefined) return { found: false };
  }
  return { found: true, value: cur };
}
