import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { registerSecret, log } from '../log';
import type { JudgePort, JudgeRequest, JudgeVerdict } from '../primitives/types';
import { sendRaw } from '../http/raw';
import { HttpTransportError } from '../http/request';
import { readJsonIfExists, writeJson } from '../runs/files';
import { repoRoot } from '../paths';
import type { JudgeSettings } from '../model/rollout';
import { parseVerdict } from './parse-verdict';

/**
 * The LLM judge (P17's port). One request per (model, rubric, range, evidence): verdicts are cached
 * in memory and on disk, identical concurrent requests share one call, and a process-wide
 * semaphore limits calls in flight. Transient API failures (429, 529, 5xx, connection errors,
 * timeouts) are retried with exponential backoff (Retry-After honoured); when they persist — or the
 * API refuses the request (401, 403, 404, 400) — the verdict is `skipped` (the node becomes
 * SKIPPED_LLM). A reply that cannot be read as a score is asked again `parseRetries` times, then
 * the verdict is score 0 with `parseFailed` (the node FAILS): the judge answered, just not usably.
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
  /** attempts per call on transient failures (default 4) */
  maxAttempts?: number;
  /** first backoff; doubles per attempt, capped at 60 s (default 2000 ms) */
  backoffMs?: number;
  timeoutMs?: number;
  maxTokens?: number;
}

export interface Judge extends JudgePort {
  /** requests sent to the API by this judge (cache hits send none) */
  readonly requests: number;
}

type Reply = { ok: true; text: string } | { ok: false; transient: boolean; status?: number; message: string; retryAfterMs?: number };

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TRANSIENT = new Set([408, 409, 425, 429, 500, 502, 503, 504, 529]);

