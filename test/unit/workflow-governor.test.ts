/**
 * The rate governor workflow on the time-skipping test server: concurrency slots, the sliding
 * RPM/TPM minute (with the release's real token count replacing the estimate), lease TTL expiry
 * and renewal, the provider-wide pause after a 429's Retry-After, and continue-as-new carrying
 * the leases to the next run. Time moves only by env.sleep, so each wait is exact.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { timeSkippingWithBundle } from '../helpers/temporal';
import { acquireUpdate, governorStateQuery, governorWorkflow, releaseSignal, renewSignal } from '../../src/workflows/governor';
import type { AcquireAnswer, GovernorInput, GovernorLimits } from '../../src/model/governor';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
before(async () => ({ env, bundle } = await timeSkippingWithBundle()));
after(async () => {
  await env?.teardown();
});

let n = 0;
async function withGovernor(input: Omit<GovernorInput, 'provider'>, body: (g: Gov) => Promise<void>): Promise<void> {
  const taskQueue = `gov-ts-${++n}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle });
  await worker.runUntil(async () => {
    const id = `saasbench-governor-test${n}`;
    const h = await env.client.workflow.start(governorWorkflow, { workflowId: id, taskQueue, args: [{ provider: `test${n}`, ...input }] });
    try {
      await body(new Gov(id, input.limits));
    } finally {
      await h.terminate().catch(() => undefined);
    }
  });
}

class Gov {
  constructor(
    readonly id: string,
    readonly limits: GovernorLimits,
  ) {}
  /** always the latest run (no run id): what the relays do across continue-as-new */
  get h(): WorkflowHandle {
    return env.client.workflow.getHandle(this.id);
  }
  async acquire(tokens = 10): Promise<{ leaseId: string; waitedMs: number }> {
    for (;;) {
      const a: AcquireAnswer = await this.h.executeUpdate(acquireUpdate, { args: [{ holder: 'r', tokens, limits: this.limits }] });
      if (!('retry' in a)) return a;
    }
  }
  release(leaseId: string, extra: { tokens?: number; pauseMs?: number } = {}) {
    return this.h.signal(releaseSignal, { leaseId, ...extra });
  }
  state() {
    return this.h.query(governorStateQuery);
  }
}

/** Is the promise still pending after `ms` of real time? (Workflow time does not move meanwhile.) */
async function pending(p: Promise<unknown>, ms = 400): Promise<boolean> {
  const marker = Symbol('pending');
  return (await Promise.race([p.then(() => null), new Promise((r) => setTimeout(() => r(marker), ms))])) === marker;
}

test('concurrency: the third ask waits for a release, and gets the freed slot', async () => {
  await withGovernor({ limits: { concurrent: 2 } }, async (g) => {
    const a = await g.acquire();
    const b = await g.acquire();
    assert.notEqual(a.leaseId, b.leaseId);
    const c = g.acquire();
    assert.equal(await pending(c), true);
    const s = await g.state();
    assert.equal(s.inFlight, 2);
    assert.equal(s.waiting, 1);
    await g.release(a.leaseId);
    const got = await c;
    assert.ok(got.leaseId);
    assert.equal((await g.state()).inFlight, 2);
  });
});

test('RPM: the third request of the minute waits until the first one ages out of the window', async () => {
  await withGovernor({ limits: { rpm: 2 } }, async (g) => {
    const a = await g.acquire();
    await g.release(a.leaseId);
    await env.sleep(10_000);
    const b = await g.acquire();
    await g.release(b.leaseId);
    const c = g.acquire();
    assert.equal(await pending(c), true, 'released leases still count in the minute');
    await env.sleep(55_000);
    // granted by the timer at the first request's 60 s, whatever the sleep overshoots
    const got = await c;
    assert.ok(got.waitedMs >= 49_000 && got.waitedMs <= 52_000, `waited ${got.waitedMs} ms of workflow time`);
  });
});

