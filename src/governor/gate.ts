/**
 * The relay's hook into the rate governor (RelayOptions.gate in src/agents/llm-relay.ts): one gate
 * per rollout holds each model request until the provider's governor admits it, releases the lease
 * when the answer to the agent ends (with the tokens it used and, after a 429/529, the upstream's
 * Retry-After as a provider-wide pause), and keeps the rollout's wait time, which the supervisor
 * does not bill to the agent's budget.
 */
import type http from 'node:http';
import type { GovernorWaits } from '../model/governor';
import type { Admission } from './client';

export interface GovernorLike {
  admit(holder: string, tokens: number): Promise<Admission>;
}

/** a wait shorter than this is the round trip to Temporal, not queueing */
const WAITED_MS = 250;
/** a 429/529 without Retry-After still pauses the provider this long */
const DEFAULT_PAUSE_MS = 5_000;

export interface Gate {
  stats: GovernorWaits;
  /** wall ms the rollout has spent waiting so far, including a wait in progress */
  unbilledMs(): number;
  pass(res: http.ServerResponse, body: Buffer, usage: { input: number; output: number }, go: () => void): void;
}

export function governorGate(gov: GovernorLike, holder: string): Gate {
  const stats: GovernorWaits = { requests: 0, waited: 0, waitMs: 0 };
  let waiting = 0;
  let since = 0;
  // tokens already attributed to a release: each reported token is counted once, whichever
  // concurrent request of the rollout it belonged to
  let attributed = -1;
  return {
    stats,
    unbilledMs: () => stats.waitMs + (waiting ? Date.now() - since : 0),
    pass(res, body, usage, go) {
      stats.requests++;
      if (attributed < 0) attributed = usage.input + usage.output;
      const t0 = Date.now();
      if (waiting++ === 0) since = t0;
      let closed = false;
      res.once('close', () => (closed = true));
      const head = watchHead(res);
      const done = () => {
        if (--waiting === 0) stats.waitMs += Date.now() - since;
        if (Date.now() - t0 >= WAITED_MS) stats.waited++;
      };
      void gov.admit(holder, estimateTokens(body)).then((adm) => {
        done();
        if (closed) return adm.release({ tokens: 0 }); // the agent gave up while waiting
        res.once('close', () => {
          const total = usage.input + usage.output;
          const used = total - attributed;
          attributed = total;
          adm.release({ ...(used > 0 || head.status >= 400 ? { tokens: Math.max(0, used) } : {}), ...pauseOf(head.status, head.retryAfter) });
        });
        go();
      });
    },
  };
}

/** ~4 bytes per token of the request body: the estimate the window holds until the release says. */
export function estimateTokens(body: Buffer): number {
  return Math.ceil(body.length / 4);
}

/** The status and Retry-After the relay answers the agent with (writeHead is where both pass). */
function watchHead(res: http.ServerResponse): { status: number; retryAfter?: string } {
  const seen: { status: number; retryAfter?: string } = { status: 0 };
  const orig = res.writeHead;
  res.writeHead = function (this: http.ServerResponse, code: number, ...rest: unknown[]) {
    seen.status = code;
    for (const h of rest) {
      if (h && typeof h === 'object' && !Array.isArray(h)) {
        for (const [k, v] of Object.entries(h as Record<string, unknown>)) if (k.toLowerCase() === 'retry-after') seen.retryAfter = String(v);
      }
    }
    const own = res.getHeader('retry-after');
    if (seen.retryAfter === undefined && own !== undefined) seen.retryAfter = String(own);
    return orig.call(this, code, ...(rest as []));
  } as typeof res.writeHead;
  return seen;
}

/** 429/529 → pause the provider for the upstream's Retry-After (seconds or an HTTP date). */
export function pauseOf(status: number, retryAfter: string | undefined, now = Date.now()): { pauseMs?: number } {
  if (status !== 429 && status !== 529) return {};
  if (retryAfter !== undefined) {
    const s = Number(retryAfter);
    if (Number.isFinite(s) && s >= 0) return { pauseMs: Math.round(s * 1000) };
    const at = Date.parse(retryAfter);
    if (Number.isFinite(at)) return { pauseMs: Math.max(0, at - now) };
  }
  return { pauseMs: DEFAULT_PAUSE_MS };
}
