/**
 * Claude Code `--output-format stream-json --verbose` events → the normalized trajectory. Only the
 * fields 2.1.126 and 2.1.332 share are relied on (type/subtype, session_id, message.content[],
 * tool_use_result, and in `result`: is_error, result, num_turns, usage, total_cost_usd); success is
 * decided from `is_error`, never `subtype` (both versions report API failures as
 * subtype "success" with is_error true).
 */
import { transientIn } from '../transient';
import { asNumber, asRecord, asString, countSteps, emptyTotals, jsonLines, type ToolCall, type Trajectory, type TrajectoryStep } from '../trajectory/types';
import type { AttemptOutput } from '../types';

type Ev = Record<string, unknown>;

export function resultEvents(stdout: string): Ev[] {
  return jsonLines(stdout).filter((e) => e.type === 'result');
}

/** A `result` event with is_error false: the agent declared it was done. */
export function claudeCompleted(out: AttemptOutput): boolean {
  return resultEvents(out.stdout).some((e) => e.is_error === false);
}

/** The session id of the attempt (init event first, else any event carrying one). */
export function claudeSessionId(stdout: string): string | null {
  let found: string | null = null;
  for (const e of jsonLines(stdout)) {
    const s = asString(e.session_id);
    if (!s) continue;
    if (e.type === 'system' && e.subtype === 'init') return s;
    found ??= s;
  }
  return found;
}

/**
 * Why the attempt failed transiently, or null. Scanned: stderr, the text of error `result`s and
 * their api_error_status, synthetic assistant messages (Claude Code's API-error notices, model
 * "<synthetic>"), and non-init system events (API retry notices). Not scanned: the agent's own prose.
 */
export function claudeTransient(out: AttemptOutput): string | null {
  if (claudeCompleted(out)) return null;
  const texts: string[] = [out.stderr];
  for (const e of jsonLines(out.stdout)) {
    if (e.type === 'result' && e.is_error === true) {
      texts.push(asString(e.result) ?? '');
      if (typeof e.api_error_status === 'number') texts.push(`HTTP ${e.api_error_status}`);
    } else if (e.type === 'assistant') {
      const msg = asRecord(e.message);
      if (msg.model === '<synthetic>') texts.push(textOf(msg.content));
    } else if (e.type === 'system' && e.subtype !== 'init') {
      texts.push(JSON.stringify(e));
    }
  }
  return transientIn(texts);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => {
      const r = asRecord(b);
      if (r.type === 'text') return asString(r.text) ?? '';
      if (r.type === 'tool_result') return textOf(r.content);
      return '';
    })
    .filter(Boolean)
    .join('\n');
}

const FILE_KEYS = ['file_path', 'notebook_path', 'path'];

function toolCall(b: Record<string, unknown>): ToolCall {
  const input = asRecord(b.input);
  const call: ToolCall = { id: asString(b.id) ?? '', name: asString(b.name) ?? 'unknown', input };
  if (typeof input.command === 'string') call.command = input.command;
  for (const k of FILE_KEYS) if (typeof input[k] === 'string') call.path = input[k] as string;
  return call;
}