test('TPM: an ask that does not fit waits, and a release with the real (smaller) count lets it in', async () => {
  await withGovernor({ limits: { tpm: 100 } }, async (g) => {
    const a = await g.acquire(60);
    const b = g.acquire(60);
    assert.equal(await pending(b), true);
    assert.equal((await g.state()).windowTokens, 60);
    await g.release(a.leaseId, { tokens: 20 });
    const got = await b;
    assert.equal(got.waitedMs < 1000, true, 'admitted by the correction, not by time');
    assert.equal((await g.state()).windowTokens, 80);
  });
});

test('TTL: a lease nobody releases expires and frees its slot; a renewed one does not', async () => {
  await withGovernor({ limits: { concurrent: 1, leaseTtlSeconds: 30 } }, async (g) => {
    const a = await g.acquire();
    const b = g.acquire();
    assert.equal(await pending(b), true);
    await env.sleep(31_000);
    const got = await b;
    assert.ok(got.waitedMs >= 29_000, `waited ${got.waitedMs}`);
    assert.equal((await g.state()).expired, 1);
    // the expired holder's late release changes nothing (its lease is gone)
    await g.release(a.leaseId);
    assert.equal((await g.state()).inFlight, 1);
    // renewed every 20 s, b's lease outlives its 30 s TTL
    const c = g.acquire();
    for (let i = 0; i < 2; i++) {
      await env.sleep(20_000);
      await g.h.signal(renewSignal, { leaseIds: [got.leaseId] });
    }
    assert.equal(await pending(c), true, 'renewed: still held after 40 s');
    assert.equal((await g.state()).expired, 1);
    await env.sleep(31_000);
    await c;
    assert.equal((await g.state()).expired, 2);
  });
});

test('Retry-After: a 429 release pauses every ask of the provider for that long', async () => {
  await withGovernor({ limits: { concurrent: 5 } }, async (g) => {
    const a = await g.acquire();
    await g.release(a.leaseId, { pauseMs: 20_000 });
    const b = g.acquire();
    assert.equal(await pending(b), true);
    assert.ok((await g.state()).pausedUntil > 0);
    await env.sleep(21_000);
    const got = await b;
    assert.ok(got.waitedMs >= 19_000 && got.waitedMs < 22_000, `waited ${got.waitedMs}`);
  });
});

test('continue-as-new: the next run keeps the leases, and an old lease is released there', async () => {
  await withGovernor({ limits: { concurrent: 2 }, maxHistory: 40 }, async (g) => {
    const held = await g.acquire();
    for (let i = 0; i < 15; i++) {
      const x = await g.acquire();
      await g.release(x.leaseId);
      // the query returns once the release is applied: the time-skipping server stalls (~60 s) an
      // update that races a continue-as-new, where the real server hands it to the next run
      await g.state();
    }
    const s = await g.state();
    assert.ok(s.runs > 1, `expected a continue-as-new, runs=${s.runs}`);
    assert.equal(s.inFlight, 1, 'the held lease crossed into the new run');
    assert.equal(s.granted, 16);
    const other = await g.acquire();
    const third = g.acquire();
    assert.equal(await pending(third), true);
    await g.release(held.leaseId);
    assert.ok((await third).leaseId);
    assert.notEqual(other.leaseId, held.leaseId);
  });
});

test('an ask asked again with the same requestId (its answer lost in a rollover) gets the lease it holds, not a second one', async () => {
  await withGovernor({ limits: { concurrent: 2 } }, async (g) => {
    const ask = (requestId: string) => g.h.executeUpdate(acquireUpdate, { args: [{ holder: 'r', tokens: 10, limits: g.limits, requestId }] }) as Promise<AcquireAnswer>;
    const first = await ask('req-1');
    const again = await ask('req-1');
    assert.ok('leaseId' in first && 'leaseId' in again);
    assert.equal(again.leaseId, first.leaseId);
    const other = await ask('req-2');
    assert.ok('leaseId' in other && other.leaseId !== first.leaseId);
    const s = await g.state();
    assert.equal(s.granted, 2, 'granted once per request');
    assert.equal(s.inFlight, 2);
  });
});
