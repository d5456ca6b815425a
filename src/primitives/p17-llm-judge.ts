import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { collectEvidence, EVIDENCE, kindsOf, type EvidenceKind } from './judge-evidence';
import { definePrimitive } from './types';

export { sampleFiles } from './judge-sampling';

const EvidenceType = z.enum(Object.keys(EVIDENCE) as [keyof typeof EVIDENCE, ...(keyof typeof EVIDENCE)[]]);
const Paths = z.array(z.string().min(1)).min(1);
const Criterion = z.union([
  z.string().min(1),
  z.object({ dimension: z.string().min(1), weight: z.number().nonnegative().optional(), description: z.string().min(1) }).strict(),
]);

/** Inputs that only shape `codebase` evidence. */
const CODEBASE_ONLY = ['files_to_sample', 'focus_paths', 'fallback_files', 'extensions', 'glob_mode', 'sample_limit', 'sample_strategy', 'prefer_keywords', 'max_files_per_dir', 'max_chars_per_file', 'max_lines_per_file'] as const;

export const P17Schema = z
  .object({
    rubric: z.string().min(1).optional(),
    rubric_prompt: z.string().min(1).optional(),
    /** extra guidance appended to the rubric ("what to look for") */
    prompt: z.string().min(1).optional(),
    /** a rubric file, relative to the task folder */
    rubric_file: z.string().min(1).optional(),
    /** a label for reports */
    rubric_id: z.string().min(1).optional(),
    /** weighted dimensions (or plain lines) the judge scores along; appended to the rubric */
    criteria: z.union([z.string().min(1), z.array(Criterion).min(1)]).optional(),
    /** an anchored scoring guide; `scale` when it is written on another scale than the score range */
    scoring_guide: z
      .object({ text: z.string().min(1), scale: z.tuple([z.number(), z.number()]).refine(([lo, hi]) => hi > lo, 'scale is [lo, hi] with lo < hi').optional() })
      .strict()
      .optional(),
    /** one evidence source, or several (the judge sees each, in order) */
    evidence_type: z.union([EvidenceType, z.array(EvidenceType).min(1)]).optional(),
    evidence_source: EvidenceType.optional(),
    /** codebase: workspace files, directories or globs (absolute paths outside the workspace are read from the app container) */
    files_to_sample: Paths.optional(),
    focus_paths: Paths.optional(),
    fallback_files: Paths.optional(),
    extensions: z.array(z.string().regex(/^\.?[\w.+-]+$/, 'a file ending such as ".rb"')).min(1).optional(),
    glob_mode: z.boolean().optional(),
    sample_limit: z.number().int().positive().max(200).optional(),
    sample_strategy: z.enum(['first', 'head', 'tail', 'ranked', 'random']).optional(),
    prefer_keywords: z.array(z.string().min(1)).min(1).optional(),
    max_files_per_dir: z.number().int().positive().optional(),
    max_chars_per_file: z.number().int().min(100).max(200_000).optional(),
    max_lines_per_file: z.number().int().positive().optional(),
    /** the whole evidence text is cut to this many characters (default 120,000) */
    max_evidence_chars: z.number().int().min(1000).max(500_000).optional(),
    /** screenshot / rendered_dom: pages P17 captures itself (paths or loopback URLs), unless the chain's last capture is that page */
    pages: Paths.max(8).optional(),
    /** http_get: paths P17 requests with GET in the chain's session; the responses are evidence */
    http_get: Paths.max(8).optional(),
    /** prereq_responses: keep responses whose path contains one of these */
    path_filters: Paths.optional(),
    /** last_response: show only the values at these JSONPaths of its body */
    response_paths: Paths.optional(),
    /** directory_listing: the directory listed (default the workspace; relative paths are under it) and how many levels deep */
    listing_root: z.string().min(1).optional(),
    listing_depth: z.number().int().positive().max(20).optional(),
    score_range: z.tuple([z.number(), z.number()]).refine(([lo, hi]) => lo >= 0 && hi > lo, 'score_range is [lo, hi] with 0 ≤ lo < hi').optional(),
    max_score: z.number().positive().optional(),
    /** accept only a JSON object reply (no prose fallbacks); `_strict_json` is the older spelling */
    strict_json: z.boolean().optional(),
    _strict_json: z.boolean().optional(),
    /** how often an unparseable reply is asked again: a number, or true (2) / false (0) */
    retry_on_parse_error: z.union([z.boolean(), z.number().int().min(0).max(5)]).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (!(v.rubric ?? v.rubric_prompt ?? v.prompt ?? v.rubric_file)) ctx.addIssue({ code: 'custom', path: [], message: 'one of rubric, rubric_prompt, prompt or rubric_file is required' });
    const kinds = kindsOf(v);
    if (v.evidence_source && v.evidence_type && !kinds.includes(EVIDENCE[v.evidence_source])) {
      ctx.addIssue({ code: 'custom', path: ['evidence_source'], message: `evidence_source "${v.evidence_source}" contradicts evidence_type ${JSON.stringify(v.evidence_type)}` });
    }
    if (new Set(kinds).size !== kinds.length) ctx.addIssue({ code: 'custom', path: ['evidence_type'], message: 'an evidence source is named twice' });
    if (v.score_range && v.max_score !== undefined && v.score_range[1] !== v.max_score) ctx.addIssue({ code: 'custom', path: ['max_score'], message: `max_score ${v.max_score} differs from score_range's upper end ${v.score_range[1]}` });
    if (v.strict_json !== undefined && v._strict_json !== undefined && v.strict_json !== v._strict_json) ctx.addIssue({ code: 'custom', path: ['_strict_json'], message: 'strict_json and _strict_json disagree' });
    const need = (key: keyof typeof v, kind: EvidenceKind | EvidenceKind[]) => {
      const ks = Array.isArray(kind) ? kind : [kind];
      if (v[key] !== undefined && !ks.some((k) => kinds.includes(k))) ctx.addIssue({ code: 'custom', path: [key], message: `${key} applies to ${ks.join(' or ')} evidence only` });
    };
    for (const k of CODEBASE_ONLY) need(k, 'codebase');
    need('pages', ['screenshot', 'rendered_dom']);
    need('path_filters', 'prereq_responses');
    need('listing_root', 'directory_listing');
    need('response_paths', 'last_response');
    need('listing_depth', 'directory_listing');
    if (kinds.includes('http_get') !== (v.http_get !== undefined)) ctx.addIssue({ code: 'custom', path: ['http_get'], message: 'http_get evidence needs the http_get paths, and http_get paths need http_get evidence' });
  });

