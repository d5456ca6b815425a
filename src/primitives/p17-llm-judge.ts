import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { definePrimitive, type JudgeRequest, type PrimitiveContext } from './types';

/** Evidence kinds, with the published spellings mapped onto four meanings. */
const EVIDENCE = {
  codebase: 'codebase',
  code_files: 'codebase',
  last_response: 'last_response',
  last_body: 'last_response',
  http_response_body: 'last_response',
  http_response_html: 'last_response',
  screenshot: 'screenshot',
  rendered_dom: 'rendered_dom',
} as const;
type EvidenceKind = (typeof EVIDENCE)[keyof typeof EVIDENCE];
const EvidenceType = z.enum(Object.keys(EVIDENCE) as [keyof typeof EVIDENCE, ...(keyof typeof EVIDENCE)[]]);

const SKIP_DIRS = ['node_modules', '.git', 'dist', 'build', 'coverage', 'vendor', 'tmp', '__pycache__', '.next', '.cache', 'log', 'logs'];
const CODE = /\.(js|mjs|cjs|ts|tsx|jsx|py|rb|go|rs|java|kt|php|ex|exs|cs|vue|svelte|sql|ya?ml|json|html|erb|hbs|md|sh|toml|gradle|xml)$/;
const MAX_FILE_CHARS = 10_000;
const MAX_LISTING = 500;
const MAX_EVIDENCE_CHARS = 120_000;
const MAX_IMAGES = 3;

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
    evidence_type: EvidenceType.optional(),
    evidence_source: EvidenceType.optional(),
    /** workspace files, directories or globs to inline (codebase evidence) */
    files_to_sample: z.array(z.string().min(1)).min(1).optional(),
    sample_limit: z.number().int().positive().max(200).optional(),
    sample_strategy: z.enum(['first', 'head', 'tail']).optional(),
    score_range: z.tuple([z.number(), z.number()]).refine(([lo, hi]) => lo >= 0 && hi > lo, 'score_range is [lo, hi] with 0 ≤ lo < hi').optional(),
    max_score: z.number().positive().optional(),
    /** accept only a JSON object reply (no prose fallbacks) */
    _strict_json: z.boolean().optional(),
    /** how often an unparseable reply is asked again: a number, or true (2) / false (0) */
    retry_on_parse_error: z.union([z.boolean(), z.number().int().min(0).max(5)]).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (!(v.rubric ?? v.rubric_prompt ?? v.prompt ?? v.rubric_file)) ctx.addIssue({ code: 'custom', path: [], message: 'one of rubric, rubric_prompt, prompt or rubric_file is required' });
    if (v.evidence_type && v.evidence_source && EVIDENCE[v.evidence_type] !== EVIDENCE[v.evidence_source]) {
      ctx.addIssue({ code: 'custom', path: ['evidence_source'], message: `evidence_source "${v.evidence_source}" contradicts evidence_type "${v.evidence_type}"` });
    }
    if (v.score_range && v.max_score !== undefined && v.score_range[1] !== v.max_score) ctx.addIssue({ code: 'custom', path: ['max_score'], message: `max_score ${v.max_score} differs from score_range's upper end ${v.score_range[1]}` });
    const kind = EVIDENCE[v.evidence_type ?? v.evidence_source ?? 'codebase'];
    if (kind !== 'codebase') {
      for (const k of ['files_to_sample', 'sample_limit', 'sample_strategy'] as const) if (v[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: `${k} applies to codebase evidence only` });
    }
  });

type Input = z.infer<typeof P17Schema>;
type Evidence = JudgeRequest['evidence'];

/** The rubric as the judge sees it: rubric_prompt / rubric / rubric_file, then `prompt` as guidance. */
export function rubricText(input: Input, taskDir: string | undefined): string {
  const parts: string[] = [];
  if (input.rubric_prompt) parts.push(input.rubric_prompt);
  if (input.rubric) parts.push(input.rubric);
  if (input.rubric_file) {
    const file = isAbsolute(input.rubric_file) ? input.rubric_file : join(taskDir ?? '.', input.rubric_file);
    if (!existsSync(file)) throw new Error(`rubric_file ${input.rubric_file} not found in the task folder`);
    parts.push(readFileSync(file, 'utf8').trim());
  }
  if (input.prompt) parts.push(parts.length ? `What to look for:\n${input.prompt}` : input.prompt);
  return parts.join('\n\n');
}

