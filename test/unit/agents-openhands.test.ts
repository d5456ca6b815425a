// OpenHands: the generated TOML (the paper's settings), the task file, and parsing its own
// trajectory (captured from the real OpenHands 1.6.0 run against the fake).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../src/paths';
import { resolveModel } from '../../src/agents/models';
import { parse } from 'smol-toml';

/** TOML parsed into plain objects (smol-toml makes null-prototype tables). */
const parseToml = (text: string): Record<string, unknown> => JSON.parse(JSON.stringify(parse(text)));
import { LLM_CONFIG_NAME, litellmModel, openhandsAgent, openhandsConfig, openhandsNotApplied, openhandsTask } from '../../src/agents/openhands';
import { openhandsTrajectory, trajectoryFromStdout } from '../../src/agents/openhands/trajectory';
import { toAtif } from '../../src/agents/trajectory/atif';
import type { AgentContext } from '../../src/agents/types';

const raw = readFileSync(join(repoRoot(), 'test', 'fixtures', 'agents', 'openhands-1.6.0-trajectory.json'), 'utf8');
const BEGIN = '=====SAASBENCH_OPENHANDS_TRAJECTORY_BEGIN=====';
const END = '=====SAASBENCH_OPENHANDS_TRAJECTORY_END=====';
const stdout = `12:00:01 - openhands:INFO: lots of logging\n${BEGIN}\n${raw}\n${END}\n`;

test('openhands config.toml: the paper\'s settings, the relay as base_url with the relay token, MCP and browsing off', () => {
  const { text } = openhandsConfig(resolveModel('claude-sonnet-4-5'), { baseUrl: 'http://127.0.0.1:41000', token: 'sk-saasbench-relay-x' });
  for (const line of ['max_iterations = 500', 'default_agent = "CodeActAgent"', 'runtime = "local"', 'model = "anthropic/claude-sonnet-4-5-20250929"', 'base_url = "http://127.0.0.1:41000"', 'api_key = "sk-saasbench-relay-x"', 'temperature = 0', 'num_retries = 5', 'retry_min_wait = 10', 'retry_max_wait = 60', 'enable_mcp = false', 'enable_browsing = false', 'enable_jupyter = true', 'timeout = 900']) {
    assert.ok(text.split('\n').includes(line), line);
  }
  assert.match(text, /\[core\][\s\S]*\[llm\][\s\S]*\[agent\][\s\S]*\[sandbox\]/);
  const gem = openhandsConfig(resolveModel('gemini-3-pro'), { baseUrl: 'http://127.0.0.1:41000', token: 't' }).text;
  assert.match(gem, /^model = "openai\/gemini-3-pro-preview"$/m);
  assert.match(gem, /^max_output_tokens = 65536$/m);
  // Gemini thinking goes as Google's extra_body.google.thinking_config (includeThoughts really sent)
  assert.deepEqual(llmOf(gem).completion_kwargs, { temperature: 0, extra_body: { extra_body: { google: { thinking_config: { thinking_budget: 8192, include_thoughts: true } } } } });
  assert.equal((parseToml(openhandsConfig(resolveModel('gpt-5.4'), { baseUrl: 'x', token: 't' }).text).llm as Record<string, unknown>).temperature, 1);
  assert.equal(litellmModel(resolveModel('gpt-5.4')), 'openai/gpt-5.4');
});

/** The agent's LLM config as OpenHands 1.6 reads the TOML: non-table keys of [llm] are the default
 * config, every table under [llm] is a named config over it; [agent] llm_config picks one. */
function llmOf(text: string): Record<string, unknown> {
  const t = parseToml(text);
  const llm = t.llm as Record<string, unknown>;
  const base = Object.fromEntries(Object.entries(llm).filter(([, v]) => typeof v !== 'object' || Array.isArray(v)));
  const name = (t.agent as Record<string, unknown>).llm_config as string | undefined;
  return name ? { ...base, ...(llm[name] as Record<string, unknown>) } : base;
}

