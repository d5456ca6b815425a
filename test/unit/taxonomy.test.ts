import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyRollout, DEFAULT_THRESHOLDS } from '../../src/scoring/taxonomy';

const all = (x: number) => ({ Deploy: x, Data: x, API: x, Logic: x, AuthZ: x, Quality: x });

test('T5: Deploy below the weak threshold, whatever else scored', () => {
  assert.equal(classifyRollout({ ...all(100), Deploy: 49.9 }).label, 'T5');
  assert.equal(classifyRollout(all(0)).label, 'T5');
  assert.match(classifyRollout({ ...all(90), Deploy: 0 }).reason, /Deploy 0 < 50/);
});

test('T5 without Deploy nodes: every present backbone weak', () => {
  assert.equal(classifyRollout({ Data: 10, API: 20, Deploy: null }).label, 'T5');
  assert.equal(classifyRollout({ Data: 10, API: 60 }).label, 'T4', 'Data weak, API not: a foundation problem');
});

test('T4: runnable, but Data or AuthZ weak', () => {
  assert.equal(classifyRollout({ ...all(100), Data: 30 }).label, 'T4');
  assert.equal(classifyRollout({ ...all(100), AuthZ: 0 }).label, 'T4');
  assert.match(classifyRollout({ ...all(100), Data: 30, AuthZ: 10 }).reason, /Data 30 < 50, AuthZ 10 < 50/);
});

test('T1 / T2 / T3 by the number of backbones below strong, once the foundations hold', () => {
  assert.equal(classifyRollout(all(80)).label, 'T1');
  assert.equal(classifyRollout({ ...all(100), Quality: 79.9 }).label, 'T2');
  assert.match(classifyRollout({ ...all(100), Quality: 0 }).reason, /only Quality 0 < 80/);
  assert.equal(classifyRollout({ ...all(100), Deploy: 60 }).label, 'T2', 'a shaky but working deploy is a single bottleneck');
  assert.equal(classifyRollout({ ...all(100), Logic: 40, Quality: 70 }).label, 'T3');
  assert.equal(classifyRollout({ ...all(60) }).label, 'T3');
});

test('absent backbones are left out; nothing scored → no label', () => {
  assert.equal(classifyRollout({ Deploy: 100, API: 100, Quality: 23.6 }).label, 'T2');
  assert.equal(classifyRollout({ Deploy: 100, Data: 100, AuthZ: 100, Logic: 73.3, API: 100, Quality: 0 }).label, 'T3');
  assert.deepEqual(classifyRollout({}), { label: null, reason: 'no backbone has a score' });
  assert.equal(classifyRollout({ Unmapped: 0, Deploy: 100 }).label, 'T1', 'Unmapped is not a backbone');
});

test('thresholds are parameters', () => {
  assert.deepEqual(DEFAULT_THRESHOLDS, { weak: 50, strong: 80 });
  assert.equal(classifyRollout({ ...all(100), Deploy: 60 }, { weak: 70, strong: 90 }).label, 'T5');
  assert.equal(classifyRollout(all(85), { weak: 50, strong: 90 }).label, 'T3');
});
