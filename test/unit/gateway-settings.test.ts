// The registry's settings as the gateway applies them to a request of each upstream protocol
// (src/agents/gateway-settings.ts): field names of that protocol, the agent's values overridden and
// recorded, requests for another model left alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyGatewaySettings, gatewayPlan, newSettingsStats, REMOVED, settleRequest, type SettingsModel } from '../../src/agents/gateway-settings';

const base: SettingsModel = { snapshot: 'snap-1', reasoning: false, temperature: 0 };

test('anthropic: temperature, max_tokens and thinking {type, budget_tokens} replace what the agent sent', () => {
  const m: SettingsModel = { ...base, reasoning: true, temperature: 1, maxOutputTokens: 16000, thinking: { enabled: true, type: 'enabled', budgetTokens: 8192 } };
  const agent = { model: 'snap-1', max_tokens: 32000, temperature: 0.7, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'hi' }] };
  const r = applyGatewaySettings('anthropic', agent, m);
  assert.equal(r.body.temperature, 1);
  assert.equal(r.body.max_tokens, 16000);
  assert.deepEqual(r.body.thinking, { type: 'enabled', budget_tokens: 8192 });
  assert.deepEqual(r.body.messages, agent.messages, 'the conversation is untouched');
  assert.deepEqual(r.overridden, { temperature: 0.7, max_tokens: 32000, thinking: { type: 'adaptive' } });
  assert.equal(agent.temperature, 0.7, 'the input body is not mutated');
});

test('anthropic: adaptive thinking takes no budget; enabled without a registry budget keeps the agent\'s', () => {
  const adaptive = applyGatewaySettings('anthropic', { model: 'snap-1', thinking: { type: 'enabled', budget_tokens: 4000 } }, { ...base, reasoning: true, temperature: 1, thinking: { enabled: true, type: 'adaptive', budgetTokens: 2000 } });
  assert.deepEqual(adaptive.body.thinking, { type: 'adaptive' });
  assert.ok(adaptive.notApplicable.some((n) => /budgetTokens 2000/.test(n)));
  const kept = applyGatewaySettings('anthropic', { model: 'snap-1', thinking: { type: 'enabled', budget_tokens: 4000 } }, { ...base, reasoning: true, temperature: 1, thinking: { enabled: true, type: 'enabled' } });
  assert.deepEqual(kept.body.thinking, { type: 'enabled', budget_tokens: 4000 });
  assert.deepEqual(kept.overridden, {}, 'nothing differed');
});

test('anthropic: a model the paper ran without thinking gets the agent\'s thinking removed (temperature 0 forbids it)', () => {
  const r = applyGatewaySettings('anthropic', { model: 'snap-1', thinking: { type: 'adaptive' } }, base);
  assert.equal('thinking' in r.body, false);
  assert.equal(r.body.temperature, 0);
  assert.equal(r.applied.thinking, REMOVED);
  assert.deepEqual(r.overridden.thinking, { type: 'adaptive' });
  assert.equal('max_tokens' in r.body, false, 'no max_tokens in the registry: the agent\'s (none here) is kept');
});

test('chat: temperature, max_tokens (or max_completion_tokens when the agent used it), reasoning_effort, usage in streams', () => {
  const m: SettingsModel = { ...base, reasoning: true, temperature: 0.3, maxOutputTokens: 4096, reasoningEffort: 'high' };
  const a = applyGatewaySettings('chat', { model: 'snap-1', max_tokens: 100, stream: true, messages: [] }, m);
  assert.deepEqual(
    { t: a.body.temperature, mt: a.body.max_tokens, mct: a.body.max_completion_tokens, e: a.body.reasoning_effort, so: a.body.stream_options },
    { t: 0.3, mt: 4096, mct: undefined, e: 'high', so: { include_usage: true } },
  );
  const b = applyGatewaySettings('chat', { model: 'snap-1', max_completion_tokens: 100, max_tokens: 50 }, m);
  assert.equal(b.body.max_completion_tokens, 4096);
  assert.equal('max_tokens' in b.body, false, 'never both');
  assert.equal('stream_options' in b.body, false, 'not streaming: no stream_options');
  assert.deepEqual(b.overridden, { max_completion_tokens: 100, max_tokens: 50 });
});

test('chat (Gemini): thinking in extra_body.google.thinking_config, reasoning_effort removed', () => {
  const m: SettingsModel = { ...base, reasoning: true, temperature: 0, maxOutputTokens: 65536, thinking: { enabled: true, includeThoughts: true, budgetTokens: 8192 } };
  const r = applyGatewaySettings('chat', { model: 'snap-1', reasoning_effort: 'low', extra_body: { google: { cached_content: 'c1' } } }, m);
  assert.deepEqual(r.body.extra_body, { google: { cached_content: 'c1', thinking_config: { include_thoughts: true, thinking_budget: 8192 } } });
  assert.equal('reasoning_effort' in r.body, false);
  assert.equal(r.body.max_tokens, 65536);
  assert.equal(r.overridden.reasoning_effort, 'low');
});

test('responses: temperature, max_output_tokens, reasoning.effort and summary (other reasoning fields kept)', () => {
  const m: SettingsModel = { ...base, reasoning: true, temperature: 1, maxOutputTokens: 9000, reasoningEffort: 'xhigh', reasoningSummary: 'auto', thinking: { enabled: true } };
  const r = applyGatewaySettings('responses', { model: 'snap-1', reasoning: { effort: 'medium', encrypted: 'keep' }, input: [] }, m);
  assert.equal(r.body.temperature, 1);
  assert.equal(r.body.max_output_tokens, 9000);
  assert.deepEqual(r.body.reasoning, { effort: 'xhigh', encrypted: 'keep', summary: 'auto' });
  assert.deepEqual(r.overridden, { 'reasoning.effort': 'medium' });
  assert.ok(r.notApplicable.some((n) => /^thinking/.test(n)), 'thinking has no Responses field');
});

test('relayBodyOverrides are merged last, as given', () => {
  const r = applyGatewaySettings('chat', { model: 'snap-1' }, { ...base, relayBodyOverrides: { temperature: 0.5, seed: 7 } });
  assert.equal(r.body.temperature, 0.5);
  assert.equal(r.body.seed, 7);
});

test('gatewayPlan: what a request without settings gets, per protocol', () => {
  const m: SettingsModel = { ...base, temperature: 0, maxOutputTokens: 100 };
  assert.deepEqual(gatewayPlan('anthropic', m).applied, { temperature: 0, max_tokens: 100 });
  assert.deepEqual(gatewayPlan('responses', m).applied, { temperature: 0, max_output_tokens: 100 });
  assert.deepEqual(gatewayPlan('chat', m).applied, { temperature: 0, max_tokens: 100 });
});

test('settleRequest: counts, overrides with distinct agent values, other models passed untouched', () => {
  const stats = newSettingsStats();
  const m: SettingsModel = { ...base, temperature: 0 };
  for (const t of [0.2, 0.2, 0.9, 0]) settleRequest(stats, 'chat', { model: 'snap-1', temperature: t }, m);
  const other = { model: 'claude-haiku', temperature: 0.9 };
  assert.equal(settleRequest(stats, 'chat', other, m), other);
  assert.equal(stats.requests, 4);
  assert.equal(stats.otherModelRequests, 1);
  assert.deepEqual(stats.overridden, { temperature: { count: 3, agentSent: [0.2, 0.9] } });
  assert.deepEqual(stats.applied, { temperature: 0 });
});
