import { BACKBONES } from '../scoring/backbone';
import { computeBenchmark, pctOf, tasksLabel } from '../scoring/benchmark';
import { type BenchmarkReport } from '../model/benchmark';
import { TAXONOMY_LABELS } from '../model/scores';
import { rolloutStateLabel, type RolloutSummary, type SweepResult } from '../model/sweep';
import { mdTable, textTable } from './table';
import { COST_HEADER, configKey, costCells, configCosts, costLine, hasCost } from './cost';

/** Flat exports of a sweep: Markdown summary, CSV tables, JSONL of rollouts, a text leaderboard. */

const r1 = (x: number | null | undefined): number | null => (x === null || x === undefined ? null : Math.round(x * 10) / 10);

/**
 * The leaderboard of a sweep result, recomputed from its rollouts over its declared tasks (so a
 * result written before the declared-task rule still renders by it); `asPaper`: the paper's view,
 * a missing task scores 0.
 */
export function sweepBenchmark(r: Pick<SweepResult, 'rollouts' | 'tasks' | 'input'>, o: { asPaper?: boolean } = {}): BenchmarkReport {
  return computeBenchmark(r.rollouts, { tasks: r.tasks.map((t) => t.id), asPaper: o.asPaper, thresholds: r.input.taxonomy });
}

/** the same result with its leaderboard recomputed (what `report` and `watch` render) */
export function withBenchmark(r: SweepResult, o: { asPaper?: boolean } = {}): SweepResult {
  return { ...r, benchmark: sweepBenchmark(r, o) };
}

/** the leaderboard rows; with metered rollouts, cost per rollout and per score point (src/report/cost.ts) last */
function leaderboardRows(b: BenchmarkReport, rollouts: RolloutSummary[] = []): (string | number | null)[][] {
  const costs = hasCost(rollouts) ? configCosts(rollouts, b) : null;
  return b.configs.map((c) => [c.rank, c.agent, c.model, c.score, c.nonLlm, c.bestOfK, tasksLabel(c, b.tasks.length), `${c.completed}/${c.rollouts}`, c.incomplete ? 'incomplete' : '', ...TAXONOMY_LABELS.map((l) => c.taxonomy[l]), ...(costs ? costCells(costs, c) : [])]);
}
const LEADERBOARD_HEADER = ['#', 'agent', 'model', 'score', 'non-LLM', 'Best@k', 'tasks', 'rollouts', 'flag', ...TAXONOMY_LABELS];
const leaderboardHeader = (rollouts: RolloutSummary[] = []) => [...LEADERBOARD_HEADER, ...(hasCost(rollouts) ? COST_HEADER : [])];

export const UNIT_LABELS = [...TAXONOMY_LABELS, 'none', 'notRun'] as const;
const UNIT_HEADER = ['agent / model', ...TAXONOMY_LABELS, 'none', 'not run'];
/** capability-unit taxonomy counts: one label per (task, configuration) over its repeats */
function unitRows(b: BenchmarkReport): (string | number | null)[][] {
  return b.configs.map((c) => [`${c.agent} / ${c.model}`, ...UNIT_LABELS.map((l) => c.units?.[l] ?? null)]);
}

/** The leaderboard as an aligned text table (the CLI prints it at the end of a sweep). */
export function leaderboardText(b: BenchmarkReport, rollouts: RolloutSummary[] = []): string {
  if (!b.configs.length) return '(no rollouts)';
  const bb = b.backbones.filter((k) => b.configs.some((c) => c.byBackbone[k] !== null));
  return [
    textTable(leaderboardHeader(rollouts), leaderboardRows(b, rollouts)),
    '',
    textTable(['agent / model', ...bb], b.configs.map((c) => [`${c.agent} / ${c.model}`, ...bb.map((k) => c.byBackbone[k])])),
    '',
    'failure taxonomy per capability unit (task × agent × model over its repeats; the table above counts rollouts):',
    textTable(UNIT_HEADER, unitRows(b)),
    ...(b.asPaper ? ['', `(${b.rule})`] : []),
  ].join('\n');
}