export function claudeTrajectory(attempts: AttemptOutput[], meta: { model: string; prompt: string; agentVersion: string | null }): Trajectory {
  const t: Trajectory = { schema: 'saasbench.trajectory/v1', agent: 'claude-code', agentVersion: meta.agentVersion, model: meta.model, sessionIds: [], prompt: meta.prompt, steps: [], totals: emptyTotals(), attempts: [], finalText: null };
  for (const a of attempts) {
    const events = jsonLines(a.stdout);
    const calls = new Map<string, ToolCall>();
    const byMessage = new Map<string, Extract<TrajectoryStep, { kind: 'agent' }>>();
    const msgUsage = new Map<string, { i: number; o: number; c: number; w: number }>();
    let result: Ev | undefined;
    let error: string | null = null;
    for (const e of events) {
      const sid = asString(e.session_id);
      if (sid && !t.sessionIds.includes(sid)) t.sessionIds.push(sid);
      if (e.type === 'system') {
        if (e.subtype === 'init') {
          t.agentVersion ??= asString(e.claude_code_version) ?? null;
        } else t.steps.push({ kind: 'system', attempt: a.attempt, text: `${asString(e.subtype) ?? 'system'}: ${JSON.stringify(e).slice(0, 2000)}` });
      } else if (e.type === 'assistant') {
        const msg = asRecord(e.message);
        const id = asString(msg.id) ?? `anon-${t.steps.length}`;
        let step = byMessage.get(id);
        if (!step) {
          step = { kind: 'agent', attempt: a.attempt, model: asString(msg.model), text: '', toolCalls: [], ...(asString(e.timestamp) ? { timestamp: asString(e.timestamp) } : {}) };
          byMessage.set(id, step);
          t.steps.push(step);
        }
        for (const b of Array.isArray(msg.content) ? msg.content : []) {
          const r = asRecord(b);
          if (r.type === 'text') step.text = step.text ? `${step.text}\n${asString(r.text) ?? ''}` : asString(r.text) ?? '';
          else if (r.type === 'thinking') step.reasoning = (step.reasoning ? step.reasoning + '\n' : '') + (asString(r.thinking) ?? '');
          else if (r.type === 'tool_use') {
            const c = toolCall(r);
            step.toolCalls.push(c);
            calls.set(c.id, c);
          }
        }
        const u = asRecord(msg.usage);
        if (msg.model !== '<synthetic>' && Object.keys(u).length) {
          const usage = { i: asNumber(u.input_tokens), o: asNumber(u.output_tokens), c: asNumber(u.cache_read_input_tokens), w: asNumber(u.cache_creation_input_tokens) };
          msgUsage.set(id, usage);
          step.usage = { inputTokens: usage.i + usage.c + usage.w, outputTokens: usage.o, cachedInputTokens: usage.c };
        }
      } else if (e.type === 'user') {
        const msg = asRecord(e.message);
        const content = msg.content;
        if (typeof content === 'string') {
          t.steps.push({ kind: 'user', attempt: a.attempt, text: content });
          continue;
        }
        const extra = asRecord(e.tool_use_result);
        for (const b of Array.isArray(content) ? content : []) {
          const r = asRecord(b);
          if (r.type === 'tool_result') {
            const c = calls.get(asString(r.tool_use_id) ?? '');
            if (!c) continue;
            c.output = textOf(r.content);
            c.isError = r.is_error === true;
            if (typeof extra.stdout === 'string' && !c.output) c.output = `${extra.stdout}${extra.stderr ? `\n${String(extra.stderr)}` : ''}`;
          } else if (r.type === 'text') t.steps.push({ kind: 'user', attempt: a.attempt, text: asString(r.text) ?? '' });
        }
      } else if (e.type === 'result') {
        result = e;
        if (e.is_error === true) error = asString(e.result) ?? 'error result';
        else t.finalText = asString(e.result) ?? t.finalText;
      }
    }
    // tokens and cost: the result event's totals for the process run when it ended cleanly,
    // else what the assistant messages reported (a killed attempt has no result)
    const tot = t.totals;
    if (result && Object.keys(asRecord(result.usage)).length) {
      const u = asRecord(result.usage);
      const i = asNumber(u.input_tokens), c = asNumber(u.cache_read_input_tokens), w = asNumber(u.cache_creation_input_tokens);
      tot.inputTokens += i + c + w;
      tot.cachedInputTokens += c;
      tot.cacheWriteTokens += w;
      tot.outputTokens += asNumber(u.output_tokens);
    } else {
      for (const u of msgUsage.values()) {
        tot.inputTokens += u.i + u.c + u.w;
        tot.cachedInputTokens += u.c;
        tot.cacheWriteTokens += u.w;
        tot.outputTokens += u.o;
      }
    }
    if (result && typeof result.total_cost_usd === 'number') tot.costUsd = (tot.costUsd ?? 0) + result.total_cost_usd;
    if (result && typeof result.duration_ms === 'number') tot.agentReportedMs = (tot.agentReportedMs ?? 0) + result.duration_ms;
    if (!result) error = a.exitCode === null ? 'ended without a result event (stopped)' : `exited with code ${a.exitCode} without a result event`;
    t.attempts.push({ attempt: a.attempt, completed: result?.is_error === false, error, events: events.length });
  }
  return countSteps(t);
}
