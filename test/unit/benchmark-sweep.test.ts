import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { computeBenchmark, pctOf } from '../../src/scoring/benchmark';
import { classifyRollout } from '../../src/scoring/taxonomy';
import { leaderboardCsv, rolloutsCsv, rolloutsJsonl, sweepMarkdown } from '../../src/report/sweep-export';
import { loadSweepFile, validateSweep } from '../../src/cli/sweep';
import { repoRoot } from '../../src/paths';
import { InvalidInputError } from '../../src/errors';
import { describeSweep, emptyCounts, planSweep, SweepInputSchema, type Frac, type RolloutSummary, type SweepResult } from '../../src/model/sweep';
import { progressOf, type Entry } from '../../src/workflows/sweep-entries';
import { headerLine } from '../../src/cli/watch';

let seq = 0;
function rollout(taskId: string, agent: string, repeat: number, overall: Frac, backbone: Record<string, Frac> = {}, over: Partial<RolloutSummary> = {}): RolloutSummary {
  const s: RolloutSummary = {
    workflowId: `rollout/s/${taskId}/${agent}/none/${repeat}`,
    rolloutKey: `s.${taskId}.${agent}.none.${repeat}.${seq++}`,
    taskId,
    agent,
    model: 'none',
    repeat,
    state: 'completed',
    origin: 'this-sweep',
    score: { overall, nonLlm: overall, judgeDroppedMaxScore: 0, byBackbone: backbone, byCategory: { CRUD: overall }, byTrajectory: {}, statusCounts: {} },
    ...over,
  };
  if (s.score) s.taxonomy = classifyRollout(Object.fromEntries(Object.entries(s.score.byBackbone).map(([k, f]) => [k, pctOf(f)])));
  return s;
}

test('benchmark score: mean over repeats per task first, then the unweighted mean over tasks', () => {
  // task a (max 10): 50 %, 100 % → 75; task b (max 1000, must not dominate): 10 % → benchmark (75 + 10) / 2 = 42.5
  const b = computeBenchmark([rollout('a', 'x', 0, [5, 10]), rollout('a', 'x', 1, [10, 10]), rollout('b', 'x', 0, [100, 1000])]);
  const x = b.configs[0];
  assert.equal(x.score, 42.5);
  assert.equal(x.byTask.a.mean, 75);
  assert.deepEqual(x.byTask.a.repeats, [50, 100]);
  assert.equal(x.bestOfK, (100 + 10) / 2);
  assert.equal(x.tasks, 2);
  assert.equal(x.byCategory.CRUD, 42.5);
});

test('failed rollouts are counted, not averaged in; a backbone a task lacks is left out, not 0', () => {
  const b = computeBenchmark([
    rollout('a', 'x', 0, [8, 10], { Deploy: [1, 1], Data: [0, 4] }),
    rollout('b', 'x', 0, [2, 10], { Deploy: [0, 2] }),
    { ...rollout('a', 'x', 1, [0, 1]), state: 'failed', score: undefined, taxonomy: undefined, error: 'boom' },
  ]);
  const x = b.configs[0];
  assert.equal(x.score, 50);
  assert.equal(x.completed, 2);
  assert.equal(x.unscored, 1);
  assert.equal(x.byBackbone.Deploy, 50, '(100 + 0) / 2');
  assert.equal(x.byBackbone.Data, 0, 'only task a has Data');
  assert.equal(x.byBackbone.Logic, null, 'no task has Logic');
  assert.deepEqual(b.rollouts, { total: 3, completed: 2, unscored: 1 });
  assert.deepEqual(x.taxonomy, { T1: 0, T2: 0, T3: 0, T4: 1, T5: 1, none: 0 });
});

test('leaderboard order and ranks (ties share a rank); one row per (agent, model)', () => {
  const b = computeBenchmark([
    rollout('a', 'p', 0, [5, 10]),
    rollout('a', 'q', 0, [9, 10]),
    rollout('a', 'r', 0, [5, 10]),
    { ...rollout('a', 'q', 0, [1, 10]), model: 'm2' },
  ]);
  assert.deepEqual(b.configs.map((c) => [c.rank, c.agent, c.model, c.score]), [[1, 'q', 'none', 90], [2, 'p', 'none', 50], [2, 'r', 'none', 50], [4, 'q', 'm2', 10]]);
});

