import type { Json } from '../model/json';

/** Value comparison shared by P07 (JSON assertions) and P08 (SQL rows). */

/** A JSON copy of a value: Date → ISO text, bigint → decimal text, Buffer → `\\x…` hex, undefined → null. */
export function toJson(v: unknown): Json {
  if (v === undefined) return null;
  const text = JSON.stringify(v, function (this: unknown, k: string, x: unknown) {
    const raw = (this as Record<string, unknown>)[k];
    if (Buffer.isBuffer(raw)) return `\\x${raw.toString('hex')}`;
    return typeof x === 'bigint' ? x.toString() : x;
  });
  return text === undefined ? null : (JSON.parse(text) as Json);
}

/** Strict structural JSON equality: no case folding, no type coercion, key order irrelevant. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Every key of `subset` is in `obj` with a deep-equal value. */
export function isSubset(obj: Record<string, unknown>, subset: Record<string, unknown>): boolean {
  return Object.entries(subset).every(([k, v]) => Object.prototype.hasOwnProperty.call(obj, k) && deepEqual(obj[k], v));
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const NUMERIC = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$/;

/** A number, or a string that is exactly a decimal number (how pg returns bigint/numeric). */
export function asNumeric(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && NUMERIC.test(v)) return Number(v);
  return undefined;
}

/**
 * Equality for SQL values: strict, except that a number and a numeric string compare as numbers
 * (pg returns int8/numeric as strings; DAGs write `{"cnt": 1}` or `"80"`).
 */
export function sqlEqual(actual: unknown, expected: unknown): boolean {
  if (typeof actual === 'number' || typeof actual === 'bigint' || typeof expected === 'number') {
    const a = asNumeric(actual);
    const e = asNumeric(expected);
    return a !== undefined && e !== undefined && a === e;
  }
  return deepEqual(actual, expected);
}

export type NumOp = '>' | '>=' | '<' | '<=' | '==' | '!=';

export function compareNum(a: number, op: NumOp, b: number): boolean {
  switch (op) {
    case '>': return a > b;
    case '>=': return a >= b;
    case '<': return a < b;
    case '<=': return a <= b;
    case '==': return a === b;
    case '!=': return a !== b;
  }
}

/** `">=3"`, `"<5"`, `"==2"`, `"=2"`, `"!=0"`, `"7"` → {op, n}; anything else → undefined. */
export function parseNumericCondition(s: string): { op: NumOp; n: number } | undefined {
  const m = /^\s*(>=|<=|==|!=|=|>|<)?\s*([-+]?(?:\d+\.?\d*|\.\d+))\s*$/.exec(s);
  if (!m) return undefined;
  const op = (m[1] === '=' || m[1] === undefined ? '==' : m[1]) as NumOp;
  return { op, n: Number(m[2]) };
}

/** JSON-ish rendering for messages, cut to `max` characters. */
export function show(v: unknown, max = 200): string {
  let s: string;
  if (v === undefined) s = 'undefined';
  else {
    try {
      s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
    } catch {
      s = String(v);
    }
  }
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** The JSON type name used by `is_type`. */
export function jsonType(v: unknown): 'array' | 'object' | 'string' | 'number' | 'boolean' | 'null' | 'undefined' {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  if (t === 'string' || t === 'number' || t === 'boolean' || t === 'object') return t;
  if (t === 'bigint') return 'number';
  return 'undefined';
}
