import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearJudgeMemoryCache, createJudge, judgeFor, type JudgeOptions } from '../../src/judge/judge-port';
import { runNode } from '../../src/primitives/run-chain';
import type { JudgePort, PrimitiveEnv } from '../../src/primitives/types';
import { scoreTask } from '../../src/scoring/task-score';
import type { NodeOutcome } from '../../src/model/scores';
import type { DagNode } from '../../src/model/dag';
import { startFakeJudge, type FakeJudgeServer } from '../fakes/fake-anthropic-judge';
import { httpEnv } from '../fixtures/primitives/harness';

let fake: FakeJudgeServer;
let cacheDir: string;
let seq = 0;

before(async () => {
  fake = await startFakeJudge();
  cacheDir = mkdtempSync(join(tmpdir(), 'sb-judge-cache-'));
});
after(async () => {
  await fake.close();
  rmSync(cacheDir, { recursive: true, force: true });
});
beforeEach(() => {
  fake.reset();
  clearJudgeMemoryCache();
});

const judge = (o: Partial<JudgeOptions> = {}) => createJudge({ provider: 'anthropic', apiKey: 'sk-test-judge-key', baseUrl: fake.url, model: 'judge-model', cacheDir, maxAttempts: 3, ...o });

/** A one-node llm-judge chain with last-response evidence (unique per call, so no cache hits unless wanted). */
function judgeNode(maxScore: number, evidence = `evidence ${++seq}`): { node: DagNode; env: (j: JudgePort) => PrimitiveEnv; evidence: string } {
  const node: DagNode = {
    id: `JUDGE_${seq}`,
    description: '',
    prereqs: [],
    chain: [{ type: 'P17', inputs: { rubric_prompt: 'Is the page good? Score 0-5.', evidence_type: 'last_response', score_range: [0, maxScore], max_score: maxScore } }],
    scoring: { category: 'Frontend', subcategory: 'X', method: 'llm-judge', maxScore },
  };
  return {
    node,
    evidence,
    env: (j) => ({ ...httpEnv('http://127.0.0.1:9'), judge: j }),
  };
}

async function runJudgeNode(j: JudgePort, maxScore = 5, evidence?: string) {
  const { node, env, evidence: ev } = judgeNode(maxScore, evidence);
  // the evidence: a last response placed in the chain by a tiny fake primitive-free path: P17 reads state.last
  const e = env(j);
  const run = await runNode({ ...node, chain: [{ type: 'P08', inputs: { sql: 'SELECT 1' } }, ...node.chain] }, { ...e, sql: async () => ({ rows: [{ evidence: ev }], columns: ['evidence'] }) }, { judgeEnabled: true, vars: {} });
  return run;
}

