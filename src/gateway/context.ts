/** What an encoder towards the agent needs beyond the IR itself. */
import type { GatewayMemory } from './carrier';
import type { IrRequest } from './ir';

export interface AgentContext {
  /** where what the agent protocol cannot hold is kept until the agent sends it back */
  memory?: GatewayMemory;
  /** names of Responses "custom" (free-text) tools, so their calls go back as custom_tool_call */
  freeformTools?: string[];
  /** Chat: the agent asked for stream_options.include_usage (else no usage chunk is sent) */
  includeUsage?: boolean;
}

/** The context an agent's own request implies. */
export function contextFor(req: IrRequest, memory?: GatewayMemory, includeUsage = true): AgentContext {
  return { ...(memory ? { memory } : {}), freeformTools: req.tools.filter((t) => t.freeform).map((t) => t.name), includeUsage };
}
