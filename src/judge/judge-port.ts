import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import pLimit from 'p-limit';
import { registerSecret, log } from '../log';
import type { JudgePort, JudgeRequest, JudgeVerdict } from '../primitives/types';
import { readJsonIfExists, writeJson } from '../runs/files';
import { repoRoot } from '../paths';
import type { JudgeSettings } from '../model/rollout';
import { parseVerdict } from './parse-verdict';

/**
 * The LLM judge (P17's port). One request per (model, rubric, range, evidence): verdicts are cached
 * in memory and on disk, identical concurrent requests share one call, and a process-wide limit
 * (p-limit) bounds calls in flight. Both providers go through their official SDKs
 * (@anthropic-ai/sdk, openai — any OpenAI-compatible /chat/completions), which retry transient
 * failures themselves (408, 409, 429, 5xx incl. 529, connection errors, timeouts) with
 * exponential backoff and honour Retry-After; when they persist — or the API refuses the request
 * (401, 403, 404, 400) — the verdict is `skipped` (the node becomes SKIPPED_LLM). A reply that
 * cannot be read as a score is asked again `parseRetries` times, then the verdict is score 0 with
 * `parseFailed` (the node FAILS): the judge answered, just not usably.
 */

/** Bumped whenever the prompt changes, so cached verdicts of an older prompt are not reused. */
export const PROMPT_VERSION = 'saasbench-judge-v1';

export function systemPrompt(lo: number, hi: number): string {
  return [
    'You are a strict scoring function for a software benchmark. You have no tools.',
    'Score the evidence against the rubric using only what the evidence shows; do not ask for more files and do not speculate about code you cannot see.',
    `Reply with only a JSON object, no markdown: {"score": <number from ${lo} to ${hi}>, "reasoning": "<at most 120 words citing concrete evidence>"}.`,
  ].join(' ');
}

export interface JudgeOptions {
  provider: 'anthropic' | 'openai';
  apiKey: string;
  /** Anthropic: the API root (e.g. http://127.0.0.1:4000); OpenAI-compatible: the root that has /chat/completions */
  baseUrl?: string;
  model: string;
  /** a directory for cached verdicts; null = memory only */
  cacheDir?: string | null;
  /** calls in flight in this process (default SAASBENCH_JUDGE_CONCURRENCY or 4) */
  concurrency?: number;
  /** HTTP attempts per call, the first included: the SDK's maxRetries is this minus one (default 4) */
  maxAttempts?: number;
  /** per HTTP attempt (default 120 s) */
  timeoutMs?: number;
  maxTokens?: number;
}

export interface Judge extends JudgePort {
  /** HTTP requests sent to the API by this judge, retries included (cache hits send none) */
  readonly requests: number;
}

/** A verdict text, or why there is none (the SDK gave up on a transient failure, or the API refused). */
type Reply = { text: string } | { why: string };

/** Process-wide: every judge with the same limit shares one queue, as the worker's judges do. */
const limiters = new Map<number, pLimit.Limit>();
function limiterFor(max: number): pLimit.Limit {
  let l = limiters.get(max);
  if (!l) limiters.set(max, (l = pLimit(max)));
  return l;
}

const memoryCache = new Map<string, JudgeVerdict>();
const pending = new Map<string, Promise<JudgeVerdict>>();

/** Forget cached verdicts held in memory (tests). */
export function clearJudgeMemoryCache(): void {
  memoryCache.clear();
}

export function evidenceKey(o: Pick<JudgeOptions, 'provider' | 'model'>, req: JudgeRequest): string {
  const images = (req.evidence.images ?? []).map((i) => `${i.mediaType}:${createHash('sha256').update(i.base64).digest('hex')}`);
  return createHash('sha256')
    .update(JSON.stringify([PROMPT_VERSION, o.provider, o.model, req.rubric, req.minScore ?? 0, req.maxScore, !!req.strictJson, req.evidence.text, images]))
    .digest('hex');
}

/** The longest Retry-After the judge waits; a longer one falls back to the SDK's own backoff. */
const MAX_RETRY_AFTER_S = 60;

