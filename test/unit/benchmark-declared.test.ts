/**
 * The leaderboard over a sweep's declared task list (issue 12, items 5 and 7): a configuration
 * without a scored rollout for a declared task is incomplete ("n/N tasks") and ranked after the
 * complete rows; the as-paper view scores that task 0; taxonomy labels per capability unit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyUnit, computeBenchmark, pctOf } from '../../src/scoring/benchmark';
import { classifyRollout } from '../../src/scoring/taxonomy';
import { leaderboardCsv, leaderboardText, sweepBenchmark, sweepMarkdown, withBenchmark } from '../../src/report/sweep-export';
import { emptyCounts, SweepInputSchema, type Frac, type RolloutSummary, type SweepResult } from '../../src/model/sweep';
import { SweepBook } from '../../src/workflows/sweep-book';

let seq = 0;
function rollout(taskId: string, agent: string, repeat: number, overall: Frac, backbone: Record<string, Frac> = {}, over: Partial<RolloutSummary> = {}): RolloutSummary {
  const s: RolloutSummary = {
    workflowId: `rollout/s/${taskId}/${agent}/none/${repeat}`,
    rolloutKey: `k${seq++}`,
    taskId,
    agent,
    model: 'none',
    repeat,
    state: 'completed',
    origin: 'this-sweep',
    score: { overall, nonLlm: overall, judgeDroppedMaxScore: 0, byBackbone: backbone, byCategory: {}, byTrajectory: {}, statusCounts: {} },
    ...over,
  };
  if (s.score) s.taxonomy = classifyRollout(Object.fromEntries(Object.entries(s.score.byBackbone).map(([k, f]) => [k, pctOf(f)])));
  return s;
}
const failed = (taskId: string, agent: string, repeat = 0): RolloutSummary => ({
  workflowId: `rollout/s/${taskId}/${agent}/none/${repeat}`,
  rolloutKey: `k${seq++}`,
  taskId,
  agent,
  model: 'none',
  repeat,
  state: 'failed',
  origin: 'this-sweep',
  error: 'ImageMissingError: image "x" is not present locally',
  notRun: 'ImageMissingError: image "x" is not present locally',
});

// x scores a: 40, b: 40, c: 40 → 40 over 3/3 tasks; y scores a: 90, b: 90 and c failed to provision
const sweepRollouts = () => [
  rollout('a', 'x', 0, [4, 10]),
  rollout('b', 'x', 0, [4, 10]),
  rollout('c', 'x', 0, [4, 10]),
  rollout('a', 'y', 0, [9, 10]),
  rollout('b', 'y', 0, [9, 10]),
  failed('c', 'y'),
];

test('a declared task without a scored rollout: the row is incomplete ("2/3 tasks") and ranked after the complete rows', () => {
  const b = computeBenchmark(sweepRollouts(), { tasks: ['a', 'b', 'c'] });
  assert.deepEqual(b.configs.map((c) => c.agent), ['x', 'y'], 'y has the higher mean but stands on fewer tasks');
  const [x, y] = b.configs;
  assert.equal(x.incomplete, false);
  assert.equal(x.rank, 1);
  assert.equal(y.incomplete, true);
  assert.equal(y.rank, 2);
  assert.equal(y.score, 90, 'the default view averages the scored tasks');
  assert.deepEqual(y.missingTasks, ['c']);
  assert.equal(y.tasks, 2);
  assert.equal(y.declaredTasks, 3);
  const text = leaderboardText(b);
  const yLine = text.split('\n').find((l) => /\by\b.*none/.test(l) && l.includes('tasks'))!;
  assert.match(yLine, /2\/3 tasks/);
  assert.match(yLine, /incomplete/);
  assert.match(leaderboardCsv(b), /,2,3,true,c,/);
});

test('a declared task that never produced any rollout (not in the rollouts at all) still counts as missing', () => {
  const b = computeBenchmark([rollout('a', 'x', 0, [5, 10])], { tasks: ['a', 'd'] });
  assert.deepEqual(b.tasks, ['a', 'd']);
  assert.equal(b.configs[0].incomplete, true);
  assert.deepEqual(b.configs[0].missingTasks, ['d']);
  // without the declared list only the tasks seen are known: the row is complete
  assert.equal(computeBenchmark([rollout('a', 'x', 0, [5, 10])]).configs[0].incomplete, false);
});

test('--as-paper: a missing task scores 0 (mean over all declared tasks), rows ranked by score alone', () => {
  const b = computeBenchmark(sweepRollouts(), { tasks: ['a', 'b', 'c'], asPaper: true });
  assert.equal(b.asPaper, true);
  const y = b.configs.find((c) => c.agent === 'y')!;
  assert.equal(y.score, 60, '(90 + 90 + 0) / 3');
  assert.equal(y.nonLlm, 60);
  assert.equal(y.bestOfK, 60);
  assert.equal(y.incomplete, true, 'still flagged');
  assert.deepEqual(b.configs.map((c) => [c.agent, c.rank]), [['y', 1], ['x', 2]]);
  assert.match(b.rule, /counts 0/);
});

test('sweepBenchmark recomputes a result over its declared tasks; withBenchmark feeds the Markdown report', () => {
  const input = SweepInputSchema.parse({ name: 's', tasks: ['tasks/a', 'tasks/b', 'tasks/c'], agents: ['x', 'y'] });
  const r: SweepResult = {
    name: 's', workflowId: 'sweep/s', startedAt: 0, finishedAt: 1, runs: 1, stopped: null, counts: emptyCounts(),
    tasks: ['a', 'b', 'c'].map((id) => ({ path: `tasks/${id}`, dir: `/${id}`, id, hash: 'h', nodes: 1, maxScore: 10 })),
    rollouts: sweepRollouts(),
    // a result written before the declared-task rule: its stored leaderboard knows nothing of it
    benchmark: computeBenchmark([]), reportDir: null, reportHost: null, input,
  };
  assert.equal(sweepBenchmark(r).configs[1].incomplete, true);
  assert.equal(sweepBenchmark(r, { asPaper: true }).configs[0].score, 60);
  const md = sweepMarkdown(withBenchmark(r));
  assert.match(md, /\| 2 \| y \| none \| 90 \|.*\| 2\/3 tasks \|.*\| incomplete \|/);
  assert.match(md, /## Failure taxonomy per capability unit/);
});

test('the sweep book computes its result over the resolved (declared) tasks', () => {
  const tasks = ['a', 'b'].map((id) => ({ path: `tasks/${id}`, dir: `/${id}`, id, hash: 'h', nodes: 1, maxScore: 10 }));
  const book = new SweepBook(SweepInputSchema.parse({ name: 'b', tasks: ['tasks/a', 'tasks/b'], agents: ['x'] }), 'sweep/b');
  book.plan(tasks);
  const [ea, eb] = book.all();
  book.starts(ea);
  book.starts(eb);
  book.settle(ea, rollout('a', 'x', 0, [10, 10], {}, { workflowId: ea.item.workflowId }));
  book.settle(eb, { ...failed('b', 'x'), workflowId: eb.item.workflowId });
  const row = book.result('done').benchmark.configs[0];
  assert.equal(row.incomplete, true);
  assert.equal(`${row.tasks}/${row.declaredTasks}`, '1/2');
  assert.equal(row.units?.notRun, 1);
  assert.deepEqual(book.progress().leaders.map((l) => [l.tasks, l.declaredTasks]), [[1, 2]]);
});

test('capability-unit taxonomy: one label per (task, configuration) from the mean backbone percentages over repeats', () => {
  const solid = { Deploy: [10, 10], Data: [10, 10], AuthZ: [10, 10], API: [9, 10], Logic: [9, 10], Quality: [9, 10] } as Record<string, Frac>;
  const broken = { Deploy: [3, 10], Data: [10, 10], AuthZ: [10, 10], API: [9, 10], Logic: [9, 10], Quality: [9, 10] } as Record<string, Frac>;
  const rs = [
    // task a: T1 and T5 repeats → Deploy mean (100 + 30) / 2 = 65 ≥ 50, API etc. 90: only Deploy < 80 → T2
    rollout('a', 'x', 0, [1, 2], solid),
    rollout('a', 'x', 1, [1, 2], broken),
    // task b: two T1 repeats and one voided (every backbone zeroed) → Deploy mean 66.7, Data 66.7, … → T3
    rollout('b', 'x', 0, [1, 2], solid),
    rollout('b', 'x', 1, [1, 2], solid),
    rollout('b', 'x', 2, [0, 2], Object.fromEntries(Object.keys(solid).map((k) => [k, [0, 10] as Frac])), { voided: true }),
    // task c: only a failed rollout → not run
    failed('c', 'x'),
  ];
  assert.equal(classifyUnit([rs[0].score!, rs[1].score!]), 'T2');
  assert.equal(classifyUnit([]), 'notRun');
  const row = computeBenchmark(rs, { tasks: ['a', 'b', 'c', 'd'] }).configs[0];
  // per rollout: a → T1 + T5, b → T1, T1, T5 (voided: Deploy 0)
  assert.deepEqual({ T1: row.taxonomy.T1, T5: row.taxonomy.T5 }, { T1: 3, T5: 2 });
  assert.deepEqual(row.units, { T1: 0, T2: 1, T3: 1, T4: 0, T5: 0, none: 0, notRun: 2 });
  // the sweep's thresholds apply: with strong 60 task a's unit (Deploy 65, rest ≥ 90) is T1
  assert.equal(computeBenchmark(rs.slice(0, 2), { tasks: ['a'], thresholds: { weak: 50, strong: 60 } }).configs[0].units?.T1, 1);
});
