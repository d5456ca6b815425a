import type { TrajectorySummary } from '../../model/rollout';

export type { TrajectorySummary };

/**
 * One normalized record per rollout, whatever the agent framework: what it did (turns, tool calls
 * with their commands), what it cost (tokens, USD) and how it ended. Written to `trajectory.json`;
 * a summary of it travels in AgentRunSummary into report.json; `atif.ts` exports it as ATIF.
 */
export interface Trajectory {
  schema: 'saasbench.trajectory/v1';
  agent: string;
  agentVersion: string | null;
  model: string;
  /** session / thread ids in the order seen (a resume keeps the id; a fresh retry starts a new one) */
  sessionIds: string[];
  /** the prompt given at the first attempt */
  prompt: string;
  steps: TrajectoryStep[];
  totals: TrajectoryTotals;
  /** per attempt: how it ended according to the agent's own stream */
  attempts: { attempt: number; completed: boolean; error: string | null; events: number }[];
  finalText: string | null;
}

export interface TrajectoryTotals {
  /** model responses (assistant messages / turns) */
  turns: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** as reported by the agent (Claude Code's total_cost_usd); null when the agent reports none */
  costUsd: number | null;
  /** agent-reported wall time of its runs, when it reports one (ms) */
  agentReportedMs: number | null;
}

export type TrajectoryStep =
  | { kind: 'user'; attempt: number; text: string; timestamp?: string }
  | {
      kind: 'agent';
      attempt: number;
      timestamp?: string;
      model?: string;
      text: string;
      reasoning?: string;
      toolCalls: ToolCall[];
      /** this turn's own usage, when the agent reports it per turn; costUsd when it reports cost per turn */
      usage?: { inputTokens: number; outputTokens: number; cachedInputTokens?: number; costUsd?: number };
    }
  | { kind: 'system'; attempt: number; text: string; timestamp?: string };

export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** the shell command, for tools that run one (Bash, exec_command, CmdRunAction …) */
  command?: string;
  /** file path, for file tools (Read, Write, Edit …) */
  path?: string;
  output?: string;
  exitCode?: number | null;
  isError?: boolean;
}

export function emptyTotals(): TrajectoryTotals {
  return { turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: null, agentReportedMs: null };
}

export function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    const l = line.trim();
    if (!l.startsWith('{')) continue;
    try {
      const v = JSON.parse(l) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // a line cut by a kill, or not JSON: skip
    }
  }
  return out;
}

export const asRecord = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
export const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const asNumber = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function summarize(t: Trajectory, files: string[]): TrajectorySummary {
  const calls = t.steps.flatMap((s) => (s.kind === 'agent' ? s.toolCalls : []));
  return {
    turns: t.totals.turns,
    toolCalls: t.totals.toolCalls,
    commands: calls.filter((c) => c.command !== undefined).length,
    inputTokens: t.totals.inputTokens,
    outputTokens: t.totals.outputTokens,
    cachedInputTokens: t.totals.cachedInputTokens,
    costUsd: t.totals.costUsd,
    sessionIds: t.sessionIds,
    agentVersion: t.agentVersion,
    files,
  };
}

/** Fill totals.turns / toolCalls from the steps (parsers fill tokens and cost themselves). */
export function countSteps(t: Trajectory): Trajectory {
  const agentSteps = t.steps.filter((s) => s.kind === 'agent');
  t.totals.turns = agentSteps.length;
  t.totals.toolCalls = agentSteps.reduce((n, s) => n + (s.kind === 'agent' ? s.toolCalls.length : 0), 0);
  return t;
}
