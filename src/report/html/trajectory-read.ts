/**
 * What the rollout page's trajectory view reads from a run folder: the ATIF trajectory
 * (trajectory.atif.json — the same for every agent), the relay's per-request log
 * (agent/gateway-log.jsonl) and its totals (agent/relay-stats.json). Each is optional; a file that
 * does not parse becomes a problem line naming the file and JSON path, shown on the page, instead
 * of a missing report.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { GATEWAY_LOG_FILE, GatewayLogEntrySchema, type GatewayLogEntry } from '../../model/gateway-log';
import { zodIssueText } from '../../zod-issues';

const num = z.number().nonnegative().optional();
const MetricsSchema = z.object({ prompt_tokens: num, completion_tokens: num, cached_tokens: num, cost_usd: num }).loose();
const StepSchema = z
  .object({
    step_id: z.number().int(),
    timestamp: z.string().optional(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: z.string().optional(),
    message: z.string(),
    reasoning_content: z.string().optional(),
    tool_calls: z.array(z.object({ tool_call_id: z.string(), function_name: z.string(), arguments: z.record(z.string(), z.unknown()) }).loose()).optional(),
    observation: z.object({ results: z.array(z.object({ source_call_id: z.string().optional(), content: z.string().optional() }).loose()) }).loose().optional(),
    metrics: MetricsSchema.optional(),
    extra: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();
const AttemptSchema = z.object({ attempt: z.number().int(), exitReason: z.string(), exitCode: z.number().nullable(), seconds: z.number(), transient: z.string().nullable() }).loose();
export const AtifFileSchema = z
  .object({
    schema_version: z.string(),
    session_id: z.string(),
    agent: z.object({ name: z.string(), version: z.string(), model_name: z.string().optional() }).loose(),
    steps: z.array(StepSchema),
    final_metrics: z
      .object({ total_prompt_tokens: num, total_completion_tokens: num, total_cached_tokens: num, total_cost_usd: num, total_steps: num, extra: z.record(z.string(), z.unknown()).optional() })
      .loose()
      .optional(),
    extra: z
      .object({ session_ids: z.array(z.string()).optional(), saasbench: z.object({ exit_reason: z.string().optional(), agent_seconds: z.number().optional(), attempts: z.array(AttemptSchema).optional() }).loose().optional() })
      .loose()
      .optional(),
  })
  .loose();
export type AtifFile = z.infer<typeof AtifFileSchema>;
export type AtifFileStep = AtifFile['steps'][number];
export type AttemptRow = z.infer<typeof AttemptSchema>;

const RelayStatsSchema = z
  .object({
    requests: z.number(),
    upstreamErrors: z.number().optional(),
    rejected: z.number().optional(),
    translated: z.number().optional(),
    statusCounts: z.record(z.string(), z.number()).optional(),
    usage: z.object({ input: z.number(), output: z.number(), cachedInput: z.number().optional() }).loose().optional(),
  })
  .loose();
export type RelayStatsFile = z.infer<typeof RelayStatsSchema>;

export interface TrajectoryInputs {
  atif: AtifFile | null;
  gateway: GatewayLogEntry[] | null;
  relay: RelayStatsFile | null;
  /** files that exist but did not parse, as one line each (file: path: message) */
  problems: string[];
}

function readJson<T>(file: string, label: string, schema: z.ZodType<T>, problems: string[]): T | null {
  if (!existsSync(file)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    problems.push(`${label}: not JSON (${(err as Error).message})`);
    return null;
  }
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  problems.push(`${label}: ${zodIssueText(r.error, { max: 3 })}`);
  return null;
}

/**
 * The gateway log's lines. A line cut short by a kill (the last one, not JSON) is skipped and
 * counted; a line that is JSON but not an entry is a problem, reported once with its line number.
 */
export function readGatewayLog(file: string, problems: string[]): GatewayLogEntry[] | null {
  if (!existsSync(file)) return null;
  const out: GatewayLogEntry[] = [];
  let cut = 0;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        cut++;
        return;
      }
      const r = GatewayLogEntrySchema.safeParse(raw);
      if (r.success) out.push(r.data);
      else if (problems.length < 20) problems.push(`agent/${GATEWAY_LOG_FILE} line ${i + 1}: ${zodIssueText(r.error, { max: 2 })}`);
    });
  if (cut) problems.push(`agent/${GATEWAY_LOG_FILE}: ${cut} line(s) not JSON (cut by a kill?) skipped`);
  return out;
}

export function readTrajectoryInputs(runDir: string): TrajectoryInputs {
  const problems: string[] = [];
  return {
    atif: readJson(join(runDir, 'trajectory.atif.json'), 'trajectory.atif.json', AtifFileSchema, problems),
    gateway: readGatewayLog(join(runDir, 'agent', GATEWAY_LOG_FILE), problems),
    relay: readJson(join(runDir, 'agent', 'relay-stats.json'), 'agent/relay-stats.json', RelayStatsSchema, problems),
    problems,
  };
}
