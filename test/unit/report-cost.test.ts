// Cost in the reports (src/report/cost.ts): the leaderboard's cost per rollout and per score point,
// the CSV columns, the cost-cap line, the rollout page's model cost row — and none of it for sweeps
// without metered rollouts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { computeBenchmark } from '../../src/scoring/benchmark';
import { configCosts, costLine } from '../../src/report/cost';
import { leaderboardCsv, leaderboardText, sweepMarkdown } from '../../src/report/sweep-export';
import { renderSweepHtml } from '../../src/report/html/sweep-html';
import { renderRolloutHtml } from '../../src/report/html/rollout-html';
import { emptyCounts, SweepInputSchema, type RolloutSummary, type SweepResult } from '../../src/model/sweep';

let seq = 0;
function rollout(agent: string, pct: number, costUsd: number | null | undefined, over: Partial<RolloutSummary> = {}): RolloutSummary {
  const overall: [number, number] = [pct, 100];
  return {
    workflowId: `rollout/s/t${seq}/${agent}/m/0`,
    rolloutKey: `k${seq++}`,
    taskId: `t${seq}`,
    agent,
    model: 'm',
    repeat: 0,
    state: 'completed',
    origin: 'this-sweep',
    score: { overall, nonLlm: overall, judgeDroppedMaxScore: 0, byBackbone: {}, byCategory: {}, byTrajectory: {}, statusCounts: {} },
    ...(costUsd !== undefined ? { costUsd, costReason: costUsd === null ? 'no price for model "m"' : null } : {}),
    ...over,
  };
}

test('cost per rollout and per score point, per configuration; unknown costs left out and flagged', () => {
  // x: 2 tasks at 40 % and 60 % (score 50), $1 + $3; y: 80 %, $2, plus one of unknown cost
  const rs = [rollout('x', 40, 1), rollout('x', 60, 3), rollout('y', 80, 2), rollout('y', 80, null)];
  const b = computeBenchmark(rs);
  const costs = configCosts(rs, b);
  const x = costs.get(`x\u0000m`)!;
  assert.deepEqual(x, { totalUsd: 4, priced: 2, unpriced: 0, perRolloutUsd: 2, perPointUsd: 0.04 });
  const y = costs.get(`y\u0000m`)!;
  assert.deepEqual(y, { totalUsd: 2, priced: 1, unpriced: 1, perRolloutUsd: 2, perPointUsd: 0.025 });
  const text = leaderboardText(b, rs);
  assert.match(text.split('\n')[0], /cost\/rollout\s+\$\/point$/);
  assert.match(text, /\bx\b.*\$2\.00\s+\$0\.0400/);
  assert.match(text, /\by\b.*\$2\.00\*\s+\$0\.0250/);
  const csv = leaderboardCsv(b, rs).trim().split('\n');
  assert.match(csv[0], /,cost_total_usd,cost_per_rollout_usd,cost_per_point_usd,priced_rollouts,unpriced_rollouts$/);
  assert.ok(csv.some((l) => /^\d,y,m,.*,2,2,0\.025,1,1$/.test(l)), csv.join('\n'));
});

test('no metered rollout (oracle/noop): no cost columns, no cost line', () => {
  const rs = [rollout('oracle', 100, undefined)];
  const b = computeBenchmark(rs);
  assert.doesNotMatch(leaderboardText(b, rs), /cost/);
  assert.doesNotMatch(leaderboardCsv(b, rs), /cost/);
  assert.equal(costLine({ rollouts: rs, input: SweepInputSchema.parse({ name: 's', tasks: ['a'], agents: ['oracle'] }) }), null);
});

test('the sweep reports say what the cap did', async () => {
  const rs = [rollout('x', 50, 0.7), rollout('x', 50, 0.6), { ...rollout('x', 0, undefined), state: 'cancelled' as const, score: undefined, notRun: 'cost cap $1.00 reached after $1.30' }];
  const input = SweepInputSchema.parse({ name: 's', tasks: ['a'], agents: ['x'], models: ['m'], costCapUsd: 1 });
  const r: SweepResult = { name: 's', workflowId: 'sweep/s', startedAt: 0, finishedAt: 1000, runs: 1, stopped: null, counts: { ...emptyCounts(), completed: 2, cancelled: 1 }, tasks: [], rollouts: rs, benchmark: computeBenchmark(rs), reportDir: null, reportHost: null, input, costCap: { capUsd: 1, spentUsd: 1.3, reached: true, notStarted: 1 } };
  assert.equal(costLine(r), 'metered cost $1.30 · cost cap $1.00 reached after $1.30: 1 rollout(s) not started');
  assert.match(sweepMarkdown(r), /- cost: metered cost \$1\.30 · cost cap \$1\.00 reached/);
  const html = await renderSweepHtml(r);
  assert.match(html, /cost cap \$1\.00 reached after \$1\.30: 1 rollout\(s\) not started/);
  assert.match(html, /not run: cost cap \$1\.00 reached after \$1\.30/);
  assert.match(html, /<th>\$\/point<\/th>/);
});

test('the rollout page shows tokens, cost with its price date, and the settings applied at the gateway', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'report-cost-'));
  const cell = { pct: 50, score: 1, maxScore: 2, nodes: 1, passed: 0, failed: 1, skippedDependency: 0, skippedLlm: 0, error: 0 };
  const gateway = {
    usage: { requests: 3, input: 1200, cachedInput: 200, output: 90, reasoning: 10 },
    costUsd: 0.00426,
    costReason: null,
    price: { asOf: '2025-09-29', inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15, source: 'x' },
    settings: { appliedAt: 'gateway', requests: 3, otherModelRequests: 0, applied: { temperature: 0 }, overridden: { thinking: { count: 3, agentSent: [{ type: 'adaptive' }] } }, notApplicable: [] },
  };
  writeFileSync(join(dir, 'report.json'), JSON.stringify({ workflowId: 'w', rolloutKey: 'k', task: 't', agent: 'claude-code', model: 'm', repeat: 0, sweep: 's', host: 'h', agentRun: { exitReason: 'completed', message: 'ok', gateway }, overall: cell, nonLlm: cell, judgeDroppedMaxScore: 0, byBackbone: {}, byCategory: {}, byTrajectory: {}, statusCounts: {} }));
  const html = await renderRolloutHtml(dir);
  assert.match(html, /<dt>model cost<\/dt><dd><b>\$0\.0043<\/b> at \$3\/\$0\.3\/\$15 per MTok/);
  assert.match(html, /list price of 2025-09-29/);
  assert.match(html, /input 1200 \(cached 200\) · output 90 \(reasoning 10\)/);
  assert.match(html, /overrode the agent&#39;s thinking \(3×|overrode the agent's thinking \(3×/);
});