/**
 * The SDKs' fetch, wrapped: it counts every attempt (the SDK retries inside one call), logs the
 * transient answers it will retry, and drops a Retry-After beyond MAX_RETRY_AFTER_S — the SDKs
 * would otherwise sleep for as long as a server asks (up to an hour) inside an activity.
 */
function judgeFetch(count: () => void): typeof fetch {
  return async (input, init) => {
    count();
    const res = await fetch(input, init);
    if (res.status === 429 || res.status >= 500) {
      log.warn({ status: res.status }, 'judge busy or unreachable; the SDK backs off and retries');
      const ra = res.headers.get('retry-after');
      if (ra && !(Number(ra) <= MAX_RETRY_AFTER_S)) {
        const headers = new Headers(res.headers);
        headers.delete('retry-after');
        headers.delete('retry-after-ms');
        return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
      }
    }
    return res;
  };
}

/** An SDK error as the reason a verdict is skipped. */
function whyNot(err: unknown, attempts: number): string {
  const e = err as Error & { status?: number };
  const status = typeof e.status === 'number' ? e.status : undefined;
  const detail = `${status ? `HTTP ${status}: ` : ''}${String(e.message).slice(0, 200)}`;
  const transient = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
  return transient ? `judge unavailable after ${attempts} attempts (${detail})` : `judge refused the request (${detail})`;
}

export function createJudge(o: JudgeOptions): Judge {
  registerSecret(o.apiKey);
  let requests = 0;
  const attempts = Math.max(1, o.maxAttempts ?? 4);
  const sdk = { apiKey: o.apiKey, baseURL: o.baseUrl, maxRetries: attempts - 1, timeout: o.timeoutMs ?? 120_000, fetch: judgeFetch(() => requests++) };
  const anthropic = o.provider === 'anthropic' ? new Anthropic(sdk) : undefined;
  const openai = o.provider === 'openai' ? new OpenAI(sdk) : undefined;
  const maxTokens = o.maxTokens ?? 1024;

  async function callAnthropic(req: JudgeRequest, user: string): Promise<string> {
    const content: Anthropic.ContentBlockParam[] = [
      { type: 'text', text: user },
      ...(req.evidence.images ?? []).map((img) => ({ type: 'image' as const, source: { type: 'base64' as const, media_type: img.mediaType as 'image/png', data: img.base64 } })),
    ];
    // temperature 0 as the paper specifies (SDK 1.14's typings dropped the field; the API takes it)
    const params = { model: o.model, max_tokens: maxTokens, temperature: 0, system: systemPrompt(req.minScore ?? 0, req.maxScore), messages: [{ role: 'user', content }] } as Anthropic.MessageCreateParamsNonStreaming;
    const msg = await anthropic!.messages.create(params);
    return msg.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  }

  async function callOpenAi(req: JudgeRequest, user: string): Promise<string> {
    const completion = await openai!.chat.completions.create({
      model: o.model,
      temperature: 0,
      max_tokens: maxTokens,
      messages: [
        { role: 'system', content: systemPrompt(req.minScore ?? 0, req.maxScore) },
        { role: 'user', content: [{ type: 'text', text: user }, ...(req.evidence.images ?? []).map((i) => ({ type: 'image_url' as const, image_url: { url: `data:${i.mediaType};base64,${i.base64}` } }))] },
      ],
    });
    const text = completion.choices?.[0]?.message?.content;
    return typeof text === 'string' ? text : '';
  }

  /** One reply; the SDK has already retried what was worth retrying. */
  async function reply(req: JudgeRequest, user: string): Promise<Reply> {
    try {
      return { text: o.provider === 'anthropic' ? await callAnthropic(req, user) : await callOpenAi(req, user) };
    } catch (err) {
      if (err instanceof Anthropic.APIError || err instanceof OpenAI.APIError) return { why: whyNot(err, attempts) };
      throw err;
    }
  }

  async function judgeUncached(req: JudgeRequest): Promise<JudgeVerdict> {
    const lo = req.minScore ?? 0;
    const hi = req.maxScore;
    const user = `## Rubric (score from ${lo} to ${hi})\n${req.rubric}\n\n## Evidence\n${req.evidence.text}`;
    const tries = 1 + (req.parseRetries ?? 2);
    let raw = '';
    for (let t = 1; t <= tries; t++) {
      const r = await limiterFor(o.concurrency ?? Number(process.env.SAASBENCH_JUDGE_CONCURRENCY ?? 4))(() => reply(req, user));
      if ('why' in r) return { skipped: true, reason: r.why };
      raw = r.text;
      const v = parseVerdict(r.text, { strict: req.strictJson });
      if (v) return { skipped: false, score: Math.min(hi, Math.max(lo, v.score)), reasoning: v.reasoning, raw: r.text.slice(0, 2000) };
    }
    return { skipped: false, score: 0, reasoning: `the judge's reply could not be read as a score after ${tries} attempts`, parseFailed: true, raw: raw.slice(0, 2000) };
  }

  return {
    get requests() {
      return requests;
    },
    async judge(req: JudgeRequest): Promise<JudgeVerdict> {
      const key = evidenceKey(o, req);
      const mem = memoryCache.get(key);
      if (mem) return { ...mem, cached: true } as JudgeVerdict;
      const file = o.cacheDir ? join(o.cacheDir, `${key}.json`) : undefined;
      const disk = file ? readJsonIfExists<JudgeVerdict>(file) : undefined;
      if (disk) {
        memoryCache.set(key, disk);
        return { ...disk, cached: true } as JudgeVerdict;
      }
      let p = pending.get(key);
      if (!p) {
        p = judgeUncached(req).finally(() => pending.delete(key));
        pending.set(key, p);
      }
      const v = await p;
      if (!v.skipped && !v.parseFailed) {
        memoryCache.set(key, v);
        if (file) writeJson(file, v);
      }
      return v;
    },
  };
}

