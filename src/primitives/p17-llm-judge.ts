import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { definePrimitive, type PrimitiveContext } from './types';

const EvidenceType = z.enum(['codebase', 'code_files', 'last_response', 'last_body', 'http_response_body', 'http_response_html', 'screenshot', 'rendered_dom']);
const SKIP_DIRS = ['node_modules/', '.git/', 'dist/', 'build/', 'coverage/', 'vendor/', 'tmp/'];
const CODE = /\.(js|mjs|cjs|ts|tsx|jsx|py|rb|go|rs|java|kt|php|ex|exs|cs|vue|svelte|sql|ya?ml|json|html|erb|hbs|md|sh)$/;

const schema = z
  .object({
    rubric: z.string().optional(),
    rubric_prompt: z.string().optional(),
    prompt: z.string().optional(),
    rubric_file: z.string().optional(),
    rubric_id: z.string().optional(),
    evidence_type: EvidenceType.optional(),
    evidence_source: EvidenceType.optional(),
    files_to_sample: z.array(z.string()).optional(),
    sample_limit: z.number().int().positive().optional(),
    sample_strategy: z.enum(['first', 'head', 'tail', 'round_robin']).optional(),
    score_range: z.tuple([z.number(), z.number()]).optional(),
    max_score: z.number().positive().optional(),
    /** published files carry these; we always demand strict JSON and always retry on parse errors */
    _strict_json: z.boolean().optional(),
    retry_on_parse_error: z.union([z.boolean(), z.number()]).optional(),
  })
  .strict()
  .refine((v) => v.rubric ?? v.rubric_prompt ?? v.prompt ?? v.rubric_file, { message: 'one of rubric, rubric_prompt, prompt or rubric_file is required' });

export const p17LlmJudge = definePrimitive({
  id: 'P17',
  name: 'llm_judge',
  schema,
  async run(input, ctx) {
    if (!ctx.env.judge) return { passed: false, message: 'LLM judge unavailable', judge: { skipped: true, reason: 'no judge configured' } };
    // rubric_prompt wins over prompt, as in the published evaluator
    const rubric = input.rubric ?? input.rubric_prompt ?? input.prompt ?? readFileSync(join(String(ctx.state.vars.task_dir ?? '.'), input.rubric_file!), 'utf8');
    const max = input.score_range?.[1] ?? input.max_score ?? 10;
    const evidence = await collectEvidence(input.evidence_type ?? input.evidence_source ?? 'codebase', input, ctx);
    const verdict = await ctx.env.judge.judge({ rubric, maxScore: max, evidence });
    if (verdict.skipped) return { passed: false, message: `judge skipped: ${verdict.reason}`, judge: verdict };
    return {
      passed: verdict.score > 0,
      message: `LLM score ${verdict.score}/${max}: ${verdict.reasoning.slice(0, 200)}`,
      data: { score: verdict.score, max, reasoning: verdict.reasoning, evidenceChars: evidence.text.length },
      judge: verdict,
    };
  },
});

type Input = z.infer<typeof schema>;

async function collectEvidence(kind: z.infer<typeof EvidenceType>, input: Input, ctx: PrimitiveContext): Promise<{ text: string; images?: { mediaType: string; base64: string }[] }> {
  switch (kind) {
    case 'last_response':
    case 'last_body':
    case 'http_response_body':
    case 'http_response_html': {
      const last = ctx.state.last;
      if (!last) return { text: '(no HTTP response in this chain)' };
      const body = typeof last.body === 'string' ? last.body : JSON.stringify(last.body, null, 2);
      return { text: `${last.method} ${last.path} -> ${last.status}\n\n${body.slice(0, 20_000)}` };
    }
    case 'screenshot':
    case 'rendered_dom': {
      const shot = ctx.state.vars.last_screenshot;
      const dom = ctx.state.vars.rendered_dom;
      const images = typeof shot === 'string' ? [{ mediaType: shot.endsWith('.png') ? 'image/png' : 'image/jpeg', base64: readFileSync(shot).toString('base64') }] : [];
      return { text: typeof dom === 'string' ? `Rendered HTML:\n${dom.slice(0, 30_000)}` : '(no rendered DOM)', images };
    }
    default:
      return { text: await codebaseDigest(input, ctx) };
  }
}

/** A file listing plus a sample of source files, enough for architecture-level rubrics. */
async function codebaseDigest(input: Input, ctx: PrimitiveContext): Promise<string> {
  const ws = ctx.env.workspace;
  const tree = ((await ctx.env.listTree(ws)) ?? []).filter((p) => !SKIP_DIRS.some((d) => p.startsWith(d) || p.includes(`/${d}`)));
  const files = tree.filter((p) => !p.endsWith('/') && CODE.test(p));
  const roots = input.files_to_sample?.map((r) => r.replace(/^\.?\/*/, '').replace(/\/?$/, '')) ?? [];
  let sample = roots.length ? files.filter((f) => roots.some((r) => f === r || f.startsWith(`${r}/`))) : files;
  const limit = input.sample_limit ?? 12;
  sample = input.sample_strategy === 'tail' ? sample.slice(-limit) : sample.slice(0, limit);
  const parts = [`File listing of ${ws} (${tree.length} entries):`, ...tree.slice(0, 400)];
  for (const f of sample) {
    const buf = await ctx.env.readFile(`${ws}/${f}`, 10_000);
    if (buf) parts.push(`\n--- File: ${f} ---\n${buf.toString('utf8').slice(0, 10_000)}`);
  }
  return parts.join('\n').slice(0, 120_000);
}
