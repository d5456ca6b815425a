/**
 * OpenHands' own trajectory (save_trajectory_path: a JSON list of serialized events) → the normalized
 * trajectory. Actions (`action`: run, run_ipython, read, write, edit, message, think, finish, …) from
 * source "agent" are tool calls; observations point at their action with `cause`. Token usage and
 * cost are cumulative in `llm_metrics` (the last one wins per attempt).
 */
import { asNumber, asRecord, asString, countSteps, emptyTotals, type ToolCall, type Trajectory } from '../trajectory/types';
import type { AttemptOutput } from '../types';

export type OhEvent = Record<string, unknown>;

/** The JSON list the launch script printed between the markers, or null. */
export function trajectoryFromStdout(stdout: string, begin: string, end: string): OhEvent[] | null {
  const i = stdout.lastIndexOf(begin);
  if (i < 0) return null;
  const j = stdout.indexOf(end, i);
  const body = stdout.slice(i + begin.length, j < 0 ? undefined : j).trim();
  if (!body) return null;
  try {
    const v = JSON.parse(body) as unknown;
    return Array.isArray(v) ? (v as OhEvent[]) : null;
  } catch {
    return null;
  }
}

const PATH_ACTIONS = new Set(['read', 'write', 'edit']);

export function openhandsTrajectory(attempts: { attempt: AttemptOutput; events: OhEvent[] | null }[], meta: { model: string; prompt: string; agentVersion: string | null }): Trajectory {
  const t: Trajectory = { schema: 'saasbench.trajectory/v1', agent: 'openhands', agentVersion: meta.agentVersion, model: meta.model, sessionIds: [], prompt: meta.prompt, steps: [], totals: emptyTotals(), attempts: [], finalText: null };
  for (const { attempt: a, events } of attempts) {
    const calls = new Map<string, ToolCall>();
    let metrics: Record<string, unknown> | undefined;
    let finished = false;
    let error: string | null = null;
    // llm_metrics are cumulative per attempt: the step an event with metrics pushed gets the growth
    // since the previous metrics as its own usage (settled at the next event, as the body may `continue`)
    let prev = { i: 0, o: 0, c: 0, usd: 0 };
    let pending: { at: number; lm: Record<string, unknown> } | null = null;
    const settle = () => {
      const step = pending ? t.steps[pending.at] : undefined;
      if (pending && step?.kind === 'agent') {
        const u = asRecord(pending.lm.accumulated_token_usage);
        const now = { i: asNumber(u.prompt_tokens), o: asNumber(u.completion_tokens), c: asNumber(u.cache_read_tokens), usd: asNumber(pending.lm.accumulated_cost) };
        if (now.i > prev.i || now.o > prev.o) {
          step.usage = { inputTokens: Math.max(0, now.i - prev.i), outputTokens: Math.max(0, now.o - prev.o), cachedInputTokens: Math.max(0, now.c - prev.c), ...(typeof pending.lm.accumulated_cost === 'number' ? { costUsd: Math.max(0, now.usd - prev.usd) } : {}) };
        }
        prev = now;
      }
      pending = null;
    };
    for (const e of events ?? []) {
      settle();
      const lm = asRecord(e.llm_metrics);
      if (Object.keys(lm).length) {
        metrics = lm;
        pending = { at: t.steps.length, lm };
      }
      const ts = asString(e.timestamp);
      if (typeof e.action === 'string') {
        const args = asRecord(e.args);
        if (e.source === 'user') {
          if (e.action === 'message') t.steps.push({ kind: 'user', attempt: a.attempt, text: asString(args.content) ?? '', ...(ts ? { timestamp: ts } : {}) });
          continue;
        }
        if (e.source !== 'agent') continue;
        const thought = asString(args.thought) ?? '';
        if (e.action === 'message' || e.action === 'think') {
          t.steps.push({ kind: 'agent', attempt: a.attempt, text: asString(args.content) ?? thought, toolCalls: [], ...(ts ? { timestamp: ts } : {}) });
          continue;
        }
        if (e.action === 'finish') {
          finished = true;
          t.finalText = asString(args.final_thought) ?? asString(args.message) ?? asString(args.outputs && asRecord(args.outputs).content) ?? t.finalText;
        }
        if (e.action === 'system' || e.action === 'recall' || e.action === 'change_agent_state') continue;
        const meta2 = asRecord(e.tool_call_metadata);
        const id = asString(meta2.tool_call_id) ?? String(e.id ?? t.steps.length);
        const input = { ...args };
        delete input.thought;
        const call: ToolCall = { id, name: asString(meta2.function_name) ?? String(e.action), input };
        if (e.action === 'run' && typeof args.command === 'string') call.command = args.command;
        if (e.action === 'run_ipython' && typeof args.code === 'string') call.command = args.code;
        if (PATH_ACTIONS.has(String(e.action)) && typeof args.path === 'string') call.path = args.path;
        if (e.id !== undefined) calls.set(String(e.id), call);
        t.steps.push({ kind: 'agent', attempt: a.attempt, text: thought, toolCalls: [call], ...(ts ? { timestamp: ts } : {}) });
      } else if (typeof e.observation === 'string') {
        const extras = asRecord(e.extras);
        if (e.observation === 'agent_state_changed') {
          const st = asString(extras.agent_state);
          if (st === 'finished') finished = true;
          if (st === 'error') error = asString(extras.reason) ?? 'agent state error';
          continue;
        }
        if (e.observation === 'error') error = asString(e.content) ?? 'error';
        const c = e.cause !== undefined ? calls.get(String(e.cause)) : undefined;
        if (!c) continue;
        c.output = asString(e.content) ?? '';
        const md = asRecord(extras.metadata);
        if (typeof md.exit_code === 'number') {
          c.exitCode = md.exit_code;
          c.isError = md.exit_code !== 0;
        }
        if (e.observation === 'error') c.isError = true;
      }
    }
    settle();
    if (metrics) {
      const u = asRecord(metrics.accumulated_token_usage);
      t.totals.inputTokens += asNumber(u.prompt_tokens);
      t.totals.outputTokens += asNumber(u.completion_tokens);
      t.totals.cachedInputTokens += asNumber(u.cache_read_tokens);
      t.totals.cacheWriteTokens += asNumber(u.cache_write_tokens);
      if (typeof metrics.accumulated_cost === 'number') t.totals.costUsd = (t.totals.costUsd ?? 0) + metrics.accumulated_cost;
    }
    if (!events) error ??= a.exitCode === null ? 'stopped before OpenHands wrote its trajectory' : `exited with code ${a.exitCode} without a trajectory`;
    t.attempts.push({ attempt: a.attempt, completed: finished, error: finished ? null : error ?? 'did not finish', events: events?.length ?? 0 });
  }
  return countSteps(t);
}
