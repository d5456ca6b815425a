// Cost arithmetic (src/agents/metering.ts): tokens × the registry's dated price, null with a reason
// when a price is missing, never a guess.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costOf, gatewayRecord, PriceSchema, type Price } from '../../src/agents/metering';
import { fmtUsd } from '../../src/model/cost';
import { resolveModel } from '../../src/agents/models';

const price: Price = { asOf: '2025-09-29', inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15, source: 'test' };

test('cost = fresh input × input price + cached × cached price + output × output price', () => {
  const c = costOf({ requests: 2, input: 1_000_000, cachedInput: 400_000, output: 100_000, reasoning: 30_000 }, price, 'm');
  // 600k fresh × $3 + 400k cached × $0.30 + 100k output × $15 (reasoning is inside output)
  assert.equal(c.usd, 1.8 + 0.12 + 1.5);
  assert.equal(c.reason, null);
  assert.equal(c.price, price);
});

test('no price: null with the reason (the registry\'s own when it gives one)', () => {
  const c = costOf({ requests: 1, input: 10, cachedInput: 0, output: 1, reasoning: 0 }, undefined, 'gpt-x', 'tiered');
  assert.equal(c.usd, null);
  assert.match(c.reason!, /no price for model "gpt-x".*\(tiered\)/);
});

test('cached tokens without a cached-input price: null, not priced at the input rate', () => {
  const { cachedInputPerMTok: _, ...noCache } = price;
  assert.equal(costOf({ requests: 1, input: 100, cachedInput: 0, output: 10, reasoning: 0 }, noCache, 'm').usd, (100 * 3 + 10 * 15) / 1e6);
  const c = costOf({ requests: 1, input: 100, cachedInput: 50, output: 10, reasoning: 0 }, noCache, 'm');
  assert.equal(c.usd, null);
  assert.match(c.reason!, /50 cached input tokens/);
});

test('unreadable answers make the cost a lower bound, said so', () => {
  const c = costOf({ requests: 1, input: 1000, cachedInput: 0, output: 0, reasoning: 0, unmetered: 2 }, price, 'm');
  assert.equal(c.usd, 0.003);
  assert.match(c.reason!, /lower bound: 2/);
});

test('the price shape is strict: a bad date or an unknown field is refused', () => {
  assert.equal(PriceSchema.safeParse({ ...price, asOf: '29.9.2025' }).success, false);
  assert.equal(PriceSchema.safeParse({ ...price, currency: 'EUR' }).success, false);
});

test('every registry model has a dated price or says why it has none', () => {
  for (const id of ['claude-opus-4-7', 'claude-sonnet-4-5', 'gemini-3-pro', 'gpt-5.4', 'kimi-k2-thinking', 'qwen3-coder', 'deepseek-v3.2', 'glm-4.6', 'minimax-m2']) {
    const m = resolveModel(id);
    assert.ok(m.price || m.priceUnknown, `${id}: price or priceUnknown`);
    const r = gatewayRecord({ usage: { requests: 1, input: 1000, cachedInput: 0, output: 100, reasoning: 0 } }, m);
    if (m.price) assert.equal(r.costUsd, Math.round(((1000 * m.price.inputPerMTok + 100 * m.price.outputPerMTok) / 1e6) * 1e6) / 1e6);
    else assert.equal(r.costUsd, null);
  }
});

test('fmtUsd', () => {
  assert.equal(fmtUsd(null), '–');
  assert.equal(fmtUsd(0.01234), '$0.0123');
  assert.equal(fmtUsd(12.345), '$12.35');
});