export type P17Input = z.infer<typeof P17Schema>;

function criteriaText(c: NonNullable<P17Input['criteria']>): string {
  if (typeof c === 'string') return `Criteria:\n${c}`;
  return `Criteria:\n${c.map((x) => (typeof x === 'string' ? `- ${x}` : `- ${x.dimension}${x.weight !== undefined ? ` (weight ${x.weight})` : ''}: ${x.description}`)).join('\n')}`;
}

/**
 * The rubric as the judge sees it: rubric_prompt / rubric / rubric_file, then `prompt` as guidance,
 * `criteria` and the `scoring_guide` (with how its scale maps onto the score range).
 */
export function rubricText(input: P17Input, taskDir: string | undefined, range?: [number, number]): string {
  const parts: string[] = [];
  if (input.rubric_prompt) parts.push(input.rubric_prompt);
  if (input.rubric) parts.push(input.rubric);
  if (input.rubric_file) {
    const file = isAbsolute(input.rubric_file) ? input.rubric_file : join(taskDir ?? '.', input.rubric_file);
    if (!existsSync(file)) throw new Error(`rubric_file ${input.rubric_file} not found in the task folder`);
    parts.push(readFileSync(file, 'utf8').trim());
  }
  if (input.prompt) parts.push(parts.length ? `What to look for:\n${input.prompt}` : input.prompt);
  if (input.criteria) parts.push(criteriaText(input.criteria));
  if (input.scoring_guide) {
    const g = input.scoring_guide;
    const scale = g.scale && range && (g.scale[0] !== range[0] || g.scale[1] !== range[1]) ? ` (written on a ${g.scale[0]}–${g.scale[1]} scale: map it proportionally onto the score range ${range[0]}–${range[1]})` : '';
    parts.push(`Scoring guide${scale}:\n${g.text}`);
  }
  return parts.join('\n\n');
}

