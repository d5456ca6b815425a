/**
 * Codex CLI `exec --json` events (0.128 and 0.171) → the normalized trajectory:
 * thread.started {thread_id} · turn.started · item.started / item.completed with item.type
 * command_execution {command, aggregated_output, exit_code}, agent_message {text}, reasoning {text},
 * file_change {changes}, web_search {query}, error {message} (a warning, not a failure) ·
 * turn.completed {usage} · turn.failed {error.message} · error {message}.
 * `turns` counts agent steps (Codex does not report model round trips).
 */
import { transientIn } from '../transient';
import { asNumber, asRecord, asString, countSteps, emptyTotals, jsonLines, type Trajectory } from '../trajectory/types';
import type { AttemptOutput } from '../types';

export function codexCompleted(out: AttemptOutput): boolean {
  return jsonLines(out.stdout).some((e) => e.type === 'turn.completed');
}

export function codexThreadId(stdout: string): string | null {
  for (const e of jsonLines(stdout)) if (e.type === 'thread.started' && typeof e.thread_id === 'string') return e.thread_id;
  return null;
}

/** error / turn.failed messages, and stderr (where codex reports failures outside the JSON stream). */
export function codexTransient(out: AttemptOutput): string | null {
  if (codexCompleted(out)) return null;
  const texts: string[] = [];
  for (const e of jsonLines(out.stdout)) {
    if (e.type === 'error') texts.push(asString(e.message) ?? '');
    else if (e.type === 'turn.failed') texts.push(asString(asRecord(e.error).message) ?? '');
  }
  texts.push(out.stderr);
  return transientIn(texts);
}

export function codexTrajectory(attempts: AttemptOutput[], meta: { model: string; prompt: string; agentVersion: string | null }): Trajectory {
  const t: Trajectory = { schema: 'saasbench.trajectory/v1', agent: 'codex', agentVersion: meta.agentVersion, model: meta.model, sessionIds: [], prompt: meta.prompt, steps: [], totals: emptyTotals(), attempts: [], finalText: null };
  for (const a of attempts) {
    const events = jsonLines(a.stdout);
    let completed = false;
    let error: string | null = null;
    let reasoning: string | undefined;
    for (const e of events) {
      if (e.type === 'thread.started') {
        const id = asString(e.thread_id);
        if (id && !t.sessionIds.includes(id)) t.sessionIds.push(id);
      } else if (e.type === 'item.completed') {
        const item = asRecord(e.item);
        const id = asString(item.id) ?? `item-${t.steps.length}`;
        switch (item.type) {
          case 'reasoning':
            reasoning = (reasoning ? `${reasoning}\n` : '') + (asString(item.text) ?? '');
            break;
          case 'agent_message': {
            const text = asString(item.text) ?? '';
            t.steps.push({ kind: 'agent', attempt: a.attempt, model: meta.model, text, toolCalls: [], ...(reasoning ? { reasoning } : {}) });
            reasoning = undefined;
            t.finalText = text;
            break;
          }
          case 'command_execution': {
            const command = asString(item.command) ?? '';
            const exit = item.exit_code;
            t.steps.push({
              kind: 'agent',
              attempt: a.attempt,
              model: meta.model,
              text: '',
              ...(reasoning ? { reasoning } : {}),
              toolCalls: [{ id, name: 'exec_command', input: { cmd: command }, command, output: asString(item.aggregated_output) ?? '', exitCode: typeof exit === 'number' ? exit : null, isError: typeof exit === 'number' ? exit !== 0 : item.status === 'failed' }],
            });
            reasoning = undefined;
            break;
          }
          case 'file_change': {
            const changes = Array.isArray(item.changes) ? item.changes.map(asRecord) : [];
            t.steps.push({
              kind: 'agent',
              attempt: a.attempt,
              model: meta.model,
              text: '',
              toolCalls: changes.map((c, i) => ({ id: `${id}-${i}`, name: 'apply_patch', input: c, path: asString(c.path) })),
            });
            break;
          }
          case 'web_search':
          case 'mcp_tool_call': {
            const input = { ...item };
            delete input.id;
            t.steps.push({ kind: 'agent', attempt: a.attempt, model: meta.model, text: '', toolCalls: [{ id, name: String(item.type), input }] });
            break;
          }
          case 'error':
            t.steps.push({ kind: 'system', attempt: a.attempt, text: `warning: ${asString(item.message) ?? ''}` });
            break;
          default:
            break;
        }
      } else if (e.type === 'turn.completed') {
        completed = true;
        const u = asRecord(e.usage);
        t.totals.inputTokens += asNumber(u.input_tokens);
        t.totals.cachedInputTokens += asNumber(u.cached_input_tokens);
        t.totals.cacheWriteTokens += asNumber(u.cache_write_input_tokens);
        t.totals.outputTokens += asNumber(u.output_tokens);
        t.totals.reasoningTokens += asNumber(u.reasoning_output_tokens);
      } else if (e.type === 'turn.failed') {
        error = asString(asRecord(e.error).message) ?? 'turn failed';
        t.steps.push({ kind: 'system', attempt: a.attempt, text: `turn.failed: ${error}` });
      } else if (e.type === 'error') {
        error ??= asString(e.message) ?? 'error';
        t.steps.push({ kind: 'system', attempt: a.attempt, text: `error: ${asString(e.message) ?? ''}` });
      }
    }
    if (!completed && !error) error = a.exitCode === null ? 'ended without turn.completed (stopped)' : `exited with code ${a.exitCode} without turn.completed`;
    t.attempts.push({ attempt: a.attempt, completed, error: completed ? null : error, events: events.length });
  }
  return countSteps(t);
}
