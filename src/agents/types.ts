import type { Logger } from 'pino';
import type { Task } from '../model/task';
import type { StackHandle } from '../model/sandbox';
import type { SandboxBackend } from '../sandbox/backend';
import type { CliPin } from './install';
import type { ModelApi } from './models';
import type { Trajectory } from './trajectory/types';

export interface AgentContext {
  rolloutKey: string;
  /** the sandbox the stack runs on: every container access goes through it */
  sandbox: SandboxBackend;
  task: Task;
  stack: StackHandle;
  /** the container the agent works in (the task's app service) */
  container: string;
  workspace: string;
  model: string;
  /** host folder of this rollout's results */
  runDir: string;
  /** the full prompt given to the agent */
  prompt: string;
  log: Logger;
  /**
   * Where the agent reaches its model: the rollout's LLM relay (src/agents/llm-relay.ts). The token
   * is a per-rollout relay credential, never the real API key. Set for drivers with `modelApis`.
   */
  llm?: LlmEndpoint;
  /**
   * Environment every launch of the agent gets (under the driver's own): the egress proxy
   * (HTTP_PROXY, HTTPS_PROXY, NO_PROXY — src/security/agent-network.ts). Set by the activity.
   */
  extraEnv?: Record<string, string>;
}

export interface LlmEndpoint {
  /** base URL as the agent's client expects it (the relay adds the upstream's own path prefix) */
  baseUrl: string;
  token: string;
}

/** A command started detached inside the container; the supervisor watches it. */
export interface AgentLaunch {
  script: string;
  env?: Record<string, string>;
  workdir?: string;
}

/** What one attempt left behind, for deciding about a retry and for the trajectory. */
export interface AttemptOutput {
  attempt: number;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/**
 * One agent framework: how to prepare and launch it. Transcript parsing lives beside the command
 * builder in the agent's own folder.
 */
export interface AgentDriver {
  name: string;
  /** host-side preparation before launch (copy files, write configs); must be idempotent */
  prepare?(ctx: AgentContext): Promise<void>;
  launch(ctx: AgentContext): AgentLaunch;
  /**
   * The command that continues the agent's own session when its process died without an exit
   * record (claude --resume, codex exec resume). null: this agent cannot resume.
   */
  resume?(ctx: AgentContext, previous: AttemptOutput, remainingSeconds: number): AgentLaunch | null;
  /** A reason when the attempt failed on a transient gateway error (overloaded, 429/503/529…); else null. */
  transientFailure?(out: AttemptOutput): string | null;
  /** Did the attempt finish its work (e.g. a successful `result` event), whatever its exit code? */
  completed?(out: AttemptOutput): boolean;
  /**
   * The container the supervisor starts and watches the agent process in, when it is not the app
   * container (OpenHands: a per-rollout sidecar on the rollout network, created by prepare(), which
   * reaches the app container only through the exec proxy and its model only through the relay).
   */
  processContainer?(ctx: AgentContext): string;
  /**
   * The wire protocols this agent's model client speaks (models.json provider `api`). Set = the
   * agent talks to a model: the activity starts an LLM relay for it and sets ctx.llm, and a model
   * served over another API is refused before the rollout starts.
   */
  modelApis?: readonly ModelApi[];
  /** The pinned CLI binary copied into the app container (src/agents/install.ts). */
  cli?: CliPin;
  /** Host-side install on first use, before launch (the CLI binary, a runtime venv); idempotent. */
  preinstall?(): Promise<void>;
  /**
   * Files and folders (absolute, in the process container) holding the agent's own session state:
   * kept in rollout snapshots so a session can be resumed on another host (src/snapshots).
   */
  sessionPaths?: string[];
  /** The agent's own transcript file in the run folder, listed in the trajectory summary. */
  transcriptFile?: string;
  /**
   * After the last attempt: persist the agent's own transcript files and return its normalized
   * trajectory (src/agents/trajectory). Reads only what the supervisor kept in the run dir. Idempotent.
   */
  finalize?(ctx: AgentContext, attempts: AttemptOutput[]): Promise<Trajectory | null>;
}
