import type { Json } from '../model/json';
import { SaasbenchError } from '../errors';

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}$/;

export class UnresolvedPlaceholderError extends SaasbenchError {
  static override readonly nonRetryable = true;
  constructor(readonly names: string[]) {
    super(`unresolved placeholder${names.length > 1 ? 's' : ''}: ${names.map((n) => `{{${n}}}`).join(', ')}`);
    this.name = 'UnresolvedPlaceholderError';
  }
}

function lookup(vars: Record<string, Json>, dotted: string): Json | undefined {
  if (dotted in vars) return vars[dotted];
  let cur: Json | undefined = vars;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = Array.isArray(cur) ? cur[Number(part)] : (cur as Record<string, Json>)[part];
    if (cur === undefined) return undefined;
  }
  return cur;
}

/**
 * `{{raw:text}}` is sent as `{{text}}`: braces that belong to the content (a mustache binding in a
 * rubric, a Django template in an uploaded field), not placeholders of the chain.
 */
const RAW = /\{\{raw:([^{}]*)\}\}/g;
const unescape = (s: string) => (s.includes('{{raw:') ? s.replace(RAW, (_m, t: string) => `{{${t}}}`) : s);

function render(v: Json): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Replace `{{name}}` / `{{a.b}}` in every string of `value`. A string that is exactly one
 * placeholder takes the variable's JSON type (so ids stay numbers); embedded ones are rendered as
 * text (JSON for non-strings — never Python-style `True`). Unresolved names throw, naming them.
 */
export function resolveTemplates<T>(value: T, vars: Record<string, Json>, opts: { keep?: ReadonlySet<string> } = {}): T {
  const missing = new Set<string>();
  // names the primitive resolves itself (P13's {{username}} in a login body): left as written
  const kept = (name: string) => !!opts.keep?.has(name.split('.')[0]);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const whole = WHOLE.exec(v);
      if (whole && kept(whole[1])) return v;
      if (whole) {
        const found = lookup(vars, whole[1]);
        if (found === undefined) missing.add(whole[1]);
        return found === undefined ? v : found;
      }
      return unescape(v.replace(PLACEHOLDER, (m, name: string) => {
        if (kept(name)) return m;
        const found = lookup(vars, name);
        if (found === undefined) {
          missing.add(name);
          return m;
        }
        return render(found);
      }));
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  const out = walk(value) as T;
  if (missing.size) throw new UnresolvedPlaceholderError([...missing]);
  return out;
}

/** Names of every placeholder in a value (for load-time checks). */
export function placeholdersIn(value: unknown, acc: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string') for (const m of value.matchAll(PLACEHOLDER)) acc.add(m[1]);
  else if (Array.isArray(value)) value.forEach((x) => placeholdersIn(x, acc));
  else if (value && typeof value === 'object') Object.values(value).forEach((x) => placeholdersIn(x, acc));
  return acc;
}

/**
 * Like resolveTemplates, but never throws: placeholders it cannot resolve stay as written and are
 * listed (the dry run shows a task author what a step will send and what it still waits for).
 */
export function resolvePartially<T>(value: T, vars: Record<string, Json>): { value: T; missing: string[] } {
  const missing = new Set<string>();
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const whole = WHOLE.exec(v);
      if (whole) {
        const found = lookup(vars, whole[1]);
        if (found === undefined) missing.add(whole[1]);
        return found === undefined ? v : found;
      }
      return v.replace(PLACEHOLDER, (m, name: string) => {
        const found = lookup(vars, name);
        if (found === undefined) missing.add(name);
        return found === undefined ? m : render(found);
      });
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { value: walk(value) as T, missing: [...missing] };
}
