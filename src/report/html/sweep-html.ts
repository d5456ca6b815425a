import { pctOf, tasksLabel } from '../../scoring/benchmark';
import { TAXONOMY_MEANING } from '../../scoring/taxonomy';
import { TAXONOMY_LABELS } from '../../model/scores';
import type { SweepResult } from '../../model/sweep';
import { barSpec, groupedBarSpec, heatmapSpec, renderChart, taxonomySpec } from './charts';
import { COST_HEADER, costCells, configCosts, costLine, hasCost } from '../cost';
import { fmtUsd } from '../../model/cost';
import { chartBox, esc, fmtMs, fmtPct, page, pctCell, statusBadge, table, taxonomyBadge } from './page';

export const configLabel = (c: { agent: string; model: string }) => (c.model === 'none' ? c.agent : `${c.agent} / ${c.model}`);

/**
 * The sweep's HTML report: leaderboard, charts (leaderboard, per backbone, per category, per task,
 * failure taxonomy), tables, and every rollout with a link to its own report when one was written.
 */
export async function renderSweepHtml(r: SweepResult, links: Record<string, string> = {}): Promise<string> {
  const b = r.benchmark;
  const configs = b.configs;
  const series = configs.map(configLabel);

  const charts: string[] = [];
  if (configs.length) {
    charts.push(await renderChart(barSpec('Benchmark score (Pass@1)', configs.map((c) => ({ label: configLabel(c), value: c.score })))));
    const bb = b.backbones.filter((k) => configs.some((c) => c.byBackbone[k] !== null));
    charts.push(await renderChart(groupedBarSpec('Per backbone', configs.flatMap((c) => bb.map((k) => ({ group: k, series: configLabel(c), value: c.byBackbone[k] }))), 'backbone', bb)));
    if (b.categories.length) {
      charts.push(await renderChart(heatmapSpec('Per category', configs.flatMap((c) => b.categories.map((k) => ({ row: k, col: configLabel(c), value: c.byCategory[k] }))), 'category')));
    }
    charts.push(await renderChart(groupedBarSpec('Per task (mean over repeats)', configs.flatMap((c) => b.tasks.map((t) => ({ group: t, series: configLabel(c), value: c.byTask[t]?.mean ?? null }))), 'task')));
    charts.push(
      await renderChart(
        taxonomySpec(
          'Failure taxonomy (rollouts)',
          configs.flatMap((c) => [...TAXONOMY_LABELS, 'none' as const].map((l) => ({ series: configLabel(c), label: l, count: c.taxonomy[l] }))),
        ),
      ),
    );
  }

  const c = r.counts;
  const out: string[] = [];
  out.push(`<h1>Sweep ${esc(r.name)}</h1>`);
  out.push(`<p class="sub">${esc(r.input.description ?? '')}</p>`);
  out.push(`<dl class="meta">
<dt>workflow</dt><dd><code>${esc(r.workflowId)}</code>${r.runs > 1 ? ` (${r.runs} runs, continued as new)` : ''}</dd>
<dt>rollouts</dt><dd>${r.rollouts.length}/${Object.values(c).reduce((a, x) => a + x, 0)} finished — completed ${c.completed}, failed ${c.failed + c.timed_out}, cancelled ${c.cancelled + c.terminated}, not started ${c.pending}${r.stopped ? ` · <b>stopped (${esc(r.stopped)})</b>` : ''}</dd>
<dt>reused</dt><dd>${r.rollouts.filter((x) => x.origin === 'earlier').length} rollouts found finished from an earlier submission (not run again)</dd>
<dt>tasks</dt><dd>${r.tasks.map((t) => `${esc(t.id)} <span class="small">(${t.nodes} nodes, max ${t.maxScore})</span>`).join(', ')}</dd>
<dt>agents × models</dt><dd>${esc(series.join(', ') || '–')} · repeats ${r.input.repeats} · concurrency ${r.input.concurrency}</dd>
${costLine(r) ? `<dt>cost</dt><dd>${esc(costLine(r)!)}</dd>` : ''}
<dt>judge</dt><dd>${r.input.evaluation.judge.enabled ? esc(r.input.evaluation.judge.model) : 'disabled (llm-judge nodes are SKIPPED_LLM)'}</dd>
<dt>time</dt><dd>${esc(new Date(r.startedAt).toISOString())} → ${esc(new Date(r.finishedAt).toISOString())} (${fmtMs(r.finishedAt - r.startedAt)})</dd>
</dl>`);

  const costs = hasCost(r.rollouts) ? configCosts(r.rollouts, b) : null;
  out.push('<h2>Leaderboard</h2>');
  out.push(
    table(
      ['#', 'agent', 'model', 'score (Pass@1)', 'non-LLM', 'Best@k', '± repeats', 'tasks', 'rollouts', 'unscored', ...TAXONOMY_LABELS, ...(costs ? COST_HEADER : [])],
      configs.map((x) => [
        `<td class="num">${x.rank}</td>`,
        esc(x.agent),
        esc(x.model),
        pctCell(x.score),
        pctCell(x.nonLlm),
        pctCell(x.bestOfK),
        `<td class="num">${fmtPct(x.repeatStdev)}</td>`,
        `<td class="num">${tasksLabel(x, b.tasks.length)}${x.incomplete ? ` <span class="small" title="${esc(`missing: ${(x.missingTasks ?? []).join(', ')}`)}">incomplete</span>` : ''}</td>`,
        `<td class="num">${x.completed}/${x.rollouts}</td>`,
        `<td class="num">${x.unscored}</td>`,
        ...TAXONOMY_LABELS.map((l) => `<td class="num">${x.taxonomy[l] || ''}</td>`),
        ...(costs ? costCells(costs, x).map((v) => `<td class="num">${esc(v ?? '–')}</td>`) : []),
      ]),
      'leaderboard',
    ),
  );
  out.push(`<p class="small">${esc(b.rule)}.${costs ? ' Cost: gateway-metered USD at the registry\'s dated list prices (docs/gateway.md); $/point = cost per rollout ÷ score; * = rollouts of unknown cost left out.' : ''}</p>`);
  out.push(`<div class="charts">${charts.map(chartBox).join('')}</div>`);

  const matrix = (title: string, keys: string[], get: (x: (typeof configs)[number], k: string) => number | null) => {
    if (!keys.length || !configs.length) return;
    out.push(`<h2>${esc(title)}</h2>`);
    out.push(table(['', ...series], keys.map((k) => [esc(k), ...configs.map((x) => pctCell(get(x, k)))])));
  };
  matrix('Per backbone', b.backbones.filter((k) => configs.some((x) => x.byBackbone[k] !== null)), (x, k) => x.byBackbone[k]);
  matrix('Per trajectory', b.trajectories, (x, k) => x.byTrajectory[k]);
  matrix('Per category', b.categories, (x, k) => x.byCategory[k]);
  matrix('Per task (mean over repeats)', b.tasks, (x, k) => x.byTask[k]?.mean ?? null);

  out.push('<h2>Failure taxonomy</h2>');
  out.push(
    table(
      ['label', 'meaning', ...series],
      [...TAXONOMY_LABELS].map((l) => [taxonomyBadge(l), esc(TAXONOMY_MEANING[l]), ...configs.map((x) => `<td class="num">${x.taxonomy[l]}</td>`)]),
    ),
  );
  out.push('<h3>Per capability unit</h3>');
  out.push(
    table(
      ['label', 'meaning', ...series],
      [...TAXONOMY_LABELS, 'none' as const, 'notRun' as const].map((l) => [
        l === 'none' || l === 'notRun' ? esc(l === 'none' ? 'none' : 'not run') : taxonomyBadge(l),
        esc(l === 'none' ? 'no backbone scored' : l === 'notRun' ? 'no scored rollout' : TAXONOMY_MEANING[l]),
        ...configs.map((x) => `<td class="num">${x.units?.[l] ?? '–'}</td>`),
      ]),
    ),
  );
  out.push('<p class="small">the first table counts rollouts; this one counts capability units (task × agent × model), each labelled from the mean per-backbone percentages over its scored repeats (docs/scoring.md).</p>');
  out.push(`<p class="small">thresholds: weak &lt; ${r.input.taxonomy.weak}, strong ≥ ${r.input.taxonomy.strong} (percent within a backbone); rules in docs/scoring.md.</p>`);

  out.push('<h2>Rollouts</h2>');
  const sorted = [...r.rollouts].sort((a, z) => a.taskId.localeCompare(z.taskId) || a.agent.localeCompare(z.agent) || a.model.localeCompare(z.model) || a.repeat - z.repeat);
  out.push(
    table(
      ['task', 'agent', 'model', '#', 'state', 'score', 'non-LLM', ...b.backbones.slice(0, 6), 'taxonomy', 'host', 'time', ...(costs ? ['cost'] : []), 'report'],
      sorted.map((x) => [
        esc(x.taskId),
        esc(x.agent),
        esc(x.model),
        `<td class="num">${x.repeat}</td>`,
        `${statusBadge(x.state)}${x.notRun ? ` <span class="small">not run: ${esc(x.notRun)}</span>` : ''}${x.voided ? ' <span class="small">voided</span>' : ''}${x.origin === 'earlier' ? ' <span class="small">reused</span>' : ''}${x.error ? `<div class="small">${esc(x.error.slice(0, 200))}</div>` : ''}`,
        pctCell(x.score ? pctOf(x.score.overall) : null),
        pctCell(x.score ? pctOf(x.score.nonLlm) : null),
        ...b.backbones.slice(0, 6).map((k) => pctCell(x.score ? pctOf(x.score.byBackbone[k]) : null)),
        x.taxonomy ? `${taxonomyBadge(x.taxonomy.label, x.taxonomy.reason)} <span class="small">${esc(x.taxonomy.reason)}</span>` : '–',
        esc(x.host ?? '–'),
        `<td class="num">${fmtMs(x.durationMs)}</td>`,
        ...(costs ? [`<td class="num"${x.costReason ? ` title="${esc(x.costReason)}"` : ''}>${esc(fmtUsd(x.costUsd))}</td>`] : []),
        links[x.workflowId] ? `<a href="${esc(links[x.workflowId])}">report</a>` : '<span class="small">–</span>',
      ]),
    ),
  );
  return page(`saasbench sweep ${r.name}`, out.join('\n'));
}
