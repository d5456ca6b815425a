import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scoreNode, weightedScore } from '../../src/scoring/node-score';
import { pyRound } from '../../src/scoring/py-round';
import { scoreTask } from '../../src/scoring/task-score';
import { backboneOf } from '../../src/scoring/backbone';
import type { NodeOutcome, NodeStatus } from '../../src/model/scores';
import type { Method } from '../../src/model/dag';

const o = (nodeId: string, status: NodeStatus, score: number, maxScore: number, category = 'API', method: Method = 'binary'): NodeOutcome => ({
  nodeId, status, score, maxScore, method, category, subcategory: '', message: '', exports: {}, durationMs: 0,
});

test('binary: all primitives pass -> maxScore; one failure -> 0; short chain (stopped early) -> 0', () => {
  assert.deepEqual(scoreNode({ method: 'binary', maxScore: 5, chainLength: 3, passes: [true, true, true] }), { status: 'PASSED', score: 5 });
  assert.deepEqual(scoreNode({ method: 'binary', maxScore: 5, chainLength: 3, passes: [true, false] }), { status: 'FAILED', score: 0 });
  assert.deepEqual(scoreNode({ method: 'binary', maxScore: 5, chainLength: 3, passes: [true, true] }), { status: 'FAILED', score: 0 });
});

test('weighted: passed/k * maxScore rounded to one decimal as Python round(x, 1) does', () => {
  // 2/3 * 4 = 2.666… -> 2.7 (round, not floor)
  assert.deepEqual(scoreNode({ method: 'weighted', maxScore: 4, chainLength: 3, passes: [true, false, true] }), { status: 'PASSED', score: 2.7 });
  // the example: 3 of 4 primitives on a 5-point node = round(3.75, 1) = 3.8 (a tie, to even)
  assert.equal(scoreNode({ method: 'weighted', maxScore: 5, chainLength: 4, passes: [true, true, true, false] }).score, 3.8);
  // 1/3 * 3 = 0.999999… in floating point must still be 1.0
  assert.equal(scoreNode({ method: 'weighted', maxScore: 3, chainLength: 3, passes: [true, false, false] }).score, 1);
  // 1/7 * 5 = 0.714… -> 0.7
  assert.equal(scoreNode({ method: 'weighted', maxScore: 5, chainLength: 7, passes: [true, false, false, false, false, false, false] }).score, 0.7);
  assert.deepEqual(scoreNode({ method: 'weighted', maxScore: 4, chainLength: 2, passes: [false, false] }), { status: 'FAILED', score: 0 });
  assert.equal(weightedScore(1, 8, 1), 0.1, 'round(0.125, 1): an exact tie goes to even');
});

test('pyRound matches Python round(x, 1) on half-way cases (values computed with CPython 3.11)', () => {
  const cases: [number, number][] = [
    [0.25, 0.2], [0.35, 0.3], [0.45, 0.5], [0.15, 0.1], [0.05, 0.1], [2.675, 2.7], [3.75, 3.8], [2.25, 2.2], [1.45, 1.4],
    [0.125, 0.1], [0.375, 0.4], [1 / 3, 0.3], [2 / 3, 0.7], [7.85, 7.8], [7.95, 8.0], [-0.25, -0.2], [-2.675, -2.7], [1e-20, 0], [5, 5], [123.45, 123.5], [0.1 + 0.2, 0.3],
  ];
  for (const [x, want] of cases) assert.equal(pyRound(x, 1), want, `round(${x}, 1)`);
  assert.equal(pyRound(2.675, 2), 2.67, 'round(2.675, 2): the double is below the tie');
  assert.equal(pyRound(0.125, 2), 0.12, 'round(0.125, 2): exact tie to even');
});

test('llm-judge: clipped to [0, maxScore]; skipped judge -> SKIPPED_LLM', () => {
  assert.deepEqual(scoreNode({ method: 'llm-judge', maxScore: 6, chainLength: 1, passes: [true], judge: { skipped: false, score: 9 } }), { status: 'PASSED', score: 6 });
  assert.deepEqual(scoreNode({ method: 'llm-judge', maxScore: 6, chainLength: 1, passes: [false], judge: { skipped: false, score: -2 } }), { status: 'FAILED', score: 0 });
  assert.deepEqual(scoreNode({ method: 'llm-judge', maxScore: 6, chainLength: 1, passes: [false], judge: { skipped: true } }), { status: 'SKIPPED_LLM', score: 0 });
  assert.equal(scoreNode({ method: 'llm-judge', maxScore: 6, chainLength: 2, passes: [true, true], judge: { skipped: false, score: 4.5 } }).score, 4.5);
});