/**
 * P17: ask the LLM judge to score the evidence against the rubric, on [lo, hi] = score_range, else
 * [0, max_score], else [0, 10] (the node's score is then clipped to its maxScore). Evidence:
 * `codebase` (a listing of the workspace + sampled files), `last_response` (this chain's last
 * response), `screenshot` (the chain's last ≤ 3 screenshots as images + the rendered HTML),
 * `rendered_dom`. Missing evidence (nothing to sample, no screenshot) is the system's fault:
 * score 0 without asking. A judge that is unavailable gives `skipped` → SKIPPED_LLM.
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
    const rubric = rubricText(input, ctx.env.taskDir);
    const kind: EvidenceKind = EVIDENCE[input.evidence_type ?? input.evidence_source ?? 'codebase'];
    const ev = await collectEvidence(kind, input, ctx);
    const label = input.rubric_id ? `${input.rubric_id}: ` : '';
    if ('missing' in ev) {
      return { passed: false, message: `${label}no ${kind} evidence: ${ev.missing} — scored 0 without asking the judge`, data: { evidence: kind, score: 0, max: hi }, judge: { skipped: false, score: 0, reasoning: `no evidence: ${ev.missing}` } };
    }
    const retries = input.retry_on_parse_error === undefined ? 2 : input.retry_on_parse_error === true ? 2 : input.retry_on_parse_error === false ? 0 : input.retry_on_parse_error;
    const verdict = await ctx.env.judge.judge({ rubric, maxScore: hi, minScore: lo, evidence: ev, parseRetries: retries, strictJson: input._strict_json });
    if (verdict.skipped) return { passed: false, message: `${label}judge skipped: ${verdict.reason}`, judge: verdict, data: { evidence: kind } };
    ctx.state.vars.last_llm_score = verdict.score;
    ctx.state.vars.last_llm_reasoning = verdict.reasoning;
    const data = { evidence: kind, score: verdict.score, min: lo, max: hi, reasoning: verdict.reasoning, cached: !!verdict.cached, parse_failed: !!verdict.parseFailed, evidence_chars: ev.text.length, images: ev.images?.length ?? 0 };
    if (verdict.parseFailed) return { passed: false, message: `${label}${verdict.reasoning}`, data: { ...data, raw_reply: verdict.raw?.slice(0, 500) }, judge: verdict };
    return {
      passed: verdict.score > 0,
      message: `${label}LLM score ${verdict.score}/${hi}${verdict.cached ? ' (cached)' : ''}: ${verdict.reasoning.slice(0, 200)}`,
      data,
      judge: verdict,
    };
  },
});

async function collectEvidence(kind: EvidenceKind, input: Input, ctx: PrimitiveContext): Promise<Evidence | { missing: string }> {
  const vars = ctx.state.vars;
  switch (kind) {
    case 'last_response': {
      const last = ctx.state.last;
      if (!last) return { missing: 'no response earlier in this chain' };
      const body = typeof last.body === 'string' ? last.body : JSON.stringify(last.body, null, 2);
      return { text: `${last.method} ${last.path} → ${last.status}\n\n${body.slice(0, 30_000)}` };
    }
    case 'rendered_dom': {
      const dom = vars.rendered_dom;
      if (typeof dom !== 'string' || !dom) return { missing: 'no RENDER_DOM or SCREENSHOT earlier in this chain produced a DOM' };
      return { text: `Rendered HTML of ${String(vars.rendered_dom_url ?? '?')}:\n${dom.slice(0, 60_000)}` };
    }
    case 'screenshot': {
      const shots = Array.isArray(vars.screenshots) ? (vars.screenshots as unknown[]).filter((s): s is string => typeof s === 'string' && existsSync(s)) : [];
      if (shots.length === 0) return { missing: 'no screenshot was captured earlier in this chain' };
      const images = shots.slice(-MAX_IMAGES).map((f) => ({ mediaType: f.endsWith('.png') ? 'image/png' : 'image/jpeg', base64: readFileSync(f).toString('base64') }));
      const dom = typeof vars.rendered_dom === 'string' ? vars.rendered_dom : '';
      const title = typeof vars.last_page_title === 'string' ? vars.last_page_title : '';
      return { text: `${images.length} screenshot(s) of ${String(vars.rendered_dom_url ?? 'the app')}${title ? ` (title ${JSON.stringify(title)})` : ''} are attached.\n\nRendered HTML (sanitized):\n${dom.slice(0, 30_000) || '(none)'}`, images };
    }
    default:
      return codebaseEvidence(input, ctx);
  }
}

const skipped = (p: string) => p.split('/').some((seg) => SKIP_DIRS.includes(seg));
const norm = (p: string) => p.replace(/^\.\//, '').replace(/^\/+/, '').replace(/\/+$/, '');

/**
 * Which workspace files the judge sees: explicit files and glob hits of `files_to_sample` first (in
 * the given order), then the code files of its directories taken round-robin; without
 * `files_to_sample`, every code file (shallowest first). `sample_strategy` tail takes the last
 * `sample_limit` (default 12) instead of the first.
 */