test('openhands thinking: completion_kwargs live in a named LLM config the agent uses, so OpenHands 1.6 really passes them to LiteLLM', () => {
  const cfg = (id: string) => openhandsConfig(resolveModel(id), { baseUrl: 'http://127.0.0.1:41000', token: 't' });
  const kimi = cfg('kimi-k2-thinking').text;
  const t = parseToml(kimi);
  assert.equal((t.agent as Record<string, unknown>).llm_config, LLM_CONFIG_NAME);
  assert.equal((t.llm as Record<string, unknown>).completion_kwargs, undefined, 'no table directly under [llm]: OpenHands would read it as a named config');
  for (const [k, v] of Object.entries(t.llm as Record<string, unknown>)) if (k !== LLM_CONFIG_NAME) assert.ok(typeof v !== 'object' || Array.isArray(v), `[llm].${k} is not a table`);
  assert.deepEqual(llmOf(kimi).completion_kwargs, { temperature: 1, thinking: { type: 'enabled' }, allowed_openai_params: ['thinking'] });
  assert.equal(llmOf(kimi).model, 'anthropic/kimi-k2-thinking');
  assert.equal(llmOf(kimi).api_key, 't');
  assert.deepEqual(llmOf(cfg('claude-opus-4-7').text).completion_kwargs, { temperature: 1, thinking: { type: 'adaptive' }, allowed_openai_params: ['thinking'] });
  assert.deepEqual(llmOf(cfg('gpt-5.4').text).completion_kwargs, { temperature: 1, reasoning_effort: 'xhigh' }, 'temperature is re-sent: OpenHands drops it for gpt-5*');
  assert.deepEqual(llmOf(cfg('claude-sonnet-4-5').text).completion_kwargs, { temperature: 0 });
  assert.deepEqual(openhandsNotApplied(resolveModel('kimi-k2-thinking')), []);
  assert.deepEqual(openhandsNotApplied(resolveModel('gemini-3-pro')), []);
});

test('openhands config.toml parses back to the applied record (plus the relay token, kept out of the record)', () => {
  for (const id of ['claude-sonnet-4-5', 'gemini-3-pro', 'gpt-5.4', 'kimi-k2-thinking']) {
    const { text, applied } = openhandsConfig(resolveModel(id), { baseUrl: 'http://127.0.0.1:41000', token: 'sk-saasbench-relay-x' });
    const named = applied.llm[LLM_CONFIG_NAME] as Record<string, unknown>;
    assert.deepEqual(parseToml(text), { ...applied, llm: { ...applied.llm, api_key: 'sk-saasbench-relay-x', [LLM_CONFIG_NAME]: { ...named, api_key: 'sk-saasbench-relay-x' } } }, id);
    assert.doesNotMatch(JSON.stringify(applied), /sk-saasbench-relay/, 'no token in the record');
  }
});

