/**
 * Which limits the rate governor applies to a provider: the registry's `limits` (models.json or the
 * SAASBENCH_MODELS_FILE overlay), overridden per provider by SAASBENCH_RATE_LIMITS, a JSON object
 * `{ "<provider>": { "concurrent": 4, "rpm": 50, "tpm": 400000 } | null }` (null: no governor for
 * that provider), or the word `off` (no governor at all). No limits: the relay never calls Temporal.
 */
import { AgentConfigError } from '../errors';
import { RateLimitsOverrideSchema, type GovernorLimits } from '../model/governor';
import { zodIssueText } from '../zod-issues';

export const RATE_LIMITS_ENV = 'SAASBENCH_RATE_LIMITS';

export function governorLimits(provider: string, declared: GovernorLimits | undefined, env: NodeJS.ProcessEnv = process.env): GovernorLimits | null {
  const raw = env[RATE_LIMITS_ENV]?.trim();
  let limits = declared ?? null;
  if (raw === 'off') return null;
  if (raw) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      throw new AgentConfigError(`${RATE_LIMITS_ENV}: not JSON (${(err as Error).message}); expected {"<provider>": {"concurrent": n, "rpm": n, "tpm": n} | null} or "off"`);
    }
    const r = RateLimitsOverrideSchema.safeParse(parsed);
    if (!r.success) throw new AgentConfigError(`${RATE_LIMITS_ENV}: ${zodIssueText(r.error)}`);
    if (provider in r.data) limits = r.data[provider];
  }
  // limits with nothing to limit (e.g. only a TTL) are no limits
  if (!limits || (limits.concurrent === undefined && limits.rpm === undefined && limits.tpm === undefined)) return null;
  return limits;
}