export function sweepMarkdown(r: SweepResult): string {
  const b = r.benchmark;
  const names = b.configs.map((c) => `${c.agent} / ${c.model}`);
  const matrix = (keys: string[], get: (c: BenchmarkReport['configs'][number], k: string) => number | null) => mdTable(['', ...names], keys.map((k) => [k, ...b.configs.map((c) => get(c, k))]));
  const c = r.counts;
  const out = [
    `# Sweep ${r.name}`,
    '',
    `- workflow: \`${r.workflowId}\`${r.runs > 1 ? ` (${r.runs} runs, continued as new)` : ''}`,
    `- rollouts: completed ${c.completed}, failed ${c.failed + c.timed_out}, cancelled ${c.cancelled + c.terminated}, not started ${c.pending}${r.stopped ? ` — **stopped (${r.stopped})**` : ''}`,
    `- reused from an earlier submission: ${r.rollouts.filter((x) => x.origin === 'earlier').length}`,
    `- tasks: ${r.tasks.map((t) => t.id).join(', ')} · repeats ${r.input.repeats} · concurrency ${r.input.concurrency}`,
    `- judge: ${r.input.evaluation.judge.enabled ? r.input.evaluation.judge.model : 'disabled'}`,
    ...(costLine(r) ? [`- cost: ${costLine(r)}`] : []),
    '',
    '## Leaderboard',
    '',
    mdTable(leaderboardHeader(r.rollouts), leaderboardRows(b, r.rollouts)),
    '',
    `_${b.rule}._${hasCost(r.rollouts) ? ' Cost: gateway-metered USD at the registry\'s dated list prices; $/point = cost per rollout ÷ score; * = some rollouts of unknown cost left out._' : ''}`,
    '',
    '## Failure taxonomy per capability unit',
    '',
    mdTable(UNIT_HEADER, unitRows(b)),
    '',
    '## Per backbone',
    '',
    matrix(b.backbones.filter((k) => b.configs.some((x) => x.byBackbone[k] !== null)), (x, k) => x.byBackbone[k]),
  ];
  if (b.trajectories.length) out.push('', '## Per trajectory', '', matrix(b.trajectories, (x, k) => x.byTrajectory[k]));
  if (b.categories.length) out.push('', '## Per category', '', matrix(b.categories, (x, k) => x.byCategory[k]));
  out.push('', '## Per task (mean over repeats)', '', matrix(b.tasks, (x, k) => x.byTask[k]?.mean ?? null));
  const unscored = r.rollouts.filter((x) => x.state !== 'completed');
  if (unscored.length) {
    out.push('', '## Rollouts without a score', '', mdTable(['rollout', 'state', 'error'], unscored.map((x) => [x.workflowId, rolloutStateLabel(x).slice(0, 200), (x.error ?? '').slice(0, 200)])));
  }
  return out.join('\n') + '\n';
}

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
export function toCsv(header: string[], rows: unknown[][]): string {
  return [header, ...rows].map((r) => r.map(csvCell).join(',')).join('\n') + '\n';
}

