import { z } from 'zod';

/**
 * One line of <runDir>/agent/gateway-log.jsonl: one model request the LLM relay answered, written
 * when its response ends. Numbers only — never bodies, headers or URLs. `inTok`/`outTok` are the
 * usage the relay metered while the request was open (0 when the relay meters none). `retries` and
 * `waitMs` are what other relay parts (upstream retries, the rate governor) attached to the request.
 */
export const GATEWAY_LOG_FILE = 'gateway-log.jsonl';

export const GatewayLogEntrySchema = z.object({
  /** when the request arrived (ISO 8601) */
  t: z.string(),
  /** until its response ended or the agent hung up */
  ms: z.number().nonnegative(),
  /** the status the agent got (0: the connection closed before a status was sent) */
  status: z.number().int(),
  /** the agent-side protocol of the request path (anthropic, chat, responses) */
  protocol: z.string(),
  inTok: z.number().nonnegative(),
  outTok: z.number().nonnegative(),
  retries: z.number().int().nonnegative().optional(),
  waitMs: z.number().nonnegative().optional(),
  costUsd: z.number().nonnegative().optional(),
});
export type GatewayLogEntry = z.infer<typeof GatewayLogEntrySchema>;