export function createJudge(o: JudgeOptions): Judge {
  registerSecret(o.apiKey);
  let requests = 0;
  const anthropic = o.provider === 'anthropic' ? new Anthropic({ apiKey: o.apiKey, baseURL: o.baseUrl, maxRetries: 0, timeout: o.timeoutMs ?? 120_000 }) : undefined;
  const maxTokens = o.maxTokens ?? 1024;

  async function callAnthropic(req: JudgeRequest, user: string): Promise<Reply> {
    const content: Anthropic.ContentBlockParam[] = [
      { type: 'text', text: user },
      ...(req.evidence.images ?? []).map((img) => ({ type: 'image' as const, source: { type: 'base64' as const, media_type: img.mediaType as 'image/png', data: img.base64 } })),
    ];
    try {
      // temperature 0 as the paper specifies (SDK 1.14's typings dropped the field; the API takes it)
      const params = { model: o.model, max_tokens: maxTokens, temperature: 0, system: systemPrompt(req.minScore ?? 0, req.maxScore), messages: [{ role: 'user', content }] } as Anthropic.MessageCreateParamsNonStreaming;
      const msg = await anthropic!.messages.create(params);
      return { ok: true, text: msg.content.map((b) => (b.type === 'text' ? b.text : '')).join('') };
    } catch (err) {
      const e = err as Error & { status?: number; headers?: Headers | Record<string, string> };
      if (e instanceof Anthropic.APIError && typeof e.status === 'number') {
        const ra = headerOf(e.headers, 'retry-after');
        return { ok: false, transient: TRANSIENT.has(e.status), status: e.status, message: e.message, retryAfterMs: ra && /^\d+(\.\d+)?$/.test(ra) ? Number(ra) * 1000 : undefined };
      }
      // connection errors, timeouts (APIConnectionError, APIConnectionTimeoutError)
      return { ok: false, transient: true, message: e.message };
    }
  }

  async function callOpenAi(req: JudgeRequest, user: string): Promise<Reply> {
    const base = (o.baseUrl ?? 'https://api.openai.com/v1').replace(/\/$/, '');
    const u = new URL(base);
    const body = {
      model: o.model,
      temperature: 0,
      max_tokens: maxTokens,
      messages: [
        { role: 'system', content: systemPrompt(req.minScore ?? 0, req.maxScore) },
        { role: 'user', content: [{ type: 'text', text: user }, ...(req.evidence.images ?? []).map((i) => ({ type: 'image_url', image_url: { url: `data:${i.mediaType};base64,${i.base64}` } }))] },
      ],
    };
    try {
      const res = await sendRaw({
        baseUrl: u.origin,
        method: 'POST',
        path: `${u.pathname.replace(/\/$/, '')}/chat/completions`,
        headers: { Authorization: `Bearer ${o.apiKey}`, 'Content-Type': 'application/json', Accept: 'application/json' },
        body: Buffer.from(JSON.stringify(body)),
        timeoutMs: o.timeoutMs ?? 120_000,
      });
      if (res.status !== 200) {
        const ra = res.headers['retry-after'];
        return { ok: false, transient: TRANSIENT.has(res.status), status: res.status, message: `HTTP ${res.status}: ${res.rawText.slice(0, 200)}`, retryAfterMs: ra && /^\d+$/.test(ra) ? Number(ra) * 1000 : undefined };
      }
      const text = (res.body as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
      return { ok: true, text: typeof text === 'string' ? text : '' };
    } catch (e) {
      if (e instanceof HttpTransportError) return { ok: false, transient: true, message: e.message };
      throw e;
    }
  }

  /** One reply, retrying transient failures with backoff; undefined text = the judge is unavailable. */
  async function reply(req: JudgeRequest, user: string): Promise<{ text?: string; why?: string }> {
    const attempts = o.maxAttempts ?? 4;
    let last = '';
    for (let a = 1; a <= attempts; a++) {
      requests++;
      const r = o.provider === 'anthropic' ? await callAnthropic(req, user) : await callOpenAi(req, user);
      if (r.ok) return { text: r.text };
      last = `${r.status ? `HTTP ${r.status}: ` : ''}${r.message.slice(0, 200)}`;
      if (!r.transient) return { why: `judge refused the request (${last})` };
      if (a < attempts) {
        const backoff = Math.min(60_000, (o.backoffMs ?? 2000) * 2 ** (a - 1));
        const wait = r.retryAfterMs !== undefined ? Math.min(60_000, Math.max(r.retryAfterMs, backoff)) : backoff;
        log.warn({ status: r.status, attempt: a, waitMs: wait }, 'judge busy or unreachable; backing off');
        await sleep(wait);
      }
    }
    return { why: `judge unavailable after ${attempts} attempts (${last})` };
  }

  async function judgeUncached(req: JudgeRequest): Promise<JudgeVerdict> {
    const lo = req.minScore ?? 0;
    const hi = req.maxScore;
    const user = `## Rubric (score from ${lo} to ${hi})\n${req.rubric}\n\n## Evidence\n${req.evidence.text}`;
    const tries = 1 + (req.parseRetries ?? 2);
    let raw = '';
    for (let t = 1; t <= tries; t++) {
      const r = await limited(o.concurrency ?? Number(process.env.SAASBENCH_JUDGE_CONCURRENCY ?? 4), () => reply(req, user));
      if (r.text === undefined) return { skipped: true, reason: r.why ?? 'judge unavailable' };
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

function headerOf(h: Headers | Record<string, string> | undefined, name: string): string | undefined {
  if (!h) return undefined;
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  return (h as Record<string, string>)[name];
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
 * SAASBENCH_JUDGE_CONCURRENCY, SAASBENCH_JUDGE_BACKOFF_MS, SAASBENCH_JUDGE_ATTEMPTS.
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
    backoffMs: process.env.SAASBENCH_JUDGE_BACKOFF_MS ? Number(process.env.SAASBENCH_JUDGE_BACKOFF_MS) : undefined,
    maxAttempts: process.env.SAASBENCH_JUDGE_ATTEMPTS ? Number(process.env.SAASBENCH_JUDGE_ATTEMPTS) : undefined,
  });
}
