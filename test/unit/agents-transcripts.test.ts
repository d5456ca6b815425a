// Parsing the real CLIs' event streams (captured from Claude Code 2.1.126 and Codex 0.128.0 runs
// against the fakes), transient-failure detection, the normalized trajectory and its ATIF export.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../src/paths';
import { claudeCompleted, claudeSessionId, claudeTrajectory, claudeTransient } from '../../src/agents/claude-code/events';
import { codexCompleted, codexThreadId, codexTrajectory, codexTransient } from '../../src/agents/codex/events';
import { transientIn } from '../../src/agents/transient';
import { toAtif } from '../../src/agents/trajectory/atif';
import { summarize } from '../../src/agents/trajectory/types';
import type { AttemptOutput } from '../../src/agents/types';

const fx = (name: string) => readFileSync(join(repoRoot(), 'test', 'fixtures', 'agents', name), 'utf8');
const out = (stdout: string, attempt = 1, stderr = '', exitCode: number | null = 0): AttemptOutput => ({ attempt, exitCode, stdout, stderr });
const meta = { model: 'fake-claude', prompt: 'build it', agentVersion: null };

test('claude-code: a successful run completes, has its session id, and normalizes to turns, tool calls, tokens and cost', () => {
  const a = out(fx('claude-2.1.126-success.jsonl'));
  assert.equal(claudeCompleted(a), true);
  assert.equal(claudeTransient(a), null);
  assert.match(claudeSessionId(a.stdout)!, /^[0-9a-f-]{36}$/);
  const t = claudeTrajectory([a], meta);
  assert.equal(t.agentVersion, '2.1.126', 'read from the init event');
  assert.equal(t.totals.turns, 3, 'assistant events of one message id merge into one step');
  assert.equal(t.totals.toolCalls, 2);
  const calls = t.steps.flatMap((s) => (s.kind === 'agent' ? s.toolCalls : []));
  assert.equal(calls[0].name, 'Bash');
  assert.match(calls[0].command!, /cat > \/app\/server\.pl/);
  assert.match(calls[0].output!, /server started/);
  assert.equal(calls[0].isError, false);
  // result usage: input + cache reads + cache writes = all input tokens (ATIF's prompt_tokens)
  assert.equal(t.totals.inputTokens, 303 + 30);
  assert.equal(t.totals.cachedInputTokens, 30);
  assert.equal(t.totals.outputTokens, 63);
  assert.ok(t.totals.costUsd! > 0);
  assert.equal(t.finalText, 'Done: the server is running on port 8080.');
  assert.deepEqual(t.attempts, [{ attempt: 1, completed: true, error: null, events: t.attempts[0].events }]);
  const s = summarize(t, ['claude_events.jsonl']);
  assert.equal(s.commands, 2);
  assert.deepEqual(s.sessionIds, t.sessionIds);
});

test('claude-code: a 529 ends with is_error true (subtype still "success") and is transient; the partial work is kept', () => {
  const a = out(fx('claude-2.1.126-overloaded.jsonl'), 1, '', 1);
  assert.equal(claudeCompleted(a), false);
  assert.match(claudeTransient(a)!, /overloaded|529/i);
  const t = claudeTrajectory([a, out(fx('claude-2.1.126-success.jsonl'), 2)], meta);
  assert.equal(t.attempts.length, 2);
  assert.equal(t.attempts[0].completed, false);
  assert.match(t.attempts[0].error!, /529/);
  assert.equal(t.attempts[1].completed, true);
  assert.equal(t.sessionIds.length, 2, 'a fresh retry starts a new session');
  assert.ok(t.steps.every((s) => s.kind !== 'agent' || s.model !== '<synthetic>' || s.toolCalls.length === 0));
});

test('claude-code: a killed (stalled) attempt has no result: not completed, not transient, error says why', () => {
  const a = out(fx('claude-2.1.126-stalled.jsonl'), 1, '', null);
  assert.equal(claudeCompleted(a), false);
  assert.equal(claudeTransient(a), null);
  const t = claudeTrajectory([a], meta);
  assert.equal(t.totals.toolCalls, 1);
  assert.ok(t.totals.inputTokens > 0, 'tokens from the assistant messages when no result came');
  assert.match(t.attempts[0].error!, /without a result event/);
});

test('claude-code: the agent writing about rate limits is not a transient failure; stderr and API errors are', () => {
  const prose = JSON.stringify({ type: 'assistant', message: { id: 'm1', model: 'claude', content: [{ type: 'text', text: 'I will add a rate limit and handle 429 responses' }] } });
  const failed = JSON.stringify({ type: 'result', subtype: 'success', is_error: true, result: 'Prompt is too long' });
  assert.equal(claudeTransient(out(`${prose}\n${failed}\n`, 1, '', 1)), null);
  assert.match(claudeTransient(out(`${prose}\n`, 1, 'Error: stream disconnected before completion', 1))!, /stream disconnected/);
  const apiErr = JSON.stringify({ type: 'result', subtype: 'success', is_error: true, api_error_status: 429, result: 'API Error: Request rejected' });
  assert.match(claudeTransient(out(apiErr, 1, '', 1))!, /429/);
});

