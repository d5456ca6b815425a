/**
 * The relays' side of the rate governor: one ProviderGovernor per provider per worker process
 * asks the provider's governor workflow (src/workflows/governor.ts) for a lease before a model
 * request goes upstream, renews its leases while they stream, and releases them when they end.
 * The Temporal client is made on first use only: with no limits configured nothing here runs.
 */
import { randomUUID } from 'node:crypto';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { connectClient } from '../temporal/connection';
import { log } from '../log';
import { SaasbenchError } from '../errors';
import type { GovernorLimits, ReleaseRequest } from '../model/governor';
import { acquireUpdate, GOVERNOR_WORKFLOW, governorWorkflowId, releaseSignal, renewSignal } from './defs';

export interface GovernorTarget {
  /** a client (tests), or where to connect one (the worker) */
  client?: Client;
  address?: string;
  namespace?: string;
  /** the queue the governor workflows run on: the workers' shared queue */
  taskQueue: string;
}

/**
 * Rate limits apply but the process has no Temporal target for the governor workflows: the worker
 * never called configureGovernor. A retry in the same process fails the same way.
 */
export class GovernorConfigError extends SaasbenchError {
  static override readonly nonRetryable = true;
}

let target: GovernorTarget | undefined;
let connected: Promise<Client> | undefined;
const governors = new Map<string, ProviderGovernor>();

/** Where the governor workflows live; the worker calls this at start (src/worker/worker.ts). */
export function configureGovernor(t: GovernorTarget): void {
  target = t;
  connected = undefined;
  governors.clear();
}

function configured(): GovernorTarget {
  if (!target) throw new GovernorConfigError('rate governor: rate limits apply but no Temporal target is configured (configureGovernor, done by the worker at start)');
  return target;
}

function client(): Promise<Client> {
  const t = configured();
  connected ??= t.client ? Promise.resolve(t.client) : connectClient({ address: t.address!, namespace: t.namespace }).then((c) => c.client);
  connected.catch(() => (connected = undefined));
  return connected;
}

export interface Admission {
  leaseId: string | null;
  release(r: Omit<ReleaseRequest, 'leaseId'>): void;
}

/**
 * The process's governor handle for one provider (limits follow the latest caller's). Checks the
 * target now, in the activity that builds the gate: a missing one fails the attempt as
 * GovernorConfigError (not retried) instead of every request waiting a minute for no lease.
 */
export function providerGovernor(provider: string, limits: GovernorLimits): ProviderGovernor {
  configured();
  const g = governors.get(provider) ?? new ProviderGovernor(provider, limits);
  g.limits = limits;
  governors.set(provider, g);
  return g;
}

export class ProviderGovernor {
  private held = new Set<string>();
  private renewTimer: NodeJS.Timeout | undefined;
  constructor(
    readonly provider: string,
    public limits: GovernorLimits,
  ) {}

  private get workflowId(): string {
    return governorWorkflowId(this.provider);
  }

  /**
   * Wait for a lease. Temporal unreachable for a minute: the request goes without one (logged) —
   * the governor protects the provider's limits, it must not stop a sweep on its own.
   */
  async admit(holder: string, tokens: number): Promise<Admission> {
    const giveUpAt = Date.now() + 60_000;
    // one id for every retry of this ask: the governor answers a repeated one with the lease it granted
    const requestId = randomUUID();
    for (let attempt = 0; ; attempt++) {
      try {
        const c = await client();
        const answer = await c.workflow.executeUpdateWithStart(acquireUpdate, {
          args: [{ holder, tokens, limits: this.limits, requestId }],
          startWorkflowOperation: new WithStartWorkflowOperation(GOVERNOR_WORKFLOW, {
            workflowId: this.workflowId,
            taskQueue: configured().taskQueue,
            args: [{ provider: this.provider, limits: this.limits }],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        });
        if ('retry' in answer) continue; // the governor rolled over: the next run answers
        return this.lease(answer.leaseId);
      } catch (err) {
        if (err instanceof SaasbenchError && err.nonRetryable) {
          log.error({ provider: this.provider, err: err.message }, 'rate governor: request sent without a lease');
          return { leaseId: null, release: () => undefined };
        }
        if (Date.now() > giveUpAt) {
          log.warn({ provider: this.provider, err: (err as Error).message }, 'rate governor unreachable: request sent without a lease');
          return { leaseId: null, release: () => undefined };
        }
        await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)));
      }
    }
  }

  private lease(leaseId: string): Admission {
    this.held.add(leaseId);
    this.scheduleRenew();
    let released = false;
    return {
      leaseId,
      release: (r) => {
        if (released) return;
        released = true;
        this.held.delete(leaseId);
        this.signal(releaseSignal, { leaseId, ...r });
      },
    };
  }

  /** One renew signal for all the process's leases of this provider, every third of the TTL. */
  private scheduleRenew(): void {
    if (this.renewTimer) return;
    const every = ((this.limits.leaseTtlSeconds ?? 300) * 1000) / 3;
    this.renewTimer = setInterval(() => {
      if (!this.held.size) {
        clearInterval(this.renewTimer);
        this.renewTimer = undefined;
        return;
      }
      this.signal(renewSignal, { leaseIds: [...this.held] });
    }, every);
    this.renewTimer.unref();
  }

  private signal<A>(def: typeof releaseSignal | typeof renewSignal, arg: A): void {
    // a lost release costs a slot until the lease's TTL: logged, never thrown into the relay
    client()
      .then((c) => c.workflow.getHandle(this.workflowId).signal(def as never, arg as never))
      .catch((err: Error) => log.warn({ provider: this.provider, err: err.message }, 'rate governor: signal failed'));
  }
}