describe('P17 against a fake Anthropic judge on 127.0.0.1', () => {
  test('clean JSON: the score is the node score; temperature 0, the model, the rubric and the evidence are sent', async () => {
    fake.setHandler(() => ({ text: '{"score": 4, "reasoning": "solid layout"}' }));
    const run = await runJudgeNode(judge(), 5, 'clean-json-evidence');
    assert.equal(run.status, 'PASSED');
    assert.equal(run.score, 4);
    assert.equal(fake.calls.length, 1);
    const c = fake.calls[0];
    assert.equal(c.body.temperature, 0);
    assert.equal(c.body.model, 'judge-model');
    assert.equal(c.apiKey, 'sk-test-judge-key');
    assert.match(c.text, /Is the page good\?/);
    assert.match(c.text, /clean-json-evidence/);
    assert.match(String(c.body.system), /"score"/);
  });

  test('fenced JSON', async () => {
    fake.setHandler(() => ({ text: 'Here is my verdict:\n```json\n{"score": 3, "reasoning": "ok"}\n```' }));
    const run = await runJudgeNode(judge());
    assert.deepEqual([run.status, run.score], ['PASSED', 3]);
  });

  test('prose with a number', async () => {
    fake.setHandler(() => ({ text: 'The implementation is decent but lacks polish. I would rate it 2 out of 5.' }));
    const run = await runJudgeNode(judge());
    assert.deepEqual([run.status, run.score], ['PASSED', 2]);
  });

  test('garbage → asked again (retries) → FAILED with score 0', async () => {
    fake.setHandler(() => ({ text: 'I am not able to evaluate this.' }));
    const run = await runJudgeNode(judge());
    assert.equal(run.status, 'FAILED');
    assert.equal(run.score, 0);
    assert.equal(fake.calls.length, 3, '1 call + 2 parse retries');
    assert.match(run.message, /could not be read as a score after 3 attempts/);
  });

  test('garbage, then JSON on the retry → the retry counts', async () => {
    fake.setHandler((c) => ({ text: c.n === 1 ? 'hmm' : '{"score": 5, "reasoning": "fine"}' }));
    const run = await runJudgeNode(judge());
    assert.deepEqual([run.status, run.score, fake.calls.length], ['PASSED', 5, 2]);
  });

  test('529 outage → backoff and retries → SKIPPED_LLM; the task denominator shrinks by that maxScore', async () => {
    fake.setHandler(() => ({ status: 529 }));
    const started = Date.now();
    const run = await runJudgeNode(judge(), 6);
    assert.equal(run.status, 'SKIPPED_LLM');
    assert.equal(fake.calls.length, 3, 'maxAttempts transport attempts');
    assert.ok(Date.now() - started >= 300, 'the SDK backed off between attempts (0.5 s, then 1 s, less up to 25 % jitter)');
    const outcome = (id: string, status: NodeOutcome['status'], score: number, maxScore: number, method: NodeOutcome['method']): NodeOutcome => ({ nodeId: id, status, score, maxScore, method, category: 'X', subcategory: '', message: '', exports: {}, durationMs: 0 });
    const s = scoreTask([outcome('A', 'PASSED', 4, 4, 'binary'), outcome('B', 'FAILED', 0, 4, 'binary'), outcome('J', run.status, run.score, 6, 'llm-judge')], {});
    assert.equal(s.overall.maxScore, 8, 'the judge node left the denominator');
    assert.equal(s.overall.pct, 50);
    assert.equal(s.judgeDroppedMaxScore, 6);
  });

  test('429 with Retry-After is honoured, then the answer counts', async () => {
    fake.setHandler((c) => (c.n === 1 ? { status: 429, headers: { 'retry-after': '0' } } : { text: '{"score": 2, "reasoning": "x"}' }));
    const run = await runJudgeNode(judge());
    assert.deepEqual([run.status, run.score, fake.calls.length], ['PASSED', 2, 2]);
  });

  test('a Retry-After beyond 60 s is not slept on: the SDK backs off as usual; every attempt is counted', async () => {
    fake.setHandler((c) => (c.n === 1 ? { status: 429, headers: { 'retry-after': '3600' } } : { text: '{"score": 1, "reasoning": "x"}' }));
    const j = judge({ cacheDir: null });
    const started = Date.now();
    const v = await j.judge({ rubric: 'long retry-after', maxScore: 5, evidence: { text: 'x' } });
    assert.deepEqual(v.skipped ? null : v.score, 1);
    assert.ok(Date.now() - started < 10_000, 'did not wait an hour');
    assert.equal(j.requests, 2, 'the retry is a request too');
  });

  test('401 (bad key) is not retried: SKIPPED_LLM at once', async () => {
    fake.setHandler(() => ({ status: 401 }));
    const run = await runJudgeNode(judge());
    assert.equal(run.status, 'SKIPPED_LLM');
    assert.equal(fake.calls.length, 1);
  });

  test('score above the maximum → clipped to maxScore', async () => {
    fake.setHandler(() => ({ text: '{"score": 9, "reasoning": "generous"}' }));
    const run = await runJudgeNode(judge(), 5);
    assert.deepEqual([run.status, run.score], ['PASSED', 5]);
    fake.setHandler(() => ({ text: '{"score": -3, "reasoning": "harsh"}' }));
    const neg = await runJudgeNode(judge(), 5);
    assert.deepEqual([neg.status, neg.score], ['FAILED', 0]);
  });

  test('same evidence twice → the second verdict comes from the cache, no request (also from disk, for a new process)', async () => {
    fake.setHandler(() => ({ text: '{"score": 3, "reasoning": "cached"}' }));
    const j = judge();
    const first = await runJudgeNode(j, 5, 'cache-me');
    const second = await runJudgeNode(j, 5, 'cache-me');
    assert.equal(fake.calls.length, 1);
    assert.equal(j.requests, 1);
    assert.deepEqual([first.score, second.score], [3, 3]);
    assert.match(second.steps[1].message, /\(cached\)/);
    clearJudgeMemoryCache();
    const third = await runJudgeNode(judge(), 5, 'cache-me');
    assert.equal(fake.calls.length, 1, 'the disk cache answered');
    assert.equal(third.score, 3);
    assert.ok(readdirSync(cacheDir).length >= 1);
    // a different model is a different key
    await runJudgeNode(judge({ model: 'other-model' }), 5, 'cache-me');
    assert.equal(fake.calls.length, 2);
  });

  test('identical concurrent requests share one call; the concurrency limit holds', async () => {
    fake.setHandler(() => ({ text: '{"score": 1, "reasoning": "x"}', delayMs: 60 }));
    const j = judge({ concurrency: 2, cacheDir: null });
    const req = (t: string) => j.judge({ rubric: 'r', maxScore: 5, evidence: { text: t } });
    await Promise.all([req('same'), req('same'), req('a'), req('b'), req('c'), req('d')]);
    assert.equal(fake.calls.length, 5, 'the two identical requests made one call');
    assert.ok(fake.peakInFlight <= 2, `peak ${fake.peakInFlight}`);
  });

  test('strict JSON (_strict_json) refuses prose', async () => {
    fake.setHandler(() => ({ text: 'Score: 4' }));
    const j = judge();
    const lenient = await j.judge({ rubric: 'r1', maxScore: 5, evidence: { text: 'x' } });
    assert.equal(!lenient.skipped && lenient.score, 4);
    const strict = await j.judge({ rubric: 'r2', maxScore: 5, evidence: { text: 'x' }, strictJson: true, parseRetries: 0 });
    assert.ok(!strict.skipped && strict.parseFailed);
  });

  test('judging disabled or no key → no judge: the node is SKIPPED_LLM without any request', async () => {
    assert.equal(judgeFor({ enabled: false, model: 'm' }, { apiKey: 'k' }), undefined);
    assert.equal(judgeFor({ enabled: true, model: 'm' }, { apiKey: '' }), undefined);
    const { node } = judgeNode(5);
    const run = await runNode(node, httpEnv('http://127.0.0.1:9'), { judgeEnabled: false, vars: {} });
    assert.equal(run.status, 'SKIPPED_LLM');
    assert.equal(fake.calls.length, 0);
  });

  test('OpenAI-compatible endpoint (SAASBENCH_JUDGE_PROVIDER=openai)', async () => {
    fake.setHandler(() => ({ text: '{"score": 2, "reasoning": "via chat completions"}' }));
    const saved = { ...process.env };
    process.env.SAASBENCH_JUDGE_PROVIDER = 'openai';
    process.env.SAASBENCH_JUDGE_API_KEY = 'sk-openai-test';
    process.env.SAASBENCH_JUDGE_BASE_URL = `${fake.url}/v1`;
    process.env.SAASBENCH_JUDGE_CACHE = 'off';
    try {
      const j = judgeFor({ enabled: true, model: 'gpt-judge' }, { apiKey: '' })!;
      assert.ok(j);
      const v = await j.judge({ rubric: 'openai rubric', maxScore: 5, evidence: { text: 'e', images: [{ mediaType: 'image/png', base64: 'aGVsbG8=' }] } });
      assert.deepEqual(v.skipped ? null : v.score, 2);
      assert.equal(fake.calls[0].api, 'openai');
      assert.equal(fake.calls[0].apiKey, 'sk-openai-test');
      assert.equal(fake.calls[0].body.temperature, 0);
      assert.equal(fake.calls[0].images, 1);
    } finally {
      process.env = saved;
    }
  });

  test('OpenAI-compatible endpoint: 503 retried by the SDK, 400 refused at once, outage → skipped', async () => {
    const oj = (o: Partial<JudgeOptions> = {}) => judge({ provider: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk-openai-test', cacheDir: null, ...o });
    fake.setHandler((c) => (c.n === 1 ? { status: 503 } : { text: '{"score": 3, "reasoning": "after a retry"}' }));
    const ok = await oj().judge({ rubric: 'openai retry', maxScore: 5, evidence: { text: 'x' } });
    assert.deepEqual([ok.skipped ? null : ok.score, fake.calls.length, fake.calls[1].api], [3, 2, 'openai']);
    fake.reset();
    fake.setHandler(() => ({ status: 400 }));
    const refused = await oj().judge({ rubric: 'openai refused', maxScore: 5, evidence: { text: 'x' } });
    assert.ok(refused.skipped && /refused the request \(HTTP 400/.test(refused.reason), JSON.stringify(refused));
    assert.equal(fake.calls.length, 1);
    fake.reset();
    fake.setHandler(() => ({ status: 529 }));
    const down = await oj({ maxAttempts: 2 }).judge({ rubric: 'openai down', maxScore: 5, evidence: { text: 'x' } });
    assert.ok(down.skipped && /unavailable after 2 attempts \(HTTP 529/.test(down.reason), JSON.stringify(down));
    assert.equal(fake.calls.length, 2);
  });
});