test('sweep input: defaults, agents with their own models, duplicates and unknown keys rejected with their path', () => {
  const input = SweepInputSchema.parse({ name: 'n', tasks: ['t1', { path: 't2' }], agents: ['oracle', { name: 'cc', models: ['m1', 'm2'] }], repeats: 2 });
  assert.equal(input.concurrency, 4);
  assert.deepEqual(input.budgets, { agentSeconds: 10_800, idleSeconds: 1_800, heartbeatSeconds: 30 });
  assert.equal(input.evaluation.judge.enabled, true);
  const tasks = [
    { path: 't1', dir: '/x/t1', id: 't1', hash: 'h', nodes: 1, maxScore: 1 },
    { path: 't2', dir: '/x/t2', id: 't2', hash: 'h', nodes: 1, maxScore: 1 },
  ];
  const plan = planSweep(input, tasks);
  assert.equal(plan.length, 2 * 3 * 2);
  assert.deepEqual(plan.slice(0, 3).map((p) => p.workflowId), ['rollout/n/t1/oracle/none/0', 'rollout/n/t1/cc/m1/0', 'rollout/n/t1/cc/m2/0']);
  assert.equal(plan[6].repeat, 1, 'repeat-major: every configuration once before any repeat');
  assert.equal(plan[0].rolloutKey, 'n.t1.oracle.none.0');

  assert.throws(
    () => validateSweep({ name: 'bad name', tasks: [], agents: ['a'], concurrency: 0, evaluation: { parallelism: 4, judge: { enabled: 'yes' } }, colour: 1 }, 's.yaml'),
    (e: unknown) => {
      assert.ok(e instanceof InvalidInputError);
      const paths = e.issues.map((i) => i.path).sort();
      assert.deepEqual(paths, ['colour', 'concurrency', 'evaluation.judge.enabled', 'name', 'tasks'].sort());
      assert.ok(e.issues.every((i) => i.file === 's.yaml'));
      return true;
    },
  );
  // duplicates are checked once the rest is well-formed
  assert.throws(
    () => validateSweep({ name: 'n', tasks: ['t', 'u', 't'], agents: ['a', { name: 'a' }], models: ['m', 'm'] }, 's.json'),
    (e: unknown) => {
      assert.deepEqual((e as InvalidInputError).issues.map((i) => `${i.path}: ${i.message}`), ['agents[1]: duplicate "a"', 'models[1]: duplicate "m"', 'tasks[2]: duplicate "t"']);
      return true;
    },
  );
});

test('the example sweep files (JSON and YAML) are valid and say the same', () => {
  const j = loadSweepFile(join(repoRoot(), 'examples', 'sweep.json'));
  const y = loadSweepFile(join(repoRoot(), 'examples', 'sweep.yaml'));
  assert.deepEqual(j.input, y.input);
  assert.equal(j.input.name, 'example');
});

test('exports: CSV, JSONL, Markdown and the UI details carry the numbers', () => {
  const rollouts = [rollout('a', 'x', 0, [5, 10], { Deploy: [1, 1] }), { ...rollout('a', 'y', 0, [0, 1]), state: 'failed' as const, score: undefined, taxonomy: undefined, error: 'it, "broke"' }];
  const benchmark = computeBenchmark(rollouts);
  const csv = leaderboardCsv(benchmark).split('\n');
  assert.match(csv[0], /^rank,agent,model,score,non_llm,/);
  assert.match(csv[1], /^1,x,none,50,50,/);
  const rcsv = rolloutsCsv(rollouts);
  assert.match(rcsv, /"it, ""broke"""/);
  const lines = rolloutsJsonl(rollouts).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 2);
  assert.equal(lines[0].score, 50);
  assert.equal(lines[0].backbone_Deploy, 100);
  const input = SweepInputSchema.parse({ name: 's', tasks: ['a'], agents: ['x', 'y'] });
  const result: SweepResult = { name: 's', workflowId: 'sweep/s', startedAt: 0, finishedAt: 1000, runs: 1, stopped: null, counts: { ...emptyCounts(), completed: 1, failed: 1 }, tasks: [], rollouts, benchmark, reportDir: null, reportHost: null, input };
  const md = sweepMarkdown(result);
  assert.match(md, /\| 1 \| x \| none \| 50 \|/);
  assert.match(md, /## Rollouts without a score/);
  const details = describeSweep({ name: 's', workflowId: 'sweep/s', run: 2, startedAt: 0, now: 1, total: 2, counts: { ...emptyCounts(), completed: 1, running: 1 }, reused: 0, concurrency: 2, stopping: null, avgRolloutSeconds: 10, etaSeconds: 75, rollouts: [], leaders: [{ agent: 'x', model: 'none', score: 50, tasks: 1 }] });
  assert.match(details, /run 2 \(continued as new\)/);
  assert.match(details, /ETA ~1m15s/);
  assert.match(details, /\| x \| none \| 50 \| 1 \|/);
});

test('progress: the metered cost so far (unknown costs left out) and the cap, in the watch header and the UI details', () => {
  const input = SweepInputSchema.parse({ name: 's', tasks: ['a'], agents: ['x'], repeats: 3, costCapUsd: 5 });
  const items = planSweep(input, [{ dir: '/a', id: 'a', path: 'a', hash: 'h', nodes: 1, maxScore: 2 }]);
  const done = (i: number, costUsd: number | null): Entry => ({
    item: items[i], state: 'completed', origin: 'this-sweep', startedAt: 0, finishedAt: 1000,
    summary: { workflowId: items[i].workflowId, rolloutKey: `k${i}`, taskId: 'a', agent: 'x', model: 'none', repeat: i, state: 'completed', origin: 'this-sweep', costUsd },
  });
  const none = progressOf({ input, workflowId: 'sweep/s', run: 1, startedAt: 0, stopping: null }, [{ item: items[0], state: 'pending', origin: 'this-sweep' }]);
  assert.equal(none.costUsd, null);
  assert.equal(headerLine(none).includes('cost'), false, 'no cost before any rollout has one');
  const p = progressOf({ input, workflowId: 'sweep/s', run: 1, startedAt: 0, stopping: null }, [done(0, 0.25), done(1, null), { item: items[2], state: 'running', origin: 'this-sweep', startedAt: 0 }]);
  assert.equal(p.costUsd, 0.25);
  assert.equal(p.costCapUsd, 5);
  assert.match(headerLine(p), / · cost \$0\.2500 of cap \$5\.00/);
  assert.match(describeSweep(p), /cancelled 0 · cost \$0\.2500 of cap \$5\.00/);
});