/**
 * P17: ask the LLM judge to score the evidence against the rubric, on [lo, hi] = score_range, else
 * [0, max_score], else [0, 10] (the node's score is then clipped to its maxScore). Evidence sources
 * (judge-evidence.ts): the workspace's code, this chain's last or every response, a prerequisite's
 * responses, the last SQL result, command output or log tail, screenshots, rendered DOMs, GETs of
 * its own. Missing evidence (nothing to sample, no screenshot) is the system's fault: score 0
 * without asking. A judge that is unavailable gives `skipped` → SKIPPED_LLM.
 */
export const p17LlmJudge = definePrimitive({
  id: 'P17',
  name: 'llm_judge',
  schema: P17Schema,
  produces: () => ({ exported: [], local: ['last_llm_score', 'last_llm_reasoning'] }),
  async run(input, ctx) {
    if (!ctx.env.judge) return { passed: false, message: 'LLM judge unavailable', judge: { skipped: true, reason: 'no judge configured' } };
    const lo = input.score_range?.[0] ?? 0;
    const hi = input.score_range?.[1] ?? input.max_score ?? 10;
    const rubric = rubricText(input, ctx.env.taskDir, [lo, hi]);
    const kinds = kindsOf(input);
    const ev = await collectEvidence(kinds, input, rubric, ctx);
    const label = input.rubric_id ? `${input.rubric_id}: ` : '';
    const evidence = kinds.join('+');
    if ('missing' in ev) {
      return { passed: false, message: `${label}no ${evidence} evidence: ${ev.missing} — scored 0 without asking the judge`, data: { evidence, score: 0, max: hi }, judge: { skipped: false, score: 0, reasoning: `no evidence: ${ev.missing}` } };
    }
    const retries = input.retry_on_parse_error === undefined ? 2 : input.retry_on_parse_error === true ? 2 : input.retry_on_parse_error === false ? 0 : input.retry_on_parse_error;
    const strict = input.strict_json ?? input._strict_json;
    const verdict = await ctx.env.judge.judge({ rubric, maxScore: hi, minScore: lo, evidence: { text: ev.text, images: ev.images }, parseRetries: retries, strictJson: strict });
    if (verdict.skipped) return { passed: false, message: `${label}judge skipped: ${verdict.reason}`, judge: verdict, data: { evidence } };
    ctx.state.vars.last_llm_score = verdict.score;
    ctx.state.vars.last_llm_reasoning = verdict.reasoning;
    const data = { evidence, score: verdict.score, min: lo, max: hi, reasoning: verdict.reasoning, cached: !!verdict.cached, parse_failed: !!verdict.parseFailed, evidence_chars: ev.text.length, images: ev.images?.length ?? 0, ...(ev.sampled ? { sampled: ev.sampled } : {}) };
    if (verdict.parseFailed) return { passed: false, message: `${label}${verdict.reasoning}`, data: { ...data, raw_reply: verdict.raw?.slice(0, 500) }, judge: verdict };
    return {
      passed: verdict.score > 0,
      message: `${label}LLM score ${verdict.score}/${hi}${verdict.cached ? ' (cached)' : ''}: ${verdict.reasoning.slice(0, 200)}`,
      data,
      judge: verdict,
    };
  },
});
