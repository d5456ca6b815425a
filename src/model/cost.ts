/**
 * What the gateway measured of one rollout (src/agents/metering.ts, gateway-settings.ts): tokens,
 * cost at the registry's dated price, and the settings it applied. Carried in the rollout's result
 * (AgentRunSummary.gateway) so the sweep decides its cost cap from child results only.
 */

export interface GatewayUsage {
  /** model answers whose usage was read */
  requests: number;
  /** input tokens, cached ones included */
  input: number;
  cachedInput: number;
  /** output tokens, reasoning ones included */
  output: number;
  reasoning: number;
  /** successful model answers whose usage could not be read (the cost is then a lower bound) */
  unmetered?: number;
}

export interface PriceRecord {
  asOf: string;
  inputPerMTok: number;
  cachedInputPerMTok?: number;
  outputPerMTok: number;
  source: string;
}

/** The per-rollout record of what the gateway applied of the registry's settings. */
export interface SettingsStats {
  appliedAt: 'gateway';
  /** model requests the settings were applied to */
  requests: number;
  /** model requests naming another model than the snapshot: passed without settings */
  otherModelRequests: number;
  /** field → value last applied (upstream field names, dotted paths) */
  applied: Record<string, unknown>;
  /** field → how often the agent had sent something else, and up to 3 distinct values it sent */
  overridden: Record<string, { count: number; agentSent: unknown[] }>;
  notApplicable: string[];
}

export interface GatewayRunRecord {
  usage: GatewayUsage;
  /** USD at `price`; null when unknown (costReason says why) */
  costUsd: number | null;
  /** why costUsd is null, or what it leaves out (a lower bound) */
  costReason: string | null;
  price: PriceRecord | null;
  settings: SettingsStats | null;
}

/** Dollars for people: "$0.0123", "$12.34", "–" for unknown. */
export function fmtUsd(x: number | null | undefined): string {
  if (x === null || x === undefined) return '–';
  return Math.abs(x) >= 1 ? `$${x.toFixed(2)}` : `$${x.toFixed(4)}`;
}
