import type { DialectContext } from './types';
import { isObject } from './util';

/**
 * What a published P06/P07/P15 step can learn from its chain: which earlier step produced the
 * response it reads, and which names earlier steps saved whole responses under. The published
 * evaluators resolved these at run time from one shared context; we decide them at load time so
 * the canonical step says exactly what it reads.
 */

/** Published step types after which "the last response" is theirs (HTTP, SQL, command, GraphQL). */
const RESPONSE_TYPES = new Set(['P04', 'P05', 'P08', 'P12', 'P14', 'P16', 'P22', 'P23', 'P25', 'P26', 'P27']);

const typeOf = (s: unknown): string => (isObject(s) ? String(s.type ?? s.primitive ?? '').toUpperCase() : '');

/** Index and type of the nearest earlier step whose response a check reads, if any. */
export function lastResponseStep(ctx: DialectContext): { index: number; type: string } | undefined {
  const chain = ctx.chain ?? [];
  for (let i = (ctx.index ?? chain.length) - 1; i >= 0; i--) {
    const t = typeOf(chain[i]);
    if (RESPONSE_TYPES.has(t)) return { index: i, type: t };
  }
  return undefined;
}

/** The first column the SQL of a published P08 step selects (`SELECT DISTINCT state, COUNT(*) …` → `state`). */
export function firstSqlColumn(step: unknown): string | undefined {
  if (!isObject(step) || !isObject(step.inputs)) return undefined;
  const sql = step.inputs.sql ?? step.inputs.query;
  const m = typeof sql === 'string' ? /^\s*SELECT\s+(?:DISTINCT\s+)?(?:[A-Za-z_][A-Za-z0-9_]*\.)?([A-Za-z_][A-Za-z0-9_]*)(?:\s+AS\s+([A-Za-z_][A-Za-z0-9_]*))?\s*(?:,|\s+FROM\b)/i.exec(sql) : null;
  return m ? m[2] ?? m[1] : undefined;
}

/** Does any step before this one send an HTTP request? */
export function hasEarlierHttp(ctx: DialectContext): boolean {
  const chain = ctx.chain ?? [];
  return chain.slice(0, ctx.index ?? 0).some((s) => ['P04', 'P05', 'P14', 'P16', 'P22', 'P23', 'P26', 'P27'].includes(typeOf(s)));
}

/** Keys under which published steps saved a whole response for later steps. */
const RESPONSE_SAVE_KEYS = ['save_as', 'store_response_as', 'capture_response_as', 'save_response_as'];

/** Names earlier steps of the chain saved whole responses under (`via_bills`, `first`, …). */
export function savedResponseNames(ctx: DialectContext): Set<string> {
  const names = new Set<string>();
  const chain = ctx.chain ?? [];
  for (const s of chain.slice(0, ctx.index ?? 0)) {
    if (!isObject(s)) continue;
    const inputs = isObject(s.inputs) ? s.inputs : {};
    for (const k of RESPONSE_SAVE_KEYS) {
      for (const v of [s[k], inputs[k]]) if (typeof v === 'string' && v) names.add(v);
    }
    // P04 capture_as (jzssnoqp) and the login step's store_as (sgdoserd P13, ychlukjm P22) name whole responses too
    if (['P04', 'P13', 'P22'].includes(typeOf(s))) for (const k of ['capture_as', 'store_as']) if (typeof inputs[k] === 'string' && inputs[k]) names.add(inputs[k] as string);
  }
  return names;
}

/**
 * A published reference to "the response of step N" (`{{step_1}}`, `{{from_step_2}}`, gmdnohlg,
 * ychlukjm) or "of the last P04" (`{{from_P04}}`, pkvwdnhj): when it names the step whose response
 * is the chain's last one, the canonical step simply reads the last response. Returns an error
 * message otherwise.
 */
export function stepReference(text: string, ctx: DialectContext): { ok: true; label: string } | { ok: false; message: string } | undefined {
  const m = /^\{\{\s*(?:step_|from_step_)(\d+)\s*\}\}$/.exec(text);
  const p = /^\{\{\s*from_(P\d+)\s*\}\}$/i.exec(text);
  if (!m && !p) return undefined;
  const last = lastResponseStep(ctx);
  if (!last) return { ok: false, message: `${text}: no earlier step in this chain produced a response` };
  if (m && Number(m[1]) !== last.index) return { ok: false, message: `${text} is not the chain's latest response (step ${last.index}, ${last.type}); only the latest response can be checked` };
  if (p && p[1].toUpperCase() !== last.type) return { ok: false, message: `${text}: the chain's latest response comes from ${last.type}` };
  return { ok: true, label: m ? '{{step_N}}' : `{{from_${p![1].toUpperCase()}}}` };
}
