/**
 * The rate governor of one provider (docs/gateway.md "Rate governor"): one long-running workflow
 * per provider (id `saasbench-governor-<provider>`) that every relay of every worker host asks
 * before a model request goes upstream, so the provider's limits hold for the whole cluster.
 *
 * - `acquire` (Update) queues the ask and answers, first come first served, once a concurrency
 *   slot is free, the sliding minute has room for one more request (RPM) and its estimated tokens
 *   (TPM), and the provider is not paused. The answer is a lease id.
 * - `release` (signal) frees the lease, replaces the token estimate by the real count, and may
 *   pause the provider (an upstream 429/529 with its Retry-After).
 * - `renew` (signal) keeps a long stream's lease alive; a lease neither released nor renewed
 *   within its TTL is dropped, so a holder that died cannot keep a slot.
 * - Before the history grows long, the run answers its waiting asks `retry` (the client asks the
 *   next run), waits for its handlers, and continues as new with the leases and the window.
 * Everything here is deterministic: Date.now() is workflow time, lease ids come from uuid4().
 */
import { allHandlersFinished, condition, continueAsNew, setHandler, uuid4, workflowInfo } from '@temporalio/workflow';
import type { AcquireAnswer, AcquireRequest, GovernorInput, GovernorLease, GovernorLimits, GovernorWindowEntry } from '../model/governor';
import { acquireUpdate, governorStateQuery, releaseSignal, renewSignal } from '../governor/defs';

export { acquireUpdate, governorStateQuery, releaseSignal, renewSignal, governorWorkflowId } from '../governor/defs';

const MINUTE = 60_000;
const DEFAULT_TTL_SECONDS = 300;
/** a Retry-After longer than this is the upstream's problem, not a reason to stall a sweep for hours */
const MAX_PAUSE_MS = 10 * MINUTE;

interface Ticket {
  req: AcquireRequest;
  askedAt: number;
  answer?: AcquireAnswer;
}

export async function governorWorkflow(input: GovernorInput): Promise<void> {
  let limits: GovernorLimits = input.limits;
  const carry = input.carry;
  const leases = new Map<string, GovernorLease>((carry?.leases ?? []).map((l) => [l.id, l]));
  let window: GovernorWindowEntry[] = carry?.window ?? [];
  let pausedUntil = carry?.pausedUntil ?? 0;
  let granted = carry?.granted ?? 0;
  let expired = carry?.expired ?? 0;
  const runs = (carry?.runs ?? 0) + 1;
  const queue: Ticket[] = [];
  let draining = false;
  let dirty = false;
  const ttlMs = () => (limits.leaseTtlSeconds ?? DEFAULT_TTL_SECONDS) * 1000;

  setHandler(
    acquireUpdate,
    async (req) => {
      if (draining) return { retry: true };
      // an ask asked again (its answer was lost in a rollover): the lease it already holds
      const held = req.requestId ? [...leases.values()].find((l) => l.requestId === req.requestId) : undefined;
      if (held) return { leaseId: held.id, waitedMs: 0 };
      limits = req.limits;
      const t: Ticket = { req, askedAt: Date.now() };
      queue.push(t);
      dirty = true;
      await condition(() => t.answer !== undefined);
      return t.answer!;
    },
    {
      validator: (req) => {
        if (!req || typeof req.holder !== 'string' || !(Number.isFinite(req.tokens) && req.tokens >= 0) || typeof req.limits !== 'object' || req.limits === null) throw new Error('acquire: expected { holder, tokens >= 0, limits }');
      },
    },
  );
  setHandler(releaseSignal, (r) => {
    leases.delete(r.leaseId);
    const e = window.find((w) => w.lease === r.leaseId);
    if (e && typeof r.tokens === 'number' && r.tokens >= 0) e.tokens = r.tokens;
    if (typeof r.pauseMs === 'number' && r.pauseMs > 0) pausedUntil = Math.max(pausedUntil, Date.now() + Math.min(r.pauseMs, MAX_PAUSE_MS));
    dirty = true;
  });
  setHandler(renewSignal, ({ leaseIds }) => {
    for (const id of leaseIds) {
      const l = leases.get(id);
      if (l) l.expiresAt = Date.now() + ttlMs();
    }
  });
  setHandler(governorStateQuery, () => ({
    provider: input.provider,
    limits,
    inFlight: leases.size,
    waiting: queue.length,
    windowRequests: window.length,
    windowTokens: window.reduce((a, w) => a + w.tokens, 0),
    pausedUntil,
    granted,
    expired,
    runs,
  }));

  /** ms until the head of the queue may go (0: now; Infinity: only a release can free it) */
  const delayOf = (t: Ticket, now: number): number => {
    if (now < pausedUntil) return pausedUntil - now;
    let wait = 0;
    if (limits.concurrent !== undefined && leases.size >= limits.concurrent) {
      wait = Math.max(wait, Math.min(...[...leases.values()].map((l) => l.expiresAt)) - now);
    }
    if (limits.rpm !== undefined && window.length >= limits.rpm) wait = Math.max(wait, window[window.length - limits.rpm].at + MINUTE - now);
    if (limits.tpm !== undefined && window.length) {
      // the oldest entries must age out until this ask fits (an ask bigger than the whole budget waits for an empty window)
      let sum = window.reduce((a, w) => a + w.tokens, 0);
      for (let i = 0; i < window.length && sum + t.req.tokens > limits.tpm; i++) {
        sum -= window[i].tokens;
        wait = Math.max(wait, window[i].at + MINUTE - now);
      }
    }
    return Math.max(0, wait);
  };

  for (;;) {
    const now = Date.now();
    for (const l of [...leases.values()]) {
      if (l.expiresAt <= now) {
        leases.delete(l.id);
        expired++;
      }
    }
    window = window.filter((w) => w.at + MINUTE > now);
    let nextIn = Infinity;
    while (queue.length) {
      const d = delayOf(queue[0], now);
      if (d > 0) {
        nextIn = d;
        break;
      }
      const t = queue.shift()!;
      const id = uuid4();
      leases.set(id, { id, holder: t.req.holder, tokens: t.req.tokens, grantedAt: now, expiresAt: now + ttlMs(), ...(t.req.requestId ? { requestId: t.req.requestId } : {}) });
      window.push({ at: now, tokens: t.req.tokens, lease: id });
      granted++;
      t.answer = { leaseId: id, waitedMs: now - t.askedAt };
    }
    // leases expire even when nobody waits: their slots matter to the next ask
    if (leases.size) nextIn = Math.min(nextIn, Math.min(...[...leases.values()].map((l) => l.expiresAt)) - now);
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength >= (input.maxHistory ?? 4000)) {
      draining = true;
      for (const t of queue) t.answer = { retry: true };
      queue.length = 0;
      await condition(allHandlersFinished);
      return continueAsNew<typeof governorWorkflow>({ ...input, limits, carry: { leases: [...leases.values()], window, pausedUntil, granted, expired, runs } });
    }
    dirty = false;
    if (nextIn === Infinity) await condition(() => dirty);
    else await condition(() => dirty, Math.max(1, nextIn));
  }
}