export interface JudgeEndpoint {
  apiKey: string;
  baseUrl?: string;
}

/**
 * The judge for a rollout, or undefined when judging is disabled or has no key (→ SKIPPED_LLM).
 * Environment: SAASBENCH_JUDGE_PROVIDER (anthropic | openai), SAASBENCH_JUDGE_MODEL (overrides the
 * rollout's model), SAASBENCH_JUDGE_API_KEY / SAASBENCH_JUDGE_BASE_URL (ANTHROPIC_* or OPENAI_*
 * as fallbacks, by provider), SAASBENCH_JUDGE_CACHE (directory; "off" = memory only),
 * SAASBENCH_JUDGE_CONCURRENCY, SAASBENCH_JUDGE_ATTEMPTS (backoff is the SDKs').
 */
export function judgeFor(settings: JudgeSettings, endpoint: JudgeEndpoint): JudgePort | undefined {
  if (!settings.enabled) return undefined;
  const provider = (process.env.SAASBENCH_JUDGE_PROVIDER ?? 'anthropic').toLowerCase() === 'openai' ? 'openai' : 'anthropic';
  const apiKey = provider === 'openai' ? process.env.SAASBENCH_JUDGE_API_KEY ?? process.env.OPENAI_API_KEY ?? '' : endpoint.apiKey;
  const baseUrl = provider === 'openai' ? process.env.SAASBENCH_JUDGE_BASE_URL ?? process.env.OPENAI_BASE_URL : endpoint.baseUrl;
  if (!apiKey) return undefined;
  const cache = process.env.SAASBENCH_JUDGE_CACHE;
  return createJudge({
    provider,
    apiKey,
    baseUrl,
    model: process.env.SAASBENCH_JUDGE_MODEL ?? settings.model,
    cacheDir: cache === 'off' ? null : cache ?? join(repoRoot(), '.saasbench', 'judge-cache'),
    maxAttempts: process.env.SAASBENCH_JUDGE_ATTEMPTS ? Number(process.env.SAASBENCH_JUDGE_ATTEMPTS) : undefined,
  });
}
