import { shQuote } from '../shell';
import { z } from 'zod';
import { show } from './compare';
import { inWorkspace } from './files';
import { definePrimitive } from './types';

const q = shQuote;

export const P21Schema = z
  .object({
    /** file: the log file `log_path`; container_output: what the service's container wrote to stdout/stderr (docker logs) */
    source: z.enum(['file', 'container_output']).default('file'),
    /** the log file in the service container; relative paths are under the workspace */
    log_path: z.string().min(1).optional(),
    service: z.string().min(1).optional(),
    /** absent: nothing is searched — the tail is kept in `last_log_tail` as evidence (for P17) and the step passes when the log could be read */
    pattern: z.string().min(1).optional(),
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
    if (v.source === 'file' && !v.log_path) ctx.addIssue({ code: 'custom', path: ['log_path'], message: 'required (a string) when source is file' });
    if (v.source === 'container_output' && v.log_path) ctx.addIssue({ code: 'custom', path: ['log_path'], message: 'source container_output reads no file' });
    if (v.source === 'container_output' && v.tail_lines === 0) ctx.addIssue({ code: 'custom', path: ['tail_lines'], message: 'container output is read as a tail (tail_lines ≥ 1)' });
    if (v.pattern === undefined && (!v.expect_match || v.min_matches !== 1 || v.match_type !== 'contains')) ctx.addIssue({ code: 'custom', path: ['pattern'], message: 'match settings need a pattern' });
    if (v.match_type === 'regex' && v.pattern !== undefined) {
      try {
        new RegExp(v.pattern as string);
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: ['pattern'], message: `not a valid regular expression: ${(e as Error).message}` });
      }
    }
    if (!v.expect_match && v.min_matches !== 1) ctx.addIssue({ code: 'custom', path: ['min_matches'], message: 'min_matches applies when expect_match is true' });
  });

/**
 * P21: search the tail of a log file in a container (default: the app service), or of what the
 * container wrote to stdout/stderr, line by line; without a pattern, keep the tail as evidence.
 * A missing or unreadable file fails — also when expect_match is false (absence of evidence is not
 * evidence of absence).
 */
export const P21 = definePrimitive({
  id: 'P21',
  name: 'log_content_check',
  schema: P21Schema,
  produces: () => ({ exported: [], local: ['last_log_tail'] }),
  async run(input, { env, state }) {
    const service = input.service ?? env.appService;
    if (env.services && !env.services.includes(service)) return { passed: false, message: `unknown service "${service}" (services: ${env.services.join(', ')})` };
    let text: string;
    let label: string;
    if (input.source === 'container_output') {
      label = `${service}'s container output`;
      if (!env.containerOutput) return { passed: false, message: `reading ${label} is not possible in this environment` };
      try {
        text = await env.containerOutput(service, input.tail_lines);
      } catch (e) {
        return { passed: false, message: `reading ${label} failed: ${(e as Error).message}`, data: { service } };
      }
    } else {
      const file = inWorkspace(env, input.log_path as string);
      label = file;
      const cmd = `[ -f ${q(file)} ] || { echo "no such file" >&2; exit 3; }; ${input.tail_lines === 0 ? `cat -- ${q(file)}` : `tail -n ${input.tail_lines} -- ${q(file)}`}`;
      const r = await env.exec(service, cmd, { timeoutMs: 60_000 });
      if (r.exitCode === 3) return { passed: false, message: `${service}:${file} does not exist`, data: { service, file } };
      if (r.exitCode !== 0) return { passed: false, message: `reading ${service}:${file} failed (exit ${r.exitCode}): ${show(r.stderr.trim().slice(-200))}`, data: { service, file } };
      text = r.stdout;
    }
    const lines = text.split(/\r?\n/);
    const scope = input.tail_lines === 0 ? 'the whole file' : `the last ${input.tail_lines} lines`;
    if (input.pattern === undefined) {
      state.vars.last_log_tail = text.slice(-20_000);
      return { passed: true, message: `kept ${scope} of ${label} (${text.length} characters) as evidence`, data: { service, chars: text.length, lines_read: lines.length } };
    }
    const pattern = input.pattern;
    const flags = input.case_sensitive ? '' : 'i';
    const re = input.match_type === 'regex' ? new RegExp(pattern, flags) : undefined;
    const needle = input.case_sensitive ? pattern : pattern.toLowerCase();
    const hits = lines.filter((l) => (re ? re.test(l) : (input.case_sensitive ? l : l.toLowerCase()).includes(needle)));
    const passed = input.expect_match ? hits.length >= input.min_matches : hits.length === 0;
    return {
      passed,
      message: `${hits.length} line(s) of ${scope} of ${label} match ${input.match_type} ${show(pattern)}${input.expect_match ? ` (need ≥ ${input.min_matches})` : ' (need none)'}${hits.length ? `; first: ${show(hits[0].slice(0, 200))}` : ''}`,
      data: { service, source: input.source, matches: hits.length, sample: hits.slice(0, 5).map((h) => h.slice(0, 300)), lines_read: lines.length },
    };
  },
});
