import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { registerSecret, log } from '../log';
import type { JudgePort, JudgeRequest } from '../primitives/types';
import { readJsonIfExists, writeJson } from '../runs/files';
import { repoRoot } from '../temporal/tools';
import type { JudgeSettings } from '../workflows/contracts';
import { parseVerdict } from './parse-verdict';

const SYSTEM = [
  'You are a strict scoring function for a software benchmark. You have no tools.',
  'Score the evidence against the rubric using only what the evidence shows; do not ask for more files.',
  'Reply with only a JSON object: {"score": <number within the stated range>, "reasoning": "<at most 120 words citing concrete evidence>"}.',
].join(' ');

type Verdict = Awaited<ReturnType<JudgePort['judge']>>;

let inFlight = 0;
const waiters: (() => void)[] = [];
async function limited<T>(max: number, fn: () => Promise<T>): Promise<T> {
  while (inFlight >= max) await new Promise<void>((r) => waiters.push(r));
  inFlight++;
  try {
    return await fn();
  } finally {
    inFlight--;
    waiters.shift()?.();
  }
}

export interface JudgeEndpoint {
  apiKey: string;
  baseUrl?: string;
}

/** The judge, or undefined when judging is disabled or has no key (→ SKIPPED_LLM). */
export function judgeFor(settings: JudgeSettings, endpoint: JudgeEndpoint): JudgePort | undefined {
  if (!settings.enabled || !endpoint.apiKey) return undefined;
  registerSecret(endpoint.apiKey);
  const client = new Anthropic({ apiKey: endpoint.apiKey, baseURL: endpoint.baseUrl, maxRetries: 4, timeout: 120_000 });
  const cacheDir = process.env.SAASBENCH_JUDGE_CACHE ?? join(repoRoot(), '.saasbench', 'judge-cache');
  return {
    async judge(req: JudgeRequest): Promise<Verdict> {
      const key = createHash('sha256').update(JSON.stringify([settings.model, req.rubric, req.maxScore, req.evidence])).digest('hex');
      const cacheFile = join(cacheDir, `${key}.json`);
      const cached = readJsonIfExists<Verdict>(cacheFile);
      if (cached) return cached;
      const verdict = await limited(Number(process.env.SAASBENCH_JUDGE_CONCURRENCY ?? 4), () => ask(client, settings.model, req));
      if (!verdict.skipped) writeJson(cacheFile, verdict);
      return verdict;
    },
  };
}

async function ask(client: Anthropic, model: string, req: JudgeRequest): Promise<Verdict> {
  const content: Anthropic.ContentBlockParam[] = [
    { type: 'text', text: `## Rubric (score from 0 to ${req.maxScore})\n${req.rubric}\n\n## Evidence\n${req.evidence.text}` },
    ...(req.evidence.images ?? []).map((img) => ({ type: 'image' as const, source: { type: 'base64' as const, media_type: img.mediaType as 'image/png', data: img.base64 } })),
  ];
  for (let attempt = 1; attempt <= 3; attempt++) {
    let text: string;
    try {
      // The paper judges at temperature 0; SDK 1.14's typings no longer declare the field, the API still takes it.
      const params = { model, max_tokens: 1024, temperature: 0, system: SYSTEM, messages: [{ role: 'user', content }] } as Anthropic.MessageCreateParamsNonStreaming;
      const msg = await client.messages.create(params);
      text = msg.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'judge unavailable');
      return { skipped: true, reason: `judge unavailable: ${(err as Error).message.slice(0, 200)}` };
    }
    const v = parseVerdict(text);
    if (v) return { skipped: false, score: Math.min(req.maxScore, Math.max(0, v.score)), reasoning: v.reasoning };
  }
  return { skipped: false, score: 0, reasoning: 'judge reply could not be parsed after 3 attempts' };
}
