import { z } from 'zod';
import { show } from './compare';
import { inWorkspace } from './files';
import { definePrimitive } from './types';

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export const P21Schema = z
  .object({
    /** the log file in the service container; relative paths are under the workspace */
    log_path: z.string().min(1),
    service: z.string().min(1).optional(),
    pattern: z.string().min(1),
    match_type: z.enum(['contains', 'regex']).default('contains'),
    case_sensitive: z.boolean().default(true),
    /** only the last N lines are searched (default 200; 0 = the whole file) */
    tail_lines: z.number().int().min(0).max(1_000_000).default(200),
    /** true: at least min_matches lines match; false: no line matches */
    expect_match: z.boolean().default(true),
    min_matches: z.number().int().min(1).default(1),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.match_type === 'regex') {
      try {
        new RegExp(v.pattern);
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: ['pattern'], message: `not a valid regular expression: ${(e as Error).message}` });
      }
    }
    if (!v.expect_match && v.min_matches !== 1) ctx.addIssue({ code: 'custom', path: ['min_matches'], message: 'min_matches applies when expect_match is true' });
  });

/**
 * P21: search the tail of a log file in a container (default: the app service) line by line.
 * A missing or unreadable file fails — also when expect_match is false (absence of evidence is not
 * evidence of absence).
 */
export const P21 = definePrimitive({
  id: 'P21',
  name: 'log_content_check',
  schema: P21Schema,
  async run(input, { env }) {
    const service = input.service ?? env.appService;
    if (env.services && !env.services.includes(service)) return { passed: false, message: `unknown service "${service}" (services: ${env.services.join(', ')})` };
    const file = inWorkspace(env, input.log_path);
    const cmd = `[ -f ${q(file)} ] || { echo "no such file" >&2; exit 3; }; ${input.tail_lines === 0 ? `cat -- ${q(file)}` : `tail -n ${input.tail_lines} -- ${q(file)}`}`;
    const r = await env.exec(service, cmd, { timeoutMs: 60_000 });
    if (r.exitCode === 3) return { passed: false, message: `${service}:${file} does not exist`, data: { service, file } };
    if (r.exitCode !== 0) return { passed: false, message: `reading ${service}:${file} failed (exit ${r.exitCode}): ${show(r.stderr.trim().slice(-200))}`, data: { service, file } };
    const lines = r.stdout.split(/\r?\n/);
    const flags = input.case_sensitive ? '' : 'i';
    const re = input.match_type === 'regex' ? new RegExp(input.pattern, flags) : undefined;
    const needle = input.case_sensitive ? input.pattern : input.pattern.toLowerCase();
    const hits = lines.filter((l) => (re ? re.test(l) : (input.case_sensitive ? l : l.toLowerCase()).includes(needle)));
    const scope = input.tail_lines === 0 ? 'the whole file' : `the last ${input.tail_lines} lines`;
    const passed = input.expect_match ? hits.length >= input.min_matches : hits.length === 0;
    return {
      passed,
      message: `${hits.length} line(s) of ${scope} of ${file} match ${input.match_type} ${show(input.pattern)}${input.expect_match ? ` (need ≥ ${input.min_matches})` : ' (need none)'}${hits.length ? `; first: ${show(hits[0].slice(0, 200))}` : ''}`,
      data: { service, file, matches: hits.length, sample: hits.slice(0, 5).map((h) => h.slice(0, 300)), lines_read: lines.length },
    };
  },
});
