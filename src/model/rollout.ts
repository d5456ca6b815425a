import { z } from 'zod';
import type { NodeOutcome } from './scores';
import type { TaskScore } from './scores';
import type { Method } from './dag';
import type { Json } from './json';
import type { StackHandle } from './sandbox';
import type { HostMove, ParentLink, SnapshotMeta } from './snapshot';
import type { GatewayRunRecord } from './cost';

export { rolloutKeyOf, rolloutWorkflowId } from './rollout-ids';

/** What travels through Temporal payloads. Pure types and zod only: imported by workflow code. */

const Name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:@+-]*$/, 'letters, digits and _ . : @ + - only');

export const JudgeSettingsSchema = z
  .object({
    enabled: z.boolean().default(true),
    model: z.string().min(1).default('claude-sonnet-4-5-20250929'),
  })
  .strict();

export const RolloutInputSchema = z
  .object({
    sweep: Name.default('adhoc'),
    taskDir: z.string().min(1),
    taskId: Name,
    agent: Name,
    model: Name.default('none'),
    repeat: z.number().int().min(0).default(0),
    budgetSeconds: z.number().positive().default(10_800),
    idleSeconds: z.number().positive().default(1_800),
    /** how soon a dead worker is noticed (activity heartbeat timeout) */
    heartbeatSeconds: z.number().int().min(5).max(600).default(30),
    agentRetry: z
      .object({
        transientRetries: z.number().int().min(0).max(5).default(1),
        backoffSeconds: z.number().min(0).default(60),
        onLostProcess: z.enum(['resume', 'fail']).default('resume'),
      })
      .strict()
      .default({ transientRetries: 1, backoffSeconds: 60, onLostProcess: 'resume' }),
    /** seconds between rollout snapshots in the agent phase; 0: only the final one (docs/operations.md "Snapshots") */
    snapshotSeconds: z.number().int().min(0).default(600),
    /**
     * A host whose queue nobody polls for this long (a runAgent retry not picked up) counts as
     * gone: the rollout moves to another host and resumes from its latest snapshot.
     */
    hostLossSeconds: z.number().int().min(5).default(900),
    /** start from another rollout's snapshot (`saasbench fork`): workspace and databases, a fresh agent */
    fromSnapshot: z.object({ workflowId: z.string().min(1), rolloutKey: z.string().min(1), seq: z.number().int().min(1), runDir: z.string().optional() }).strict().optional(),
    /** image references rewritten for this rollout (`--image-map from=to`; docs/operations.md) */
    imageMap: z.record(z.string(), z.string()).optional(),
    evaluation: z
      .object({
        /**
         * DAG nodes evaluated at once. Unset: the task's own default (EvalPlan.defaultParallelism):
         * one at a time in the published order unless the task declares parallel evaluation safe.
         */
        parallelism: z.number().int().min(1).max(64).optional(),
        judge: JudgeSettingsSchema.default({ enabled: true, model: 'claude-sonnet-4-5-20250929' }),
      })
      .strict()
      .default({ judge: { enabled: true, model: 'claude-sonnet-4-5-20250929' } }),
  })
  .strict();
export type RolloutInput = z.infer<typeof RolloutInputSchema>;
export type JudgeSettings = z.infer<typeof JudgeSettingsSchema>;

/** The workflow's view of the DAG: structure and scoring only, no primitive inputs. */
export interface PlanNode {
  id: string;
  prereqs: string[];
  method: Method;
  maxScore: number;
  category: string;
  subcategory: string;
  /** ordering-only predecessors: run after them whatever their status, and see their captures */
  after?: string[];
  /** run after every node without runLast has finished */
  runLast?: boolean;
}
export interface EvalPlan {
  taskId: string;
  taskHash: string;
  nodes: PlanNode[];
  /** topological order, stable in file order */
  order: string[];
  /** nodes at once when the rollout does not say: 1 (the published evaluator's order) unless the task declares parallel evaluation safe */
  defaultParallelism?: number;
  trajectories: Record<string, string[]>;
}

export interface Provisioned {
  host: string;
  hostQueue: string;
  runDir: string;
  plan: EvalPlan;
  stack: StackHandle;
  appUrl: string;
  provisionMs: number;
}

export interface RolloutRef {
  rolloutKey: string;
  workflowId: string;
  taskDir: string;
  taskHash: string;
  runDir: string;
  stack: StackHandle;
}