test('codex: a successful run completes, has its thread id, and normalizes commands, outputs and usage', () => {
  const a = out(fx('codex-0.128-success.jsonl'));
  assert.equal(codexCompleted(a), true);
  assert.equal(codexTransient(a), null);
  assert.match(codexThreadId(a.stdout)!, /^[0-9a-f-]{36}$/);
  const t = codexTrajectory([a], { ...meta, model: 'fake-gpt' });
  assert.equal(t.totals.toolCalls, 2);
  const calls = t.steps.flatMap((s) => (s.kind === 'agent' ? s.toolCalls : []));
  assert.match(calls[0].command!, /^\/bin\/bash -lc /);
  assert.equal(calls[0].exitCode, 0);
  assert.match(calls[0].output!, /server started/);
  assert.equal(t.totals.inputTokens, 603, 'OpenAI input_tokens already include the cached ones');
  assert.equal(t.totals.cachedInputTokens, 150);
  assert.equal(t.totals.reasoningTokens, 15);
  assert.equal(t.totals.costUsd, null, 'codex reports no cost');
  assert.equal(t.finalText, 'Done: the server is running on port 8080.');
});

test('codex: overloaded (turn.failed "at capacity") is transient; item.type "error" is only a warning', () => {
  const a = out(fx('codex-0.128-overloaded.jsonl'), 1, '', 1);
  assert.equal(codexCompleted(a), false);
  assert.match(codexTransient(a)!, /capacity/);
  const warnOnly = [
    JSON.stringify({ type: 'thread.started', thread_id: 't1' }),
    JSON.stringify({ type: 'item.completed', item: { id: 'i0', type: 'error', message: 'Model metadata for `gpt-fake` not found' } }),
    JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 } }),
  ].join('\n');
  assert.equal(codexCompleted(out(warnOnly)), true);
  const t = codexTrajectory([out(warnOnly)], meta);
  assert.equal(t.attempts[0].completed, true);
  assert.ok(t.steps.some((s) => s.kind === 'system' && /warning: Model metadata/.test(s.text)));
  // 0.171's endless "Reconnecting..." and 0.128's fail-fast message are both transient
  assert.match(codexTransient(out(JSON.stringify({ type: 'error', message: 'Reconnecting... 2/5' }), 1, '', 1))!, /reconnecting/i);
  assert.match(codexTransient(out(JSON.stringify({ type: 'turn.failed', error: { message: 'stream disconnected before completion: x' } }), 1, '', 1))!, /stream disconnected/);
  assert.equal(codexTransient(out(JSON.stringify({ type: 'turn.failed', error: { message: 'context window exceeded' } }), 1, '', 1)), null);
});

test('transient markers: the paper\'s list, case-insensitive, with an excerpt', () => {
  for (const s of ['Overloaded', 'We\'re currently experiencing high demand', 'rate_limit_error', 'Too Many Requests', 'HTTP 503', 'status 529', 'Reconnecting...', 'stream disconnected', 'connection reset by peer', 'websocket closed', 'upstream timeout', 'model is busy', 'Internal server error', 'Service Unavailable']) {
    assert.ok(transientIn([s]), s);
  }
  for (const s of ['Prompt is too long', 'invalid x-api-key', 'took 5290 ms', '']) assert.equal(transientIn([s]), null, s);
});

test('ATIF export: schema_version, sequential step ids from 1, user prompt first, tool calls with observations, final metrics', () => {
  const t = claudeTrajectory([out(fx('claude-2.1.126-success.jsonl'))], { ...meta, agentVersion: '2.1.126' });
  const atif = toAtif(t, { saasbench: { rollout: 'r' } });
  assert.equal(atif.schema_version, 'ATIF-v1.4');
  assert.equal(atif.session_id, t.sessionIds[0]);
  assert.deepEqual(atif.agent, { name: 'claude-code', version: '2.1.126', model_name: 'fake-claude' });
  atif.steps.forEach((s, i) => assert.equal(s.step_id, i + 1));
  assert.deepEqual(atif.steps[0], { step_id: 1, source: 'user', message: 'build it', extra: { attempt: 1 } });
  const withTool = atif.steps.filter((s) => s.tool_calls?.length);
  assert.equal(withTool.length, 2);
  for (const s of withTool) {
    assert.equal(s.source, 'agent');
    const [c] = s.tool_calls!;
    assert.equal(typeof c.tool_call_id, 'string');
    assert.equal(c.function_name, 'Bash');
    assert.equal(typeof c.arguments.command, 'string');
    assert.equal(s.observation!.results[0].source_call_id, c.tool_call_id);
  }
  for (const s of atif.steps) {
    if (s.source !== 'agent') assert.ok(!s.tool_calls && !s.metrics && !s.model_name, 'agent-only fields only on agent steps');
    assert.equal(typeof s.message, 'string');
  }
  assert.equal(atif.final_metrics!.total_prompt_tokens, t.totals.inputTokens);
  assert.equal(atif.final_metrics!.total_cached_tokens, 30);
  assert.equal(atif.final_metrics!.total_steps, atif.steps.length);
  assert.ok(atif.final_metrics!.total_cost_usd! > 0);
  assert.deepEqual(atif.extra!.saasbench, { rollout: 'r' });
});
