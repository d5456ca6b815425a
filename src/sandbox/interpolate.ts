// `${VAR}` interpolation and `.env` parsing with docker compose semantics, kept separate so the
// loader stays about structure and this stays about strings.
import { SaasbenchError } from '../errors';

export interface InterpolationResult {
  value: string;
  /** Variables referenced without a default and not set anywhere (compose substitutes ''). */
  missing: string[];
}

export class InterpolationSyntaxError extends SaasbenchError {
  static override readonly nonRetryable = true;
  override name = 'InterpolationSyntaxError';
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/**
 * Supports `$$`, `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?err}`,
 * `${VAR?err}`, `${VAR:+alt}`, `${VAR+alt}`; defaults may themselves contain interpolations.
 */
export function interpolate(input: string, env: Record<string, string | undefined>): InterpolationResult {
  const missing: string[] = [];
  const value = expand(input, env, missing);
  return { value, missing };
}

function expand(s: string, env: Record<string, string | undefined>, missing: string[]): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const ch = s[i];
    if (ch !== '$') {
      out += ch;
      i++;
      continue;
    }
    const next = s[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (next === '{') {
      const end = matchBrace(s, i + 1);
      if (end < 0) throw new InterpolationSyntaxError(`unterminated "\${" in ${JSON.stringify(s)}`);
      out += braced(s.slice(i + 2, end), env, missing);
      i = end + 1;
      continue;
    }
    const m = NAME.exec(s.slice(i + 1));
    if (m) {
      out += lookup(m[0], env, missing);
      i += 1 + m[0].length;
      continue;
    }
    // A lone "$" (e.g. "cost: 5$") is literal in compose.
    out += '$';
    i++;
  }
  return out;
}

function matchBrace(s: string, open: number): number {
  let depth = 0;
  for (let j = open; j < s.length; j++) {
    if (s[j] === '{') depth++;
    else if (s[j] === '}' && --depth === 0) return j;
  }
  return -1;
}

function braced(body: string, env: Record<string, string | undefined>, missing: string[]): string {
  const m = NAME.exec(body);
  if (!m) throw new InterpolationSyntaxError(`invalid interpolation "\${${body}}"`);
  const name = m[0];
  const rest = body.slice(name.length);
  if (rest === '') return lookup(name, env, missing);
  const op = /^(:-|-|:\?|\?|:\+|\+)/.exec(rest);
  if (!op) throw new InterpolationSyntaxError(`invalid interpolation "\${${body}}"`);
  const arg = rest.slice(op[0].length);
  const raw = env[name];
  const set = raw !== undefined;
  const nonEmpty = set && raw !== '';
  switch (op[0]) {
    case ':-':
      return nonEmpty ? raw! : expand(arg, env, missing);
    case '-':
      return set ? raw! : expand(arg, env, missing);
    case ':?':
    case '?':
      if (op[0] === ':?' ? nonEmpty : set) return raw!;
      throw new InterpolationSyntaxError(`required variable ${name} is missing a value: ${expand(arg, env, missing)}`);
    case ':+':
      return nonEmpty ? expand(arg, env, missing) : '';
    default:
      return set ? expand(arg, env, missing) : '';
  }
}

function lookup(name: string, env: Record<string, string | undefined>, missing: string[]): string {
  const v = env[name];
  if (v === undefined) {
    missing.push(name);
    return '';
  }
  return v;
}

/**
 * Parses a dotenv file the way compose does: `KEY=VAL`, `export KEY=VAL`, quotes, comments. Not
 * the dotenv package (used for our own tools.env): compose differs from it where a published task
 * can notice — `#` starts a comment only after whitespace (`A=a#b` is `a#b`, dotenv says `a`),
 * double quotes unescape `\"` and `\\` (dotenv leaves them), and backticks are not quotes.
 */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  for (let n = 0; n < lines.length; n++) {
    let line = lines[n].trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('export ')) line = line.slice(7).trimStart();
    const eq = line.indexOf('=');
    if (eq <= 0) continue; // compose ignores bare names in env files without a value source
    const key = line.slice(0, eq).trim();
    let val = line.slice(eq + 1).trimStart();
    const q = val[0];
    if (q === '"' || q === "'") {
      // Multi-line quoted values are allowed; keep reading until the closing quote.
      let body = val.slice(1);
      let close = findClosingQuote(body, q);
      while (close < 0 && n + 1 < lines.length) {
        body += '\n' + lines[++n];
        close = findClosingQuote(body, q);
      }
      val = close < 0 ? body : body.slice(0, close);
      if (q === '"') val = val.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    } else {
      const hash = val.search(/\s#/);
      if (hash >= 0) val = val.slice(0, hash);
      val = val.trimEnd();
    }
    out[key] = val;
  }
  return out;
}

function findClosingQuote(s: string, q: string): number {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && q === '"') {
      i++;
      continue;
    }
    if (s[i] === q) return i;
  }
  return -1;
}