export type AgentExitReason = 'completed' | 'failed' | 'budget_exhausted' | 'idle_timeout' | 'infrastructure';
export interface AgentAttemptRecord {
  attempt: number;
  exitReason: AgentExitReason;
  exitCode: number | null;
  seconds: number;
  /** why the attempt counted as a transient failure, if it did */
  transient: string | null;
}
export interface AgentRunSummary {
  agent: string;
  model: string;
  exitReason: AgentExitReason;
  exitCode: number | null;
  attempts: number;
  agentSeconds: number;
  message: string;
  history: AgentAttemptRecord[];
  /** the normalized trajectory in numbers (trajectory.json in the run dir has the rest) */
  trajectory?: TrajectorySummary;
  /** transcript audit: evaluator access or forbidden sources (src/agents/integrity.ts) */
  integrity?: IntegrityReport;
  /** the agent CLI's version, when it reports one */
  cliVersion?: string | null;
  /** rollout snapshots taken during this agent run (metadata; contents in the snapshot store) */
  snapshots?: SnapshotMeta[];
  /** what the gateway measured and applied (tokens, cost, settings); absent for agents without a model */
  gateway?: GatewayRunRecord;
  /** rate governor waits (not in agentSeconds): requests that waited, and the wall seconds they did */
  governor?: { waits: number; waitSeconds: number };
}

/** What goes into the Temporal payload and report.json about the agent's trajectory: small, no transcript text. */
export interface TrajectorySummary {
  turns: number;
  toolCalls: number;
  commands: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costUsd: number | null;
  sessionIds: string[];
  agentVersion: string | null;
  /** files written to the run dir for this agent (events, trajectory.json, trajectory.atif.json) */
  files: string[];
}

export interface IntegrityHit {
  /**
   * evaluator_access / check_access / forbidden_source: see below. The sandbox kinds (attempts the
   * isolation stops; docs/security.md): docker_socket (container engine or host escape),
   * host_probe (a service of the worker host through the bridge gateway), network_probe (another
   * address: a neighbouring rollout, a port scan), resource_exhaustion (fork bombs, memory hogs,
   * or the kernel's own count of limit hits), egress_denied (the egress proxy refused a host).
   */
  kind: 'evaluator_access' | 'check_access' | 'forbidden_source' | 'docker_socket' | 'host_probe' | 'network_probe' | 'resource_exhaustion' | 'egress_denied';
  /** the rule that matched (a path or a forbidden source) */
  rule: string;
  /** where: tool call id or event line number */
  where: string;
  /** up to 400 characters of the matching command/input */
  sample: string;
}

/**
 * clean: nothing found. warning: touched the task's non-evaluation check material (published
 * layout's check/<task>/), hit a resource limit, or was refused by the egress proxy. flagged: cloned
 * or downloaded a codebase the task forbids, or tried to get out of its sandbox (docker socket, host
 * services, other rollouts) — reported, score kept for a human to judge. voided: touched evaluator paths (DAG, rubrics, the evaluate folder) — the
 * score is voided in report.json, the original kept beside it.
 */
export interface IntegrityReport {
  verdict: 'clean' | 'warning' | 'flagged' | 'voided' | 'not_scanned';
  evaluatorHits: number;
  checkHits: number;
  forbiddenSourceHits: number;
  scannedToolCalls: number;
  scannedLines: number;
  samples: IntegrityHit[];
  /** sandbox attempts (docker_socket, host_probe, network_probe): flagged for a human to judge */
  sandboxHits?: number;
  /** hits per kind, every kind that matched */
  byKind?: Partial<Record<IntegrityHit['kind'], number>>;
  /** the kernel's count of what the limits stopped (src/security/signals.ts) */
  limits?: { oomKills: number; pidsLimitHits: number; memoryPeakBytes: number | null };
}

export interface EvaluateNodeInput {
  ref: RolloutRef;
  nodeId: string;
  /** exports of the node's transitive prereqs, merged in topological order */
  vars: Record<string, Json>;
  judge: JudgeSettings;
  /** when the evaluation started (ISO): every node's date/time variables are computed from this one instant */
  clockAt?: string;
}

export interface RolloutResult {
  workflowId: string;
  rolloutKey: string;
  taskId: string;
  agent: string;
  model: string;
  repeat: number;
  sweep: string;
  runDir: string;
  host: string;
  agentRun: AgentRunSummary;
  /** the task score (0 when voided) */
  score: TaskScore;
  /** set when the transcript audit found evaluator access: the score above is 0, `original` is what the checks gave */
  voided?: { reason: string; original: TaskScore['overall'] };
  outcomes: NodeOutcome[];
  timings: { provisionMs: number; agentMs: number; evaluationMs: number; totalMs: number };
  /** host moves after a lost host (src/workflows/host-move.ts) */
  moves?: HostMove[];
  /** the rollout this one was forked from */
  parent?: ParentLink;
}

export type RolloutPhase = 'queued' | 'provisioning' | 'preparing' | 'agent' | 'evaluating' | 'scoring' | 'persisting' | 'teardown' | 'done' | 'failed';

export interface RolloutProgress {
  phase: RolloutPhase;
  nodesTotal: number;
  nodesDone: number;
  nodesRunning: string[];
  statusCounts: Record<string, number>;
  scorePct: number | null;
  startedAt: number;
  phaseStartedAt: number;
  runDir?: string;
  host?: string;
  moves?: HostMove[];
  /** rate governor waits of the agent phase, once it has ended */
  governor?: { waits: number; waitSeconds: number };
}