test('an exception in the chain is ERROR with score 0', () => {
  assert.deepEqual(scoreNode({ method: 'weighted', maxScore: 4, chainLength: 3, passes: [true, true], errored: true }), { status: 'ERROR', score: 0 });
});

test('task score: SKIPPED_LLM leaves numerator and denominator; its maxScore is reported as dropped', () => {
  const s = scoreTask(
    [
      o('A', 'PASSED', 2, 2, 'Deployment'),
      o('B', 'PASSED', 2.6, 4, 'CRUD', 'weighted'),
      o('J', 'SKIPPED_LLM', 0, 10, 'Frontend', 'llm-judge'),
      o('K', 'PASSED', 3, 5, 'Frontend', 'llm-judge'),
    ],
    {},
  );
  // (2 + 2.6 + 3) / (2 + 4 + 5) = 7.6 / 11 = 69.09… -> 69.1; J's 10 points are out of both sums
  assert.equal(s.overall.score, 7.6);
  assert.equal(s.overall.maxScore, 11);
  assert.equal(s.overall.pct, 69.1);
  assert.equal(s.judgeDroppedMaxScore, 10);
  // non-LLM subscore: (2 + 2.6) / (2 + 4) = 76.666… -> 76.7
  assert.equal(s.nonLlm.pct, 76.7);
  assert.equal(s.byCategory.Frontend.maxScore, 5);
  assert.equal(s.byCategory.Frontend.skippedLlm, 1);
});

test('task score: a cascade of SKIPPED_DEPENDENCY scores 0 and keeps every maxScore in the denominator', () => {
  const s = scoreTask(
    [
      o('ROOT', 'FAILED', 0, 1, 'Deployment'),
      o('C1', 'SKIPPED_DEPENDENCY', 0, 4),
      o('C2', 'SKIPPED_DEPENDENCY', 0, 5),
      o('C3', 'SKIPPED_DEPENDENCY', 0, 10, 'RBAC'),
      o('OTHER', 'PASSED', 2, 2, 'Deployment'),
    ],
    { happy_path: ['ROOT', 'C1', 'OTHER'] },
  );
  // 2 / (1 + 4 + 5 + 10 + 2) = 2 / 22 = 9.09… -> 9.1
  assert.equal(s.overall.pct, 9.1);
  assert.equal(s.overall.skippedDependency, 3);
  assert.equal(s.byBackbone.AuthZ.maxScore, 10);
  assert.equal(s.byBackbone.Deploy.pct, 66.7);
  // trajectory uses the same rule over its own nodes: 2 / (1 + 4 + 2) = 28.57… -> 28.6
  assert.equal(s.byTrajectory.happy_path.pct, 28.6);
  assert.equal(s.statusCounts.SKIPPED_DEPENDENCY, 3);
});

test('ERROR counts as 0 with its maxScore kept; a task with only judge nodes skipped has pct null', () => {
  assert.equal(scoreTask([o('E', 'ERROR', 0, 3), o('P', 'PASSED', 1, 1)], {}).overall.pct, 25);
  assert.equal(scoreTask([o('J', 'SKIPPED_LLM', 0, 3, 'UI', 'llm-judge')], {}).overall.pct, null);
});

test('backbone mapping: exact names win over prefix rules, *CRUD is API, unknown is reported', () => {
  assert.equal(backboneOf('BusinessLogic_2FA'), 'AuthZ');
  assert.equal(backboneOf('BusinessLogic_SLA'), 'Logic');
  assert.equal(backboneOf('TaskCRUD'), 'API');
  assert.equal(backboneOf('API_GraphQL'), 'API');
  assert.equal(backboneOf('DataModel_Integrity'), 'Data');
  assert.equal(backboneOf('FrontendLayout'), 'Quality');
  assert.equal(backboneOf('Authorization_TenantIsolation'), 'AuthZ');
  assert.equal(backboneOf('Deployment'), 'Deploy');
  assert.equal(backboneOf('Astrology'), 'Unmapped');
});
