import { z } from 'zod';
import { RolloutInputSchema, rolloutKeyOf, rolloutWorkflowId, type RolloutResult } from './rollout';
import type { TaxonomyLabel } from './scores';
import type { BenchmarkReport } from './benchmark';
import { formatDuration } from './duration';
import { fmtUsd } from './cost';

/**
 * What a sweep is, as it travels through Temporal: the input schema (shared by `saasbench sweep`,
 * `temporal workflow start --input-file` and the workflow itself), the plan, the per-rollout
 * summaries and the result. Pure types and zod only: imported by workflow code.
 */

const Name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:@+-]*$/, 'letters, digits and _ . : @ + - only (must start with a letter or digit)');

const rolloutShape = RolloutInputSchema.shape;

export const TaskEntrySchema = z.union([
  z.string().min(1, 'a task path'),
  z.object({ path: z.string().min(1, 'a task path') }).strict(),
]);

export const AgentEntrySchema = z.union([
  Name,
  z.object({ name: Name, models: z.array(Name).min(1).optional() }).strict(),
]);

export const TaxonomyThresholdsSchema = z
  .object({
    weak: z.number().min(0).max(100).default(50),
    strong: z.number().min(0).max(100).default(80),
  })
  .strict()
  .refine((t) => t.weak <= t.strong, { message: 'weak must not exceed strong', path: ['weak'] });

export const SweepInputSchema = z
  .object({
    /** the sweep's name: its workflow id is `sweep/<name>`, its rollouts' ids `rollout/<name>/…` */
    name: Name,
    description: z.string().optional(),
    /**
     * Task folders. Relative paths are resolved against the worker's repo root (the folder with
     * saasbench's package.json), or SAASBENCH_TASKS_BASE when set — the same on every host.
     */
    tasks: z.array(TaskEntrySchema).min(1, 'at least one task'),
    /** agent names, or {name, models} to give an agent its own models */
    agents: z.array(AgentEntrySchema).min(1, 'at least one agent'),
    /** models for agents that do not list their own */
    models: z.array(Name).min(1).default(['none']),
    repeats: z.number().int().min(1).max(100).default(1),
    /** rollouts running at once */
    concurrency: z.number().int().min(1).max(256).default(4),
    budgets: z
      .object({
        agentSeconds: z.number().positive().default(10_800),
        idleSeconds: z.number().positive().default(1_800),
        heartbeatSeconds: rolloutShape.heartbeatSeconds,
      })
      .strict()
      .default({ agentSeconds: 10_800, idleSeconds: 1_800, heartbeatSeconds: 30 }),
    agentRetry: rolloutShape.agentRetry,
    /** seconds between rollout snapshots in the agent phase (0: only the final one); host-loss detection */
    snapshotSeconds: rolloutShape.snapshotSeconds,
    hostLossSeconds: rolloutShape.hostLossSeconds,
    /** image references rewritten in every rollout (from → to, like `--image-map`; docs/operations.md) */
    imageMap: rolloutShape.imageMap,
    /** judge settings and DAG-node parallelism of every rollout */
    evaluation: rolloutShape.evaluation,
    taxonomy: TaxonomyThresholdsSchema.default({ weak: 50, strong: 80 }),
    /** re-submitting also re-runs rollouts that failed or timed out (cancelled/terminated ones always re-run) */
    rerunFailed: z.boolean().default(false),
    /** continue-as-new after this many rollouts finished in one run (history stays small) */
    continueAsNewEvery: z.number().int().min(1).max(10_000).default(100),
    /**
     * USD: once the finished rollouts' metered cost (docs/gateway.md "Metering") reaches this, no
     * new rollout starts; the rest are recorded "not run: cost cap …" (running ones finish)
     */
    costCapUsd: z.number().positive().optional(),
    /** task queue of the rollouts (default: the sweep's own) */
    taskQueue: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    const dupes = <T>(xs: T[], key: (x: T) => string, path: string) => {
      const seen = new Set<string>();
      xs.forEach((x, i) => {
        const k = key(x);
        if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [path, i], message: `duplicate "${k}"` });
        seen.add(k);
      });
    };
    dupes(v.agents, (a) => (typeof a === 'string' ? a : a.name), 'agents');
    dupes(v.models, (m) => m, 'models');
    dupes(v.tasks, (t) => (typeof t === 'string' ? t : t.path), 'tasks');
  });
export type SweepInput = z.infer<typeof SweepInputSchema>;
export type SweepInputRaw = z.input<typeof SweepInputSchema>;

export function sweepWorkflowId(name: string): string {
  return `sweep/${name}`;
}