test('openhands task file: the prompt plus where to work (the app container through docker exec)', () => {
  const t = openhandsTask({ prompt: 'Build the helpdesk.\n', workspace: '/app' } as AgentContext, 'p-app');
  assert.match(t, /^Build the helpdesk\.\n\n### Where to work/);
  assert.match(t, /docker exec -i -w \/app p-app bash -lc/);
});

test('openhands trajectory: actions become tool calls with their observations; usage and finish are read', () => {
  const events = trajectoryFromStdout(stdout, BEGIN, END)!;
  assert.equal(events.length, 9);
  const out = { attempt: 1, exitCode: 0, stdout, stderr: '' };
  assert.equal(openhandsAgent.completed!(out), true);
  assert.equal(openhandsAgent.transientFailure!(out), null);
  const t = openhandsTrajectory([{ attempt: out, events }], { model: 'fake-chat', prompt: 'p', agentVersion: '1.6.0' });
  assert.equal(t.totals.toolCalls, 3, 'two commands and finish');
  const calls = t.steps.flatMap((s) => (s.kind === 'agent' ? s.toolCalls : []));
  assert.equal(calls[0].name, 'execute_bash');
  assert.match(calls[0].command!, /^docker exec -i .* bash -s/);
  assert.equal(calls[0].exitCode, 0);
  assert.match(calls[0].output!, /server started/);
  assert.equal(calls[2].name, 'finish');
  assert.ok(t.totals.inputTokens > 0 && t.totals.outputTokens > 0);
  assert.equal(t.attempts[0].completed, true);
  assert.ok(t.steps.some((s) => s.kind === 'user'), 'the user message is kept; system/recall are not steps');
});

test('openhands trajectory: per-turn usage and cost from the cumulative llm_metrics, into ATIF step metrics', () => {
  const events = trajectoryFromStdout(stdout, BEGIN, END)!;
  const out = { attempt: 1, exitCode: 0, stdout, stderr: '' };
  const t = openhandsTrajectory([{ attempt: out, events }], { model: 'fake-chat', prompt: 'p', agentVersion: '1.6.0' });
  const used = t.steps.flatMap((s) => (s.kind === 'agent' && s.usage ? [s.usage] : []));
  // the fixture's cumulative prompt/completion tokens: 300/40, 601/81, 903/123
  assert.deepEqual(used.map((u) => [u.inputTokens, u.outputTokens]), [[300, 40], [301, 41], [302, 42]]);
  assert.equal(used.reduce((n, u) => n + u.inputTokens, 0), t.totals.inputTokens, 'the turns add up to the run');
  // a second attempt starts its own count; an event whose metrics did not grow (a second action of
  // one response) gets no usage of its own; cost is the growth of accumulated_cost
  const lm = (p: number, c: number, usd: number) => ({ accumulated_cost: usd, accumulated_token_usage: { prompt_tokens: p, completion_tokens: c, cache_read_tokens: p / 2 } });
  const run = (id: number, m?: object) => ({ id, source: 'agent', action: 'run', args: { command: `echo ${id}` }, ...(m ? { llm_metrics: m } : {}) });
  const second = [run(1, lm(100, 10, 0.01)), run(2, lm(100, 10, 0.01)), run(3, lm(250, 30, 0.04))];
  const t2 = openhandsTrajectory([{ attempt: out, events }, { attempt: { ...out, attempt: 2 }, events: second }], { model: 'm', prompt: 'p', agentVersion: null });
  const steps2 = t2.steps.filter((s) => s.kind === 'agent' && s.attempt === 2);
  assert.deepEqual(steps2.map((s) => (s.kind === 'agent' ? s.usage : null)), [
    { inputTokens: 100, outputTokens: 10, cachedInputTokens: 50, costUsd: 0.01 },
    undefined,
    { inputTokens: 150, outputTokens: 20, cachedInputTokens: 75, costUsd: 0.03 },
  ]);
  const atif = toAtif(t2);
  const metrics = atif.steps.filter((s) => s.extra?.attempt === 2).map((s) => s.metrics);
  assert.deepEqual(metrics[0], { prompt_tokens: 100, completion_tokens: 10, cached_tokens: 50, cost_usd: 0.01 });
  assert.equal(metrics[1], undefined);
  assert.ok(Math.abs(metrics[2]!.cost_usd! - 0.03) < 1e-9);
});

test('openhands: no trajectory printed (killed) → not completed; LiteLLM overload errors are transient', () => {
  const killed = { attempt: 1, exitCode: null, stdout: '12:00 - openhands:INFO: starting\n', stderr: '' };
  assert.equal(openhandsAgent.completed!(killed), false);
  assert.equal(openhandsTrajectory([{ attempt: killed, events: null }], { model: 'm', prompt: 'p', agentVersion: null }).attempts[0].error, 'stopped before OpenHands wrote its trajectory');
  const failed = { attempt: 1, exitCode: 1, stdout: '12:00 - openhands:ERROR: litellm.ServiceUnavailableError: OpenAIException - The server is overloaded or not ready yet.\n', stderr: '' };
  assert.match(openhandsAgent.transientFailure!(failed)!, /overloaded|service unavailable/i);
  assert.equal(openhandsAgent.transientFailure!({ ...failed, stdout: '12:00 - openhands:ERROR: litellm.BadRequestError: context length exceeded\n' }), null);
});
