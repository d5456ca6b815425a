import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DagScheduler } from '../../src/dag/scheduler';
import type { EvalPlan, PlanNode } from '../../src/model/rollout';
import type { NodeOutcome } from '../../src/model/scores';
import { topoOrder } from '../../src/dag/topo';

const pn = (id: string, prereqs: string[] = []): PlanNode => ({ id, prereqs, method: 'binary', maxScore: 1, category: 'API', subcategory: '' });
const planOf = (nodes: PlanNode[]): EvalPlan => ({ taskId: 't', taskHash: 'h', nodes, order: topoOrder(nodes), trajectories: {} });
const done = (id: string, status: NodeOutcome['status'], exports = {}): NodeOutcome => ({ nodeId: id, status, score: status === 'PASSED' ? 1 : 0, maxScore: 1, method: 'binary', category: 'API', subcategory: '', message: '', exports, durationMs: 0 });

test('independent nodes are ready together up to the limit; dependents wait', () => {
  const s = new DagScheduler(planOf([pn('A'), pn('B'), pn('C'), pn('D', ['A'])]));
  assert.deepEqual(s.takeReady(2).map((n) => n.id), ['A', 'B']);
  assert.deepEqual(s.takeReady(5).map((n) => n.id), ['C']);
  s.complete(done('A', 'PASSED'));
  assert.deepEqual(s.takeReady(5).map((n) => n.id), ['D']);
});

test('a failed root cascades SKIPPED_DEPENDENCY through every descendant without running them', () => {
  const s = new DagScheduler(planOf([pn('ROOT'), pn('A', ['ROOT']), pn('B', ['A']), pn('C', ['B', 'X']), pn('X')]));
  assert.deepEqual(s.takeReady(10).map((n) => n.id), ['ROOT', 'X']);
  s.complete(done('ROOT', 'FAILED'));
  s.complete(done('X', 'PASSED'));
  const skipped = s.takeBlocked();
  assert.deepEqual(skipped.map((o) => [o.nodeId, o.status]), [['A', 'SKIPPED_DEPENDENCY'], ['B', 'SKIPPED_DEPENDENCY'], ['C', 'SKIPPED_DEPENDENCY']]);
  assert.match(skipped[0].message, /ROOT/);
  assert.equal(s.takeReady(10).length, 0);
  assert.ok(s.done());
});

test('context comes only from transitive prereqs, merged in topological order', () => {
  const s = new DagScheduler(planOf([pn('LOGIN'), pn('CREATE', ['LOGIN']), pn('SIBLING'), pn('USE', ['CREATE'])]));
  s.takeReady(10);
  s.complete(done('LOGIN', 'PASSED', { token: 't1', id: 'from-login' }));
  s.complete(done('SIBLING', 'PASSED', { leaked: true }));
  s.takeReady(10);
  s.complete(done('CREATE', 'PASSED', { id: 42 }));
  assert.deepEqual(s.contextFor('USE'), { token: 't1', id: 42 });
});

test('`after` nodes: the reader waits for them whatever their status and sees their captures; a prereq value wins', () => {
  const reader: PlanNode = { ...pn('READ', ['BASE']), after: ['MAKE_CART'] };
  const s = new DagScheduler(planOf([pn('BASE'), pn('MAKE_CART'), reader]));
  assert.deepEqual(s.takeReady(10).map((n) => n.id), ['BASE', 'MAKE_CART']);
  s.complete(done('BASE', 'PASSED', { shared: 'from-prereq' }));
  assert.deepEqual(s.takeReady(10).map((n) => n.id), [], 'MAKE_CART has not finished');
  s.complete(done('MAKE_CART', 'FAILED', { cart: 'c1', shared: 'from-after' }));
  assert.deepEqual(s.takeBlocked(), [], 'an after node that failed does not skip the reader');
  assert.deepEqual(s.takeReady(10).map((n) => n.id), ['READ']);
  assert.deepEqual(s.contextFor('READ'), { cart: 'c1', shared: 'from-prereq' });
});

test('runLast nodes wait until every other node has finished (skipped ones included)', () => {
  const last: PlanNode = { ...pn('CHANGE_PASSWORD'), runLast: true };
  const s = new DagScheduler(planOf([last, pn('A'), pn('B', ['A'])]));
  assert.deepEqual(s.takeReady(10).map((n) => n.id), ['A']);
  s.complete(done('A', 'FAILED'));
  s.takeBlocked();
  assert.deepEqual(s.takeReady(10).map((n) => n.id), ['CHANGE_PASSWORD']);
});

test('a prereq that is not a node never passes: its dependent is SKIPPED_DEPENDENCY, the run does not stall', () => {
  const s = new DagScheduler(planOf([pn('A'), pn('B', ['GONE'])]));
  const skipped = s.takeBlocked();
  assert.deepEqual(skipped.map((o) => [o.nodeId, o.status]), [['B', 'SKIPPED_DEPENDENCY']]);
  assert.match(skipped[0].message, /GONE/);
  assert.deepEqual(s.takeReady(5).map((n) => n.id), ['A']);
});