export function sampleFiles(tree: string[], input: Pick<Input, 'files_to_sample' | 'sample_limit' | 'sample_strategy'>): string[] {
  const files = tree.filter((p) => !p.endsWith('/') && !skipped(p));
  const dirs = new Set(tree.filter((p) => p.endsWith('/')).map((p) => p.slice(0, -1)));
  const limit = input.sample_limit ?? 12;
  let order: string[];
  if (!input.files_to_sample) {
    order = files.filter((f) => CODE.test(f)).sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  } else {
    const explicit: string[] = [];
    const dirLists: string[][] = [];
    for (const raw of input.files_to_sample) {
      const e = norm(raw);
      if (/[*?{[]/.test(e)) {
        const m = picomatch(e, { dot: false });
        explicit.push(...files.filter((f) => m(f)).sort());
      }
      else if (files.includes(e)) explicit.push(e);
      else if (e === '' || dirs.has(e)) dirLists.push(files.filter((f) => (e === '' || f.startsWith(`${e}/`)) && CODE.test(f)).sort());
    }
    const rr: string[] = [];
    for (let i = 0; dirLists.some((l) => i < l.length); i++) for (const l of dirLists) if (i < l.length) rr.push(l[i]);
    order = [...new Set([...explicit, ...rr])];
  }
  return input.sample_strategy === 'tail' ? order.slice(-limit) : order.slice(0, limit);
}

async function codebaseEvidence(input: Input, ctx: PrimitiveContext): Promise<Evidence | { missing: string }> {
  const ws = ctx.env.workspace;
  const tree = (await ctx.env.listTree(ws)) ?? [];
  const visible = tree.filter((p) => !skipped(p.replace(/\/$/, '')));
  const sample = sampleFiles(visible, input);
  if (input.files_to_sample && sample.length === 0) return { missing: `none of ${input.files_to_sample.join(', ')} exists in ${ws}` };
  if (visible.length === 0) return { missing: `the workspace ${ws} is empty` };
  const parts = [`File listing of ${ws} (${visible.length} entries${visible.length > MAX_LISTING ? `, first ${MAX_LISTING}` : ''}):`, ...visible.slice(0, MAX_LISTING)];
  for (const f of sample) {
    const buf = await ctx.env.readFile(`${ws.replace(/\/$/, '')}/${f}`, MAX_FILE_CHARS * 4);
    if (buf) parts.push(`\n--- File: ${f} ---\n${buf.toString('utf8').slice(0, MAX_FILE_CHARS)}`);
  }
  return { text: parts.join('\n').slice(0, MAX_EVIDENCE_CHARS) };
}
