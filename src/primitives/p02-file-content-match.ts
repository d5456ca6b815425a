import { z } from 'zod';
import type { Json } from '../model/json';
import { dottedGet } from './jsonpath';
import { candidatePaths, inWorkspace, PathList } from './files';
import { definePrimitive, type PrimitiveContext } from './types';

const MAX_BYTES = 8 * 1024 * 1024;

/** One more required text: a substring, or `{any_of}` — at least one of these substrings. */
const PatternItem = z.union([z.string().min(1), z.object({ any_of: z.array(z.string().min(1)).min(1) }).strict()]);

export const P02Schema = z
  .object({
    path: z.string().min(1).optional(),
    path_any_of: PathList.optional(),
    /** match the chain's last response body (HTTP or query result) instead of a file */
    from_last_response: z.literal(true).optional(),
    /** match the text of a chain variable (dotted, e.g. `previous.stdout` after a P12) instead of a file */
    from_variable: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/).optional(),
    pattern: z.string().min(1).optional(),
    /** several required texts (all must be present); only with contains */
    patterns: z.array(PatternItem).min(1).optional(),
    match_type: z.enum(['contains', 'regex', 'not_contains']).default('contains'),
    /** case-insensitive matching (contains, not_contains and regex) */
    ignore_case: z.boolean().optional(),
  })
  .strict()
  .refine((v) => [v.path !== undefined || v.path_any_of !== undefined, v.from_last_response, v.from_variable !== undefined].filter(Boolean).length === 1, {
    message: 'give path / path_any_of, from_last_response or from_variable (exactly one)',
  })
  .refine((v) => (v.pattern === undefined) !== (v.patterns === undefined), { message: 'give pattern or patterns (exactly one)', path: ['pattern'] })
  .refine((v) => v.patterns === undefined || v.match_type === 'contains', { message: 'patterns applies to match_type contains', path: ['patterns'] })
  .superRefine((v, ctx) => {
    if (v.match_type !== 'regex' || v.pattern === undefined) return;
    try {
      new RegExp(v.pattern, 'm');
    } catch (e) {
      ctx.addIssue({ code: 'custom', path: ['pattern'], message: `invalid regex: ${(e as Error).message}` });
    }
  });
type Input = z.infer<typeof P02Schema>;

/** First match position of the input's pattern(s) in `text`, or undefined; `missing` names absent patterns. */
function search(input: Input, text: string): { matched: boolean; at?: number; missing?: string[] } {
  const fold = (s: string) => (input.ignore_case ? s.toLowerCase() : s);
  const hay = fold(text);
  if (input.match_type === 'regex') {
    const m = new RegExp(input.pattern!, input.ignore_case ? 'mi' : 'm').exec(text);
    return { matched: m !== null, at: m?.index };
  }
  const items = input.patterns ?? [input.pattern!];
  const missing: string[] = [];
  let at: number | undefined;
  for (const item of items) {
    const alts = typeof item === 'string' ? [item] : item.any_of;
    const hits = alts.map((a) => hay.indexOf(fold(a))).filter((i) => i >= 0);
    if (hits.length === 0) missing.push(typeof item === 'string' ? JSON.stringify(item) : `any of ${JSON.stringify(item.any_of)}`);
    else at = at === undefined ? Math.min(...hits) : Math.min(at, ...hits);
  }
  return { matched: missing.length === 0, at: missing.length ? undefined : at, missing };
}

function verdict(input: Input, subject: string, text: string, extra: Record<string, unknown>) {
  const s = search(input, text);
  const passed = input.match_type === 'not_contains' ? !s.matched : s.matched;
  const line = s.at === undefined ? undefined : text.slice(0, s.at).split('\n').length;
  const verb = { contains: 'contains', regex: 'matches', not_contains: 'does not contain' }[input.match_type];
  const what = input.pattern !== undefined ? JSON.stringify(input.pattern) : `${input.patterns!.length} pattern(s)`;
  const why = !passed && s.missing?.length && input.match_type === 'contains' ? ` (missing ${s.missing.join(', ')})` : '';
  return {
    passed,
    message: `${subject} ${passed ? verb : `fails "${input.match_type}"`} ${what}${line ? ` (line ${line})` : ''}${why}`,
    data: { ...extra, match_type: input.match_type, matched: s.matched, line: line ?? null },
  };
}

function textOf(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v ?? null);
}

async function fromChain(input: Input, ctx: PrimitiveContext) {
  if (input.from_last_response) {
    const last = ctx.state.last;
    if (!last) return { passed: false, message: 'no last response in this chain to match' };
    return verdict(input, `the last response (${last.method} ${last.path})`, textOf(last.body), { source: 'last_response' });
  }
  const got = dottedGet(ctx.state.vars as Record<string, Json>, input.from_variable!);
  if (!got.found) return { passed: false, message: `no variable ${input.from_variable} in this chain` };
  return verdict(input, `variable ${input.from_variable}`, textOf(got.value), { source: input.from_variable });
}

/**
 * P02: the first candidate that exists as a file (path, then path_any_of) — or the last response
 * body, or a chain variable's text — must contain the substring(s) (case-sensitive unless
 * ignore_case), match the regex (multiline) or — not_contains — lack the substring. No existing
 * candidate fails, whatever the match type.
 */
export const P02 = definePrimitive({
  id: 'P02',
  name: 'file_content_match',
  schema: P02Schema,
  async run(input, ctx) {
    const { env } = ctx;
    if (input.from_last_response || input.from_variable !== undefined) return fromChain(input, ctx);
    const probed: string[] = [];
    for (const c of candidatePaths(input.path, input.path_any_of)) {
      const abs = inWorkspace(env, c);
      probed.push(abs);
      if ((await env.statPath(abs)) !== 'file') continue;
      const buf = await env.readFile(abs, MAX_BYTES);
      if (buf === null) continue;
      return verdict(input, abs, buf.toString('utf8'), { path: abs, truncated: buf.length >= MAX_BYTES, probed });
    }
    return { passed: false, message: `no such file: ${probed.join(', ')}`, data: { path: null, match_type: input.match_type, probed } };
  },
});