export function leaderboardCsv(b: BenchmarkReport, rollouts: RolloutSummary[] = []): string {
  const costs = hasCost(rollouts) ? configCosts(rollouts, b) : null;
  const costOf = (c: BenchmarkReport['configs'][number]) => {
    const x = costs?.get(configKey(c));
    return x ? [x.totalUsd, x.perRolloutUsd, x.perPointUsd, x.priced, x.unpriced] : [];
  };
  const header = ['rank', 'agent', 'model', 'score', 'non_llm', 'best_of_k', 'repeat_stdev', 'tasks', 'declared_tasks', 'incomplete', 'missing_tasks', 'rollouts', 'completed', 'unscored', 'judge_dropped_max_score', ...b.backbones.map((k) => `backbone_${k}`), ...b.trajectories.map((k) => `trajectory_${k}`), ...TAXONOMY_LABELS, ...UNIT_LABELS.map((l) => `unit_${l}`), ...(costs ? ['cost_total_usd', 'cost_per_rollout_usd', 'cost_per_point_usd', 'priced_rollouts', 'unpriced_rollouts'] : [])];
  return toCsv(
    header,
    b.configs.map((c) => [c.rank, c.agent, c.model, c.score, c.nonLlm, c.bestOfK, c.repeatStdev, c.tasks, c.declaredTasks ?? b.tasks.length, c.incomplete ?? false, (c.missingTasks ?? []).join(' '), c.rollouts, c.completed, c.unscored, c.judgeDroppedMaxScore, ...b.backbones.map((k) => c.byBackbone[k]), ...b.trajectories.map((k) => c.byTrajectory[k]), ...TAXONOMY_LABELS.map((l) => c.taxonomy[l]), ...UNIT_LABELS.map((l) => c.units?.[l] ?? null), ...costOf(c)]),
  );
}

/** Long format: one row per (agent, model, group kind, group) — easy to pivot. */
export function groupsCsv(b: BenchmarkReport): string {
  const rows: unknown[][] = [];
  for (const c of b.configs) {
    for (const [kind, m] of [['backbone', c.byBackbone], ['category', c.byCategory], ['trajectory', c.byTrajectory]] as const) {
      for (const [k, v] of Object.entries(m)) rows.push([c.agent, c.model, kind, k, v]);
    }
    for (const [t, cell] of Object.entries(c.byTask)) rows.push([c.agent, c.model, 'task', t, cell.mean]);
  }
  return toCsv(['agent', 'model', 'kind', 'group', 'score'], rows);
}

export function rolloutFlat(x: RolloutSummary): Record<string, unknown> {
  const s = x.score;
  return {
    workflow_id: x.workflowId,
    task: x.taskId,
    agent: x.agent,
    model: x.model,
    repeat: x.repeat,
    state: x.state,
    origin: x.origin,
    score: s ? r1(pctOf(s.overall)) : null,
    non_llm: s ? r1(pctOf(s.nonLlm)) : null,
    score_points: s ? s.overall[0] : null,
    max_points: s ? s.overall[1] : null,
    judge_dropped_max_score: s ? s.judgeDroppedMaxScore : null,
    ...Object.fromEntries(BACKBONES.map((k) => [`backbone_${k}`, s ? r1(pctOf(s.byBackbone[k])) : null])),
    taxonomy: x.taxonomy?.label ?? null,
    taxonomy_reason: x.taxonomy?.reason ?? null,
    agent_exit: x.agentExit ?? null,
    host: x.host ?? null,
    duration_ms: x.durationMs ?? null,
    run_dir: x.runDir ?? null,
    error: x.error ?? null,
    not_run: x.notRun ?? null,
    voided: x.voided ?? false,
    cost_usd: x.costUsd ?? null,
    cost_reason: x.costReason ?? null,
  };
}

export function rolloutsCsv(rs: RolloutSummary[]): string {
  const flat = rs.map(rolloutFlat);
  const header = flat.length ? Object.keys(flat[0]) : Object.keys(rolloutFlat({ workflowId: '', rolloutKey: '', taskId: '', agent: '', model: '', repeat: 0, state: 'failed', origin: 'this-sweep' }));
  return toCsv(header, flat.map((f) => header.map((h) => f[h])));
}

/** One JSON object per line: the flat columns plus the full per-category/trajectory fractions. */
export function rolloutsJsonl(rs: RolloutSummary[]): string {
  return rs.map((x) => JSON.stringify({ ...rolloutFlat(x), summary: x })).join('\n') + (rs.length ? '\n' : '');
}