/** A task entry after the worker resolved and loaded it. */
export interface ResolvedTask {
  /** as written in the sweep input */
  path: string;
  /** absolute folder on the resolving worker (every host must have the same checkout path) */
  dir: string;
  id: string;
  hash: string;
  nodes: number;
  maxScore: number;
}

/** One planned rollout. */
export interface SweepItem {
  workflowId: string;
  rolloutKey: string;
  taskId: string;
  taskDir: string;
  agent: string;
  model: string;
  repeat: number;
}

export function agentModels(input: SweepInput): { agent: string; model: string }[] {
  return input.agents.flatMap((a) => {
    const name = typeof a === 'string' ? a : a.name;
    const models = (typeof a === 'string' ? undefined : a.models) ?? input.models;
    return models.map((model) => ({ agent: name, model }));
  });
}

/**
 * Every rollout of the sweep, in start order: repeat-major, so that the first rollouts to finish
 * cover every (task, agent, model) once before any repeat.
 */
export function planSweep(input: SweepInput, tasks: ResolvedTask[]): SweepItem[] {
  const out: SweepItem[] = [];
  const configs = agentModels(input);
  for (let repeat = 0; repeat < input.repeats; repeat++) {
    for (const t of tasks) {
      for (const { agent, model } of configs) {
        const ids = { sweep: input.name, taskId: t.id, agent, model, repeat };
        out.push({ workflowId: rolloutWorkflowId(ids), rolloutKey: rolloutKeyOf(ids), taskId: t.id, taskDir: t.dir, agent, model, repeat });
      }
    }
  }
  return out;
}

/** [score, maxScore]: compact, so thousands of summaries fit a continue-as-new payload. */
export type Frac = [number, number];

export interface RolloutScoreSummary {
  overall: Frac;
  nonLlm: Frac;
  judgeDroppedMaxScore: number;
  byBackbone: Record<string, Frac>;
  byCategory: Record<string, Frac>;
  byTrajectory: Record<string, Frac>;
  statusCounts: Record<string, number>;
}

export type FinalState = 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out';
export type RolloutState = 'pending' | 'running' | FinalState;
export const ROLLOUT_STATES: RolloutState[] = ['pending', 'running', 'completed', 'failed', 'cancelled', 'terminated', 'timed_out'];

/** What the sweep keeps of one finished rollout (the full result is in the rollout's run folder). */
export interface RolloutSummary extends Pick<RolloutResult, 'workflowId' | 'rolloutKey' | 'taskId' | 'agent' | 'model' | 'repeat'> {
  state: FinalState;
  /** 'this-sweep': run by this submission; 'earlier': found finished and reused, not run again */
  origin: 'this-sweep' | 'earlier';
  host?: string;
  runDir?: string;
  agentExit?: string;
  score?: RolloutScoreSummary;
  taxonomy?: { label: TaxonomyLabel | null; reason: string };
  error?: string;
  /** the rollout never ran (misconfigured agent, bad input, missing image): why. Never scored, never averaged. */
  notRun?: string;
  /** evaluator access in the transcript: every aggregate is 0 */
  voided?: boolean;
  durationMs?: number;
  /** USD of the rollout's model calls as the gateway metered them (null: unknown, see costReason); absent for agents without a model */
  costUsd?: number | null;
  costReason?: string | null;
}

/** How a finished rollout is shown: `not run: <reason>`, `voided`, or its state. */
export function rolloutStateLabel(r: { state: RolloutState; notRun?: string; voided?: boolean }): string {
  if (r.notRun) return `not run: ${r.notRun}`;
  if (r.voided && r.state === 'completed') return 'completed (voided)';
  return r.state;
}

/** The lookup activity's answer for one rollout id. */
export type LookupAnswer =
  | { workflowId: string; state: 'absent' }
  | { workflowId: string; state: 'running' }
  | { workflowId: string; state: FinalState; summary: RolloutSummary };

export interface SweepRolloutProgress {
  workflowId: string;
  taskId: string;
  agent: string;
  model: string;
  repeat: number;
  state: RolloutState;
  origin?: RolloutSummary['origin'];
  /** started by an earlier run of this sweep (or an earlier submission) and still running: polled */
  adopted?: boolean;
  startedAt?: number;
  finishedAt?: number;
  scorePct?: number | null;
  taxonomy?: TaxonomyLabel | null;
  error?: string;
  notRun?: string;
  voided?: boolean;
}

export type StopMode = 'drain' | 'cancel';

