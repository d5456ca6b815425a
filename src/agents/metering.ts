/**
 * Metering: what a rollout's model calls cost, from the gateway's own count of tokens (every
 * answer passing the relay, translated or not; src/agents/llm-relay-translate.ts) and the
 * registry's dated list price of the model (models.json `price`). Works the same for every agent,
 * whatever the agent itself reports (Codex reports no cost). A model without a price, or usage the
 * price cannot cover, gives cost null with the reason: never a guessed number.
 */
import { z } from 'zod';
import type { GatewayRunRecord, GatewayUsage } from '../model/cost';
import type { SettingsStats } from './gateway-settings';

export const PriceSchema = z
  .object({
    /** the day the list price was read */
    asOf: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD'),
    /** USD per million input tokens that were not read from the prompt cache */
    inputPerMTok: z.number().nonnegative(),
    /** USD per million input tokens read from the prompt cache; absent: the vendor lists none (cached tokens then leave the cost unknown) */
    cachedInputPerMTok: z.number().nonnegative().optional(),
    /** USD per million output tokens (reasoning tokens are output tokens, billed at this rate) */
    outputPerMTok: z.number().nonnegative(),
    /** where the price was read (a pricing page) */
    source: z.string().min(1),
  })
  .strict();
export type Price = z.infer<typeof PriceSchema>;

/** Tokens summed over a rollout's model answers (src/model/cost.ts). */
export type MeteredUsage = GatewayUsage;

export interface CostRecord {
  /** USD, rounded to a millionth; null when it cannot be known (see reason) */
  usd: number | null;
  /** why usd is null, or what it leaves out */
  reason: string | null;
  /** the price used (null: none in the registry) */
  price: Price | null;
  usage: MeteredUsage;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** The cost of `usage` at `price`. */
export function costOf(usage: MeteredUsage, price: Price | undefined, model: string, priceUnknown?: string): CostRecord {
  const u = { ...usage };
  if (!price) return { usd: null, reason: `no price for model "${model}" in the model registry${priceUnknown ? ` (${priceUnknown})` : ''}`, price: null, usage: u };
  if (u.cachedInput > 0 && price.cachedInputPerMTok === undefined) {
    return { usd: null, reason: `${u.cachedInput} cached input tokens and no cached-input price for "${model}" in the registry`, price, usage: u };
  }
  const fresh = Math.max(0, u.input - u.cachedInput);
  const usd = (fresh * price.inputPerMTok + u.cachedInput * (price.cachedInputPerMTok ?? 0) + u.output * price.outputPerMTok) / 1e6;
  const reason = u.unmetered ? `lower bound: ${u.unmetered} answer(s) without readable usage` : null;
  return { usd: round6(usd), reason, price, usage: u };
}

/** The rollout's record from the relay's stats (report.json agentRun.gateway, the sweep's cost). */
export function gatewayRecord(stats: { usage: MeteredUsage; unmeteredAnswers?: number; settings?: SettingsStats }, m: { id: string; price?: Price; priceUnknown?: string }): GatewayRunRecord {
  const c = costOf({ ...stats.usage, unmetered: stats.unmeteredAnswers ?? 0 }, m.price, m.id, m.priceUnknown);
  return { usage: c.usage, costUsd: c.usd, costReason: c.reason, price: c.price, settings: stats.settings ?? null };
}
