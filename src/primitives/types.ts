import type { z } from 'zod';
import type { Logger } from 'pino';
import type { Json } from '../json';

/** What a primitive reports. `passed` drives the node score; `data` is evidence for the report. */
export interface PrimitiveOutcome {
  passed: boolean;
  message: string;
  data?: Record<string, unknown>;
  /** Only P17: the judge's verdict, or why no verdict could be had (→ SKIPPED_LLM). */
  judge?: { skipped: true; reason: string } | { skipped: false; score: number; reasoning: string };
}

export interface LastResponse {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
  elapsedMs: number;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface SqlResult {
  rows: Record<string, unknown>[];
  columns: string[];
}

/**
 * Everything a primitive may touch, as narrow ports so each primitive can be tested against a
 * real server, database or container without a Temporal worker around it.
 */
export interface PrimitiveEnv {
  /** http://127.0.0.1:<loopback port of the app> */
  baseUrl: string;
  /** absolute workspace path inside the app container, e.g. /app */
  workspace: string;
  appService: string;
  /** names of the stack's compose services (P12 maps a published `container` name onto one); optional */
  services?: readonly string[];
  exec(service: string, command: string, opts?: { timeoutMs?: number; workdir?: string }): Promise<ExecResult>;
  /** contents of a file in the app container; null when it does not exist */
  readFile(path: string, maxBytes?: number): Promise<Buffer | null>;
  /** kind of a path in the app container */
  statPath(path: string): Promise<'file' | 'dir' | null>;
  /** every file and directory under `dir` (recursive), paths relative to `dir`, dirs suffixed with / */
  listTree(dir: string): Promise<string[] | null>;
  sql?(text: string): Promise<SqlResult>;
  judge?: JudgePort;
  /** directory for artifacts of this node (screenshots, raw bodies) */
  artifactsDir: string;
  log: Logger;
}

export interface JudgeRequest {
  rubric: string;
  maxScore: number;
  evidence: { text: string; images?: { mediaType: string; base64: string }[] };
}
export interface JudgePort {
  judge(req: JudgeRequest): Promise<{ skipped: true; reason: string } | { skipped: false; score: number; reasoning: string }>;
}

/** The chain's mutable state: variables it can read, what it exports to dependents, last response. */
export interface ChainState {
  vars: Record<string, Json>;
  exports: Record<string, Json>;
  last?: LastResponse;
}

export interface PrimitiveContext {
  env: PrimitiveEnv;
  state: ChainState;
  nodeId: string;
  /** set a variable for the rest of the chain and export it to dependent nodes */
  setVar(name: string, value: Json): void;
}

export interface Primitive<S extends z.ZodType = z.ZodType> {
  id: string;
  name: string;
  schema: S;
  run(input: z.infer<S>, ctx: PrimitiveContext): Promise<PrimitiveOutcome>;
}

export function definePrimitive<S extends z.ZodType>(p: Primitive<S>): Primitive<S> {
  return p;
}
