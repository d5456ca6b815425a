import { z } from 'zod';
import { candidatePaths, inWorkspace, PathList } from './files';
import { definePrimitive } from './types';

const MAX_BYTES = 8 * 1024 * 1024;

export const P02Schema = z
  .object({
    path: z.string().min(1).optional(),
    path_any_of: PathList.optional(),
    pattern: z.string().min(1),
    match_type: z.enum(['contains', 'regex', 'not_contains']).default('contains'),
  })
  .strict()
  .refine((v) => v.path !== undefined || v.path_any_of !== undefined, { message: 'give path or path_any_of' })
  .superRefine((v, ctx) => {
    if (v.match_type !== 'regex') return;
    try {
      new RegExp(v.pattern, 'm');
    } catch (e) {
      ctx.addIssue({ code: 'custom', path: ['pattern'], message: `invalid regex: ${(e as Error).message}` });
    }
  });

/**
 * P02: the first candidate that exists as a file (path, then path_any_of) must contain the
 * substring (case-sensitive), match the regex (multiline, case-sensitive) or — not_contains —
 * lack the substring. No existing candidate fails, whatever the match type.
 */
export const P02 = definePrimitive({
  id: 'P02',
  name: 'file_content_match',
  schema: P02Schema,
  async run(input, { env }) {
    const probed: string[] = [];
    for (const c of candidatePaths(input.path, input.path_any_of)) {
      const abs = inWorkspace(env, c);
      probed.push(abs);
      if ((await env.statPath(abs)) !== 'file') continue;
      const buf = await env.readFile(abs, MAX_BYTES);
      if (buf === null) continue;
      const text = buf.toString('utf8');
      let matched: boolean;
      let at: number | undefined;
      if (input.match_type === 'regex') {
        const m = new RegExp(input.pattern, 'm').exec(text);
        matched = m !== null;
        at = m?.index;
      } else {
        const i = text.indexOf(input.pattern);
        matched = i >= 0;
        at = i >= 0 ? i : undefined;
      }
      const passed = input.match_type === 'not_contains' ? !matched : matched;
      const line = at === undefined ? undefined : text.slice(0, at).split('\n').length;
      const verb = { contains: 'contains', regex: 'matches', not_contains: 'does not contain' }[input.match_type];
      return {
        passed,
        message: `${abs} ${passed ? verb : `fails "${input.match_type}"`} ${JSON.stringify(input.pattern)}${line ? ` (line ${line})` : ''}`,
        data: { path: abs, match_type: input.match_type, matched, line: line ?? null, truncated: buf.length >= MAX_BYTES, probed },
      };
    }
    return { passed: false, message: `no such file: ${probed.join(', ')}`, data: { path: null, match_type: input.match_type, probed } };
  },
});
