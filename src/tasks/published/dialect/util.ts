import type { DialectContext } from './types';

export type Inputs = Record<string, unknown>;

/**
 * Keys that only carry an author's note (`_round26_test_bug_fix`, `comment`, …). They are kept on
 * the step as notes — shown in the node record, never used to score. A dialect that knows an
 * underscore key with a meaning (e.g. kmasmnil's `_store_id_as`) maps it before this runs.
 */
export const NOTE_KEYS = ['comment', 'comments', 'description', 'purpose', 'note', 'notes'];
export const isNoteKey = (k: string) => k.startsWith('_') || NOTE_KEYS.includes(k);

/** Move note keys out of `obj` (in place) into the returned record. */
export function takeNotes(obj: Inputs): Record<string, unknown> {
  const notes: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    if (isNoteKey(k)) {
      notes[k] = obj[k];
      delete obj[k];
    }
  }
  return notes;
}

/**
 * Rename `from` to `to` in place when present. When both are present with different values the
 * step is ambiguous: an issue, and `to` wins. Returns true when the spelling was used.
 */
export function rename(obj: Inputs, from: string, to: string, ctx: DialectContext, meaning: string, where = 'inputs', label = from, canonicalLabel = to): boolean {
  if (!(from in obj)) return false;
  const v = obj[from];
  delete obj[from];
  if (to in obj && JSON.stringify(obj[to]) !== JSON.stringify(v)) {
    ctx.issue(`${where}.${from}`, `"${from}" and "${to}" are both given with different values`);
    return true;
  }
  obj[to] = v;
  ctx.spelling(label, canonicalLabel, meaning);
  return true;
}

export const isObject = (v: unknown): v is Inputs => !!v && typeof v === 'object' && !Array.isArray(v);

/** A shallow copy of the inputs (dialects edit their copy, never the parsed file). */
export const copy = (v: Inputs): Inputs => JSON.parse(JSON.stringify(v)) as Inputs;