export interface SweepProgress {
  name: string;
  workflowId: string;
  /** continue-as-new generation, 1 for the first run */
  run: number;
  startedAt: number;
  now: number;
  total: number;
  counts: Record<RolloutState, number>;
  reused: number;
  concurrency: number;
  stopping: StopMode | null;
  avgRolloutSeconds: number | null;
  etaSeconds: number | null;
  /** metered cost of the finished rollouts so far (null: none has a metered cost yet); the cap when set */
  costUsd?: number | null;
  costCapUsd?: number;
  rollouts: SweepRolloutProgress[];
  /** (agent, model) → benchmark score so far */
  leaders: { agent: string; model: string; score: number | null; tasks: number; declaredTasks?: number }[];
}

export interface StopRequest {
  /** also cancel the running rollouts (they tear down); default: let them finish */
  cancelRunning?: boolean;
}

export interface SweepResult {
  name: string;
  workflowId: string;
  startedAt: number;
  finishedAt: number;
  runs: number;
  stopped: StopMode | null;
  counts: Record<RolloutState, number>;
  tasks: ResolvedTask[];
  rollouts: RolloutSummary[];
  benchmark: BenchmarkReport;
  /** where the report activity wrote the sweep's files (on the host that ran it) */
  reportDir: string | null;
  reportHost: string | null;
  input: SweepInput;
  /** present when the input set costCapUsd: the cap, what the finished rollouts cost, whether it stopped starts */
  costCap?: CostCapRecord;
}

export interface CostCapRecord {
  capUsd: number;
  /** metered cost of the finished rollouts (those of unknown cost count 0) */
  spentUsd: number;
  reached: boolean;
  /** rollouts recorded "not run: cost cap …" */
  notStarted: number;
}

/** The not-run reason of a rollout the cost cap kept from starting. */
export function costCapReason(capUsd: number, spentUsd: number): string {
  return `cost cap ${fmtUsd(capUsd)} reached after ${fmtUsd(spentUsd)}`;
}

/** What one run hands to the next through continue-as-new. */
export interface SweepCarry {
  run: number;
  startedAt: number;
  tasks: ResolvedTask[];
  done: RolloutSummary[];
  /** rollouts still running when the run continued as new: the next run polls them */
  inflight: { workflowId: string; startedAt: number }[];
  stopping: StopMode | null;
}

export function emptyCounts(): Record<RolloutState, number> {
  return { pending: 0, running: 0, completed: 0, failed: 0, cancelled: 0, terminated: 0, timed_out: 0 };
}

/** Seconds shown as a duration (the project's one formatter, ./duration.ts). */
export function fmtSecs(s: number): string {
  return formatDuration(s * 1000);
}

/** " · cost $0.0123 of cap $5.00" (nothing until a finished rollout has a metered cost) */
export function costText(p: Pick<SweepProgress, 'costUsd' | 'costCapUsd'>): string {
  if (p.costUsd === null || p.costUsd === undefined) return '';
  return ` · cost ${fmtUsd(p.costUsd)}${p.costCapUsd !== undefined ? ` of cap ${fmtUsd(p.costCapUsd)}` : ''}`;
}

/** The Markdown shown as the sweep's "current details" in the Temporal UI. */
export function describeSweep(p: SweepProgress, result?: SweepResult): string {
  const c = p.counts;
  const lines = [
    `**sweep \`${p.name}\`** · ${p.total} rollouts · concurrency ${p.concurrency}${p.run > 1 ? ` · run ${p.run} (continued as new)` : ''}`,
    `completed ${c.completed} · running ${c.running} · pending ${c.pending} · failed ${c.failed + c.timed_out} · cancelled ${c.cancelled + c.terminated}${p.reused ? ` · reused ${p.reused}` : ''}${costText(p)}`,
  ];
  if (result) lines.push(result.stopped ? `**stopped** (${result.stopped})` : '**done**');
  else if (p.stopping) lines.push(`**stopping** (${p.stopping === 'drain' ? 'letting running rollouts finish' : 'cancelling running rollouts'})`);
  if (!result && p.etaSeconds !== null) lines.push(`ETA ~${fmtSecs(p.etaSeconds)}${p.avgRolloutSeconds !== null ? ` (avg rollout ${fmtSecs(Math.round(p.avgRolloutSeconds))})` : ''}`);
  if (p.leaders.length) {
    lines.push(['| agent | model | score | tasks |', '|---|---|---|---|', ...p.leaders.map((l) => `| ${l.agent} | ${l.model} | ${l.score ?? '–'} | ${l.tasks}${l.declaredTasks !== undefined ? `/${l.declaredTasks}` : ''} |`)].join('\n'));
  }
  if (result?.reportDir) lines.push(`report: \`${result.reportDir}/report.html\`${result.reportHost ? ` on host \`${result.reportHost}\`` : ''}`);
  return lines.join('\n\n');
}
