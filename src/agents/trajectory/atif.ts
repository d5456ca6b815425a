import type { Trajectory } from './types';

/**
 * Export to Harbor's Agent Trajectory Interchange Format (ATIF, RFC 0001, v1.4): a root object with
 * schema_version, session_id, agent {name, version, model_name}, steps[] (step_id from 1, source
 * system|user|agent, message, tool_calls[{tool_call_id, function_name, arguments}], observation
 * {results[{source_call_id, content}]}, metrics {prompt_tokens, completion_tokens, cached_tokens,
 * cost_usd}) and final_metrics. prompt_tokens includes cached tokens, as the RFC defines it.
 * Fields ATIF has no place for (attempt numbers, exit codes) go into `extra`.
 */
export const ATIF_VERSION = 'ATIF-v1.4';

export interface AtifTrajectory {
  schema_version: string;
  session_id: string;
  agent: { name: string; version: string; model_name?: string; extra?: Record<string, unknown> };
  steps: AtifStep[];
  notes?: string;
  final_metrics?: {
    total_prompt_tokens?: number;
    total_completion_tokens?: number;
    total_cached_tokens?: number;
    total_cost_usd?: number;
    total_steps?: number;
    extra?: Record<string, unknown>;
  };
  extra?: Record<string, unknown>;
}

export interface AtifStep {
  step_id: number;
  timestamp?: string;
  source: 'system' | 'user' | 'agent';
  model_name?: string;
  message: string;
  reasoning_content?: string;
  tool_calls?: { tool_call_id: string; function_name: string; arguments: Record<string, unknown> }[];
  observation?: { results: { source_call_id?: string; content?: string }[] };
  metrics?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number; cost_usd?: number; extra?: Record<string, unknown> };
  extra?: Record<string, unknown>;
}

export function toAtif(t: Trajectory, extra: Record<string, unknown> = {}): AtifTrajectory {
  const steps: AtifStep[] = [];
  if (t.prompt) steps.push({ step_id: 1, source: 'user', message: t.prompt, extra: { attempt: 1 } });
  for (const s of t.steps) {
    const base = { step_id: steps.length + 1, ...(s.timestamp ? { timestamp: s.timestamp } : {}) };
    if (s.kind === 'user') steps.push({ ...base, source: 'user', message: s.text, extra: { attempt: s.attempt } });
    else if (s.kind === 'system') steps.push({ ...base, source: 'system', message: s.text, extra: { attempt: s.attempt } });
    else {
      const step: AtifStep = { ...base, source: 'agent', message: s.text, extra: { attempt: s.attempt } };
      if (s.model) step.model_name = s.model;
      if (s.reasoning) step.reasoning_content = s.reasoning;
      if (s.toolCalls.length) {
        step.tool_calls = s.toolCalls.map((c) => ({ tool_call_id: c.id, function_name: c.name, arguments: c.input }));
        const results = s.toolCalls.filter((c) => c.output !== undefined).map((c) => ({ source_call_id: c.id, content: c.output }));
        if (results.length) step.observation = { results };
        const exits = Object.fromEntries(s.toolCalls.filter((c) => c.exitCode !== undefined || c.isError).map((c) => [c.id, { exit_code: c.exitCode ?? null, is_error: c.isError ?? false }]));
        if (Object.keys(exits).length) step.extra = { ...step.extra, tool_results: exits };
      }
      if (s.usage) {
        const cached = s.usage.cachedInputTokens ?? 0;
        step.metrics = { prompt_tokens: s.usage.inputTokens, completion_tokens: s.usage.outputTokens, ...(cached ? { cached_tokens: cached } : {}), ...(s.usage.costUsd !== undefined ? { cost_usd: s.usage.costUsd } : {}) };
      }
      steps.push(step);
    }
  }
  const tot = t.totals;
  return {
    schema_version: ATIF_VERSION,
    session_id: t.sessionIds[0] ?? 'unknown',
    agent: { name: t.agent, version: t.agentVersion ?? 'unknown', model_name: t.model },
    steps,
    notes: 'Exported by saasbench from the agent\'s own event stream. Attempts after a transient retry or a resume are appended in order; step.extra.attempt tells them apart.',
    final_metrics: {
      total_prompt_tokens: tot.inputTokens,
      total_completion_tokens: tot.outputTokens,
      total_cached_tokens: tot.cachedInputTokens,
      ...(tot.costUsd !== null ? { total_cost_usd: tot.costUsd } : {}),
      total_steps: steps.length,
      extra: { turns: tot.turns, tool_calls: tot.toolCalls, reasoning_tokens: tot.reasoningTokens, cache_write_tokens: tot.cacheWriteTokens },
    },
    extra: { session_ids: t.sessionIds, attempts: t.attempts, ...extra },
  };
}
