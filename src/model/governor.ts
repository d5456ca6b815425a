/**
 * Shapes of the rate governor (docs/gateway.md "Rate governor"): the per-provider limits declared
 * in the model registry or overridden by SAASBENCH_RATE_LIMITS, and the messages between the
 * relays and the governor workflow (src/workflows/governor.ts, src/governor/).
 */
import { z } from 'zod';

export const GovernorLimitsSchema = z
  .object({
    /** requests per minute (sliding 60 s window) */
    rpm: z.number().int().positive().optional(),
    /** tokens per minute (input + output; estimated at admission, corrected on release) */
    tpm: z.number().int().positive().optional(),
    /** model requests in flight at once (a stream holds its slot until it ends) */
    concurrent: z.number().int().positive().optional(),
    /** a lease not released nor renewed for this long is dropped (a dead holder cannot leak a slot) */
    leaseTtlSeconds: z.number().int().positive().optional(),
  })
  .strict();
export type GovernorLimits = z.infer<typeof GovernorLimitsSchema>;

/** SAASBENCH_RATE_LIMITS: provider → limits (null = no governor for that provider), or "off". */
export const RateLimitsOverrideSchema = z.record(z.string(), GovernorLimitsSchema.nullable());

export interface AcquireRequest {
  /** who asks (a rollout key): shown in the governor's state, never used for admission */
  holder: string;
  /** estimated tokens of the request (TPM), corrected by the release */
  tokens: number;
  /** the caller's limits: the workflow follows the latest it was given */
  limits: GovernorLimits;
  /**
   * the same for every retry of one ask: an answer lost in a rollover (granted, then the client saw
   * an error and asked again) returns the lease already granted instead of a second one
   */
  requestId?: string;
}

/** `retry`: the governor is rolling over (continue-as-new); ask again, the next run answers. */
export type AcquireAnswer = { leaseId: string; waitedMs: number } | { retry: true };

export interface ReleaseRequest {
  leaseId: string;
  /** tokens the answer really used (input + output), when the upstream reported them */
  tokens?: number;
  /** the upstream said 429/529: nobody of this provider goes upstream for this long */
  pauseMs?: number;
}

export interface GovernorLease {
  id: string;
  holder: string;
  requestId?: string;
  tokens: number;
  grantedAt: number;
  expiresAt: number;
}

/** One admitted request in the sliding minute (RPM/TPM). */
export interface GovernorWindowEntry {
  at: number;
  tokens: number;
  lease: string;
}

/** What a run hands to the next one at continue-as-new. */
export interface GovernorCarry {
  leases: GovernorLease[];
  window: GovernorWindowEntry[];
  pausedUntil: number;
  granted: number;
  expired: number;
  /** runs of this governor so far (1 + continue-as-new count) */
  runs: number;
}

export interface GovernorInput {
  provider: string;
  limits: GovernorLimits;
  carry?: GovernorCarry;
  /** continue-as-new once the history is this long (default 4000; tests set it low) */
  maxHistory?: number;
}

export interface GovernorSnapshot {
  provider: string;
  limits: GovernorLimits;
  inFlight: number;
  waiting: number;
  windowRequests: number;
  windowTokens: number;
  pausedUntil: number;
  granted: number;
  expired: number;
  runs: number;
}

/** Per rollout: the requests held by the governor and the wall time they waited (not billed to the agent). */
export interface GovernorWaits {
  /** model requests that asked for admission */
  requests: number;
  /** of those, the ones that waited (longer than a round trip, 250 ms) */
  waited: number;
  /** wall ms during which at least one request of the rollout waited (overlaps counted once) */
  waitMs: number;
}
