import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseVerdict } from '../../src/judge/parse-verdict';
import { evidenceKey, systemPrompt } from '../../src/judge/judge-port';

const score = (t: string, strict = false) => parseVerdict(t, { strict })?.score ?? null;

test('JSON forms: clean, fenced, embedded, string score, raw newline inside a string, reason alias', () => {
  assert.equal(score('{"score": 4, "reasoning": "fine"}'), 4);
  assert.equal(score('```json\n{"score": 3.5, "reasoning": "x"}\n```'), 3.5);
  assert.equal(score('Verdict follows. {"score": 2, "reasoning": "has {braces} inside"} Thanks.'), 2);
  assert.equal(score('{"score": "5", "reasoning": "x"}'), 5);
  assert.equal(score('{"score": 1, "reasoning": "line one\nline two"}'), 1);
  assert.equal(parseVerdict('{"score": 2, "reason": "short"}')?.reasoning, 'short');
  assert.equal(score('4'), 4);
});

test('prose fallbacks: "score: N", "score of N", "N/M", "N out of M", a last bare line', () => {
  assert.equal(score('Overall the Score: 3 given the layout.'), 3);
  assert.equal(score('I would give it a score of 2.'), 2);
  assert.equal(score('Rating 4/5 because of the sidebar.'), 4);
  assert.equal(score('It deserves 1 out of 6.'), 1);
  assert.equal(score('Good work overall.\n**5**'), 5);
});

test('garbage is unparseable (no "first number anywhere")', () => {
  assert.equal(score('I cannot evaluate this.'), null);
  assert.equal(score('The app has 12 routes and 3 models but I will not score it.'), null);
  assert.equal(score('{"score": "N/A"}'), null);
  assert.equal(score(''), null);
});

test('strict mode accepts only JSON', () => {
  assert.equal(score('Score: 4', true), null);
  assert.equal(score('```\n{"score": 4}\n```', true), 4);
});

test('the cache key covers model, rubric, range and evidence (text and images)', () => {
  const base = { rubric: 'r', maxScore: 5, evidence: { text: 'e' } };
  const k = (o: object, m = 'm') => evidenceKey({ provider: 'anthropic', model: m }, { ...base, ...o });
  assert.equal(k({}), k({}));
  assert.notEqual(k({}), k({}, 'm2'));
  assert.notEqual(k({}), k({ rubric: 'r2' }));
  assert.notEqual(k({}), k({ maxScore: 6 }));
  assert.notEqual(k({}), k({ evidence: { text: 'e2' } }));
  assert.notEqual(k({}), k({ evidence: { text: 'e', images: [{ mediaType: 'image/png', base64: 'AA==' }] } }));
  assert.match(systemPrompt(0, 6), /from 0 to 6/);
});
