import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runDag } from '../../src/dag/run-dag';
import { topoOrder } from '../../src/dag/topo';
import { IncrementalPlan, type Baseline } from '../../src/evaluation/incremental';
import type { EvalPlan, PlanNode } from '../../src/model/rollout';
import type { NodeOutcome } from '../../src/model/scores';

const pn = (id: string, prereqs: string[] = [], extra: Partial<PlanNode> = {}): PlanNode => ({ id, prereqs, method: 'binary', maxScore: 1, category: 'API', subcategory: '', ...extra });
const out = (id: string, status: NodeOutcome['status'], exports = {}): NodeOutcome => ({ nodeId: id, status, score: status === 'PASSED' ? 1 : 0, maxScore: 1, method: 'binary', category: 'API', subcategory: '', message: '', exports, durationMs: 0 });

// A → B (B reads A's export), A → C, D alone, L runs last
const nodes = [pn('A'), pn('B', ['A']), pn('C', ['A']), pn('D'), pn('L', [], { runLast: true })];
const plan: EvalPlan = { taskId: 't', taskHash: 'h', nodes, order: topoOrder(nodes), trajectories: {} };
const hashes = { A: 'a1', B: 'b1', C: 'c1', D: 'd1', L: 'l1' };
const baseline = (): Baseline => ({
  source: 'rollout',
  versions: { primitives: 'p1', nodes: hashes },
  outcomes: new Map([out('A', 'PASSED', { id: 7 }), out('B', 'PASSED'), out('C', 'PASSED'), out('D', 'FAILED'), out('L', 'PASSED')].map((o) => [o.nodeId, o])),
});

/** run the DAG with an evaluate that answers from `now`, recording which nodes were really evaluated and with what context */
async function rescoreWith(inc: IncrementalPlan, now: Record<string, NodeOutcome>): Promise<{ calls: string[]; contexts: Record<string, unknown>; outcomes: NodeOutcome[] }> {
  const calls: string[] = [];
  const contexts: Record<string, unknown> = {};
  const outcomes = await runDag(plan, {
    parallelism: 2,
    evaluate: async (n, context) => {
      const why = inc.decide(n);
      if (why === null) return inc.reuse(n.id);
      calls.push(n.id);
      contexts[n.id] = context;
      inc.evaluatedAs(now[n.id], why);
      return now[n.id];
    },
    onOutcome: (o) => inc.observe(o),
    stalled: (m) => new Error(m),
  });
  return { calls, contexts, outcomes };
}

test('one changed definition re-evaluates that node only; the exports of an unchanged prereq reach it', async () => {
  const inc = new IncrementalPlan(baseline(), { primitives: 'p1', nodes: { ...hashes, B: 'b2' } }, false);
  assert.deepEqual(inc.definitionChanges(Object.keys(hashes)), ['B']);
  const r = await rescoreWith(inc, { B: out('B', 'FAILED') });
  assert.deepEqual(r.calls, ['B']);
  assert.deepEqual(r.contexts.B, { id: 7 }, 'A was reused, its recorded export is B context');
  assert.deepEqual(inc.evaluated, [{ nodeId: 'B', why: 'definition changed' }]);
  assert.deepEqual(inc.reused.sort(), ['A', 'C', 'D', 'L'], 'L runs last, but none of its predecessors changed');
});

test('a re-run node that comes out with another status or other exports drags its dependents along', async () => {
  const exportsOnly = new IncrementalPlan(baseline(), { primitives: 'p1', nodes: { ...hashes, A: 'a2' } }, false);
  const r1 = await rescoreWith(exportsOnly, { A: out('A', 'PASSED', { id: 8 }), B: out('B', 'PASSED'), C: out('C', 'PASSED'), L: out('L', 'PASSED') });
  assert.deepEqual(r1.calls.sort(), ['A', 'B', 'C']);
  assert.match(exportsOnly.evaluated.find((e) => e.nodeId === 'B')!.why, /predecessor changed: A/);

  const same = new IncrementalPlan(baseline(), { primitives: 'p1', nodes: { ...hashes, A: 'a2' } }, false);
  const r2 = await rescoreWith(same, { A: out('A', 'PASSED', { id: 7 }) });
  assert.deepEqual(r2.calls.sort(), ['A'], 'same status and exports: B and C keep their outcomes');

  const failed = new IncrementalPlan(baseline(), { primitives: 'p1', nodes: { ...hashes, A: 'a2' } }, false);
  const r3 = await rescoreWith(failed, { A: out('A', 'FAILED') });
  assert.deepEqual(r3.calls.sort(), ['A']);
  assert.equal(r3.outcomes.find((o) => o.nodeId === 'B')!.status, 'SKIPPED_DEPENDENCY', 'the scheduler skips dependents of a now-failing node');
});

test('a new primitive library version, an old lock without node hashes, or --full: every node', () => {
  for (const [b, now, full] of [
    [baseline(), { primitives: 'p2', nodes: hashes }, false],
    [{ ...baseline(), versions: { primitives: null, nodes: null } }, { primitives: 'p1', nodes: hashes }, false],
    [baseline(), { primitives: 'p1', nodes: hashes }, true],
  ] as const) {
    const inc = new IncrementalPlan(b, now, full);
    assert.equal(inc.definitionChanges(Object.keys(hashes)).length, 5);
    assert.notEqual(inc.decide(pn('D')), null);
  }
  assert.deepEqual(new IncrementalPlan(baseline(), { primitives: 'p1', nodes: hashes }, false).definitionChanges(Object.keys(hashes)), []);
});
