import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SweepBook } from '../../src/workflows/sweep-book';
import { SweepInputSchema, type ResolvedTask, type RolloutSummary } from '../../src/model/sweep';

const tasks: ResolvedTask[] = [{ path: 'tasks/t1', dir: '/t1', id: 't1', hash: 'h', nodes: 1, maxScore: 1 }];
const input = (over: Record<string, unknown> = {}) => SweepInputSchema.parse({ name: 'b', tasks: ['tasks/t1'], agents: ['oracle'], repeats: 4, concurrency: 2, continueAsNewEvery: 3, ...over });
const done = (workflowId: string, state: RolloutSummary['state'] = 'completed'): RolloutSummary => ({ workflowId, rolloutKey: 'k', taskId: 't1', agent: 'oracle', model: 'none', repeat: 0, state, origin: 'this-sweep' });

test('starts up to the concurrency, settles once, continues as new after continueAsNewEvery and carries running ones over', () => {
  const b = new SweepBook(input(), 'sweep/b');
  b.plan(tasks);
  const first = b.toStart(false);
  assert.equal(first.length, 2);
  for (const e of first) b.starts(e);
  assert.equal(b.starting, 2);
  b.started();
  b.started();
  assert.deepEqual(b.toStart(false), [], 'no free lane');
  b.settle(first[0], done(first[0].item.workflowId));
  b.settle(first[0], done(first[0].item.workflowId, 'failed'));
  assert.equal(b.finishedThisRun, 1, 'a settled entry is not settled again');
  assert.equal(first[0].state, 'completed');
  assert.equal(b.toStart(false).length, 1);
  assert.equal(b.handOver(true), true, 'Temporal suggested it');
  const carry = b.carryOver();
  assert.equal(carry.run, 2);
  assert.deepEqual(carry.inflight.map((f) => f.workflowId), [first[1].item.workflowId]);
  assert.equal(carry.done.length, 1);
  // the next run: the carried entries are done / adopted, the rest pending
  const next = new SweepBook(input(), 'sweep/b', carry);
  next.plan(carry.tasks);
  assert.deepEqual(next.all().map((e) => e.state), ['completed', 'running', 'pending', 'pending']);
  assert.equal(next.running()[0].adopted, true);
});

test('lookup answers: reuse completed, adopt running, re-run cancelled; a poll that finds it gone makes it pending again', () => {
  const b = new SweepBook(input({ repeats: 3 }), 'sweep/b');
  b.plan(tasks);
  const [a, c, d] = b.all();
  b.existing({ workflowId: a.item.workflowId, state: 'completed', summary: done(a.item.workflowId) });
  b.existing({ workflowId: c.item.workflowId, state: 'running' });
  b.existing({ workflowId: d.item.workflowId, state: 'cancelled', summary: done(d.item.workflowId, 'cancelled') });
  assert.equal(a.state, 'completed');
  assert.equal(a.summary?.origin, 'earlier');
  assert.equal(c.adopted, true);
  assert.equal(d.state, 'pending');
  assert.equal(d.rerun, true);
  b.polled({ workflowId: c.item.workflowId, state: 'absent' });
  assert.equal(c.state, 'pending');
  assert.equal(b.dirty, true);
});

test('stop: drain starts nothing more and finishes when running ones end; cancel returns the running ones to cancel', () => {
  const b = new SweepBook(input(), 'sweep/b');
  b.plan(tasks);
  const [e] = b.toStart(false);
  b.starts(e);
  assert.deepEqual(b.stop({}), []);
  assert.equal(b.stopping, 'drain');
  assert.deepEqual(b.toStart(false), []);
  assert.equal(b.finished(), false);
  assert.deepEqual(b.stop({ cancelRunning: true }), [e]);
  assert.deepEqual(b.stop({}), [], 'cancel is final');
  b.settle(e, done(e.item.workflowId, 'cancelled'));
  assert.equal(b.finished(), true);
  const r = b.result('stopped');
  assert.equal(r.stopped, 'cancel');
  assert.equal(r.counts.cancelled, 1);
  assert.equal(r.counts.pending, 3);
});

test('cost cap: reused rollouts count, unknown costs count 0, the cap survives continue-as-new', () => {
  const b = new SweepBook(input({ repeats: 4, concurrency: 1, costCapUsd: 1 }), 'sweep/b');
  b.plan(tasks);
  const [a, c] = b.all();
  // an earlier submission's rollout (reused) of known cost, one of unknown cost
  b.existing({ workflowId: a.item.workflowId, state: 'completed', summary: { ...done(a.item.workflowId), costUsd: 0.6 } });
  b.existing({ workflowId: c.item.workflowId, state: 'completed', summary: { ...done(c.item.workflowId), costUsd: null, costReason: 'no price' } });
  assert.equal(b.spentUsd(), 0.6);
  const next = b.toStart(false);
  assert.equal(next.length, 1, 'under the cap: starts');
  b.starts(next[0]);
  b.started();
  b.settle(next[0], { ...done(next[0].item.workflowId), costUsd: 0.5 });
  assert.deepEqual(b.toStart(false), [], 'over the cap: nothing starts');
  const last = b.all()[3];
  assert.equal(last.state, 'cancelled');
  assert.equal(last.summary?.notRun, 'cost cap $1.00 reached after $1.10');
  assert.equal(b.finished(), true);
  assert.deepEqual(b.result('done').costCap, { capUsd: 1, spentUsd: 1.1, reached: true, notStarted: 1 });
  // handed over: the next run knows the not-run one and its reason
  const again = new SweepBook(b.input, 'sweep/b', b.carryOver());
  again.plan(tasks);
  assert.equal(again.all()[3].summary?.notRun, 'cost cap $1.00 reached after $1.10');
  assert.deepEqual(again.toStart(false), []);
});

test('no cost cap: costs are recorded, starts are not limited', () => {
  const b = new SweepBook(input({ repeats: 2, concurrency: 2 }), 'sweep/b');
  b.plan(tasks);
  const [a] = b.all();
  b.existing({ workflowId: a.item.workflowId, state: 'completed', summary: { ...done(a.item.workflowId), costUsd: 1e6 } });
  assert.equal(b.toStart(false).length, 1);
  assert.equal(b.result('done').costCap, undefined);
});
