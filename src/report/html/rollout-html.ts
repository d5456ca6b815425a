import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BACKBONES } from '../../scoring/backbone';
import { classifyRollout, DEFAULT_THRESHOLDS, type TaxonomyThresholds } from '../../scoring/taxonomy';
import type { ScoreCell, TaskScore } from '../../model/scores';
import { fmtUsd, type GatewayRunRecord } from '../../model/cost';
import { barSpec, renderChart } from './charts';
import { readTrajectoryInputs } from './trajectory-read';
import { trajectorySection } from './trajectory-section';
import { lineageSection, type LineageFields } from './lineage-section';
import { chartBox, esc, fmtMs, fmtPct, page, pctCell, statusBadge, table, taxonomyBadge } from './page';

/** The parts of a run folder's report.json (written by persistResults) this page reads. */
/** report.json as persisted: the rollout's identity and its TaskScore (status counts read back as plain JSON) */
export interface RolloutReportFile extends Omit<TaskScore, 'statusCounts'>, Omit<LineageFields, 'agentRun'> {
  workflowId: string;
  rolloutKey: string;
  task: string;
  agent: string;
  model: string;
  repeat: number;
  sweep: string;
  host: string;
  agentRun?: { exitReason: string; message: string; attempts?: number; agentSeconds?: number; gateway?: GatewayRunRecord } & LineageFields['agentRun'];
  statusCounts: Record<string, number>;
  timings?: { provisionMs: number; agentMs: number; evaluationMs: number; totalMs: number };
  finishedAt?: string;
}

interface StepRecord {
  index?: number;
  type: string;
  inputs?: unknown;
  passed?: boolean;
  message?: string;
  data?: unknown;
  durationMs?: number;
}
interface NodeRecordFile {
  nodeId: string;
  description?: string;
  status: string;
  score: number;
  maxScore: number;
  method: string;
  category: string;
  subcategory?: string;
  message?: string;
  durationMs?: number;
  steps?: StepRecord[];
  error?: unknown;
}

const IMAGE = /\.(png|jpe?g|gif|webp)$/i;
const MAX_JSON = 6000;

function json(v: unknown): string {
  if (v === undefined) return '';
  let s = JSON.stringify(v, null, 2) ?? '';
  if (s.length > MAX_JSON) s = `${s.slice(0, MAX_JSON)}\n… (${s.length - MAX_JSON} more characters in node_results.json)`;
  return `<pre>${esc(s)}</pre>`;
}

/** Image files a node left in artifacts/<nodeId>/ (screenshots of browser steps), as relative paths. */
function screenshotsOf(runDir: string, nodeId: string): string[] {
  const dir = join(runDir, 'artifacts', nodeId);
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const f of readdirSync(d).sort()) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p, `${rel}/${f}`);
      else if (IMAGE.test(f)) out.push(`${rel}/${f}`);
    }
  };
  walk(dir, `artifacts/${nodeId}`);
  return out;
}

const pct = (c: ScoreCell | undefined) => (c ? c.pct : null);
const orderedBackbones = (m: Record<string, ScoreCell>) =>
  Object.entries(m).sort(([a], [b]) => ((BACKBONES as readonly string[]).indexOf(a) + 99) % 99 - ((BACKBONES as readonly string[]).indexOf(b) + 99) % 99 || a.localeCompare(b));

/** Tokens, cost and the settings the gateway applied, as one meta row (nothing for agents without a model). */
function modelCallsRow(g: GatewayRunRecord | undefined): string {
  if (!g) return '';
  const u = g.usage;
  const price = g.price ? ` at $${g.price.inputPerMTok}/$${g.price.cachedInputPerMTok ?? '–'}/$${g.price.outputPerMTok} per MTok (input/cached/output, list price of ${g.price.asOf})` : '';
  const cost = `<b>${esc(fmtUsd(g.costUsd))}</b>${esc(price)}${g.costReason ? ` <span class="small">${esc(g.costReason)}</span>` : ''}`;
  const tokens = `${u.requests} answers · input ${u.input} (cached ${u.cachedInput}) · output ${u.output} (reasoning ${u.reasoning})`;
  const s = g.settings;
  const settings = s
    ? `applied at the gateway to ${s.requests} request(s): <code>${esc(JSON.stringify(s.applied))}</code>${Object.keys(s.overridden).length ? ` · overrode the agent's ${Object.entries(s.overridden).map(([k, o]) => `${esc(k)} (${o.count}×, sent ${esc(o.agentSent.map((v) => JSON.stringify(v)).join(', '))})`).join('; ')}` : ''}${s.notApplicable.length ? ` · not applicable: ${esc(s.notApplicable.join('; '))}` : ''}`
    : 'none';
  return `<dt>model cost</dt><dd>${cost}</dd>
<dt>model tokens</dt><dd>${esc(tokens)}</dd>
<dt>model settings</dt><dd>${settings}</dd>`;
}

/** The rollout's HTML report (written next to report.json as report.html; links are relative to the run folder). */
export async function renderRolloutHtml(runDir: string, th: TaxonomyThresholds = DEFAULT_THRESHOLDS): Promise<string> {
  const r = JSON.parse(readFileSync(join(runDir, 'report.json'), 'utf8')) as RolloutReportFile;
  const nodesFile = join(runDir, 'node_results.json');
  const nodes = existsSync(nodesFile) ? (JSON.parse(readFileSync(nodesFile, 'utf8')) as NodeRecordFile[]) : [];
  const bbPct = Object.fromEntries(BACKBONES.map((b) => [b, pct(r.byBackbone[b])]));
  const tax = classifyRollout(bbPct, th);

  const charts = [
    await renderChart(barSpec('Per backbone', orderedBackbones(r.byBackbone).map(([k, c]) => ({ label: k, value: c.pct })))),
    await renderChart(barSpec('Per category', Object.entries(r.byCategory).map(([k, c]) => ({ label: k, value: c.pct })), { color: '#72b7b2' })),
  ];
  // the agent's run, from trajectory.atif.json and the relay's files (trajectory-section.ts)
  const run = trajectorySection(readTrajectoryInputs(runDir), r.timings);
  if (run.timeline) charts.push(await renderChart(run.timeline));

  const out: string[] = [];
  out.push(`<h1>${esc(r.task)} · ${esc(r.agent)} · ${esc(r.model)} · repeat ${r.repeat}</h1>`);
  out.push(`<dl class="meta">
<dt>task score S<sub>t</sub></dt><dd><b>${fmtPct(r.overall.pct)}</b> (${r.overall.score}/${r.overall.maxScore}) · non-LLM subscore ${fmtPct(r.nonLlm.pct)} · judge maxScore dropped ${r.judgeDroppedMaxScore}</dd>
<dt>failure taxonomy</dt><dd>${taxonomyBadge(tax.label, tax.reason)} ${esc(tax.reason)}</dd>
<dt>workflow</dt><dd><code>${esc(r.workflowId)}</code> · sweep <code>${esc(r.sweep)}</code> · host <code>${esc(r.host)}</code></dd>
<dt>agent</dt><dd>${esc(r.agentRun?.exitReason ?? '–')} — ${esc(r.agentRun?.message ?? '')} · <a href="#agent-run">the agent's run</a></dd>
${modelCallsRow(r.agentRun?.gateway)}
<dt>timings</dt><dd>provision ${fmtMs(r.timings?.provisionMs)}, agent ${fmtMs(r.timings?.agentMs)}, evaluation ${fmtMs(r.timings?.evaluationMs)}, total ${fmtMs(r.timings?.totalMs)}</dd>
<dt>nodes</dt><dd>${Object.entries(r.statusCounts).map(([s, n]) => `${statusBadge(s)} ${n}`).join(' ')}</dd>
</dl>`);
  out.push(`<div class="charts">${charts.map(chartBox).join('')}</div>`);
  // host moves, fork links, snapshots, governor waits (nothing for a plain rollout)
  out.push(lineageSection(runDir, r));

  const cellRows = (m: Record<string, ScoreCell>) =>
    Object.entries(m).map(([k, c]) => [esc(k), pctCell(c.pct), `<td class="num">${c.score}</td>`, `<td class="num">${c.maxScore}</td>`, `<td class="num">${c.nodes}</td>`, `<td class="num">${c.passed}</td>`, `<td class="num">${c.failed}</td>`, `<td class="num">${c.skippedDependency}</td>`, `<td class="num">${c.skippedLlm}</td>`, `<td class="num">${c.error}</td>`]);
  const head = ['', 'pct', 'score', 'max', 'nodes', 'passed', 'failed', 'skip-dep', 'skip-llm', 'error'];
  out.push('<h2>By backbone</h2>', table(head, cellRows(Object.fromEntries(orderedBackbones(r.byBackbone)))));
  if (Object.keys(r.byTrajectory).length) out.push('<h2>By trajectory</h2>', table(head, cellRows(r.byTrajectory)));
  out.push('<h2>By category</h2>', table(head, cellRows(r.byCategory)));

  out.push(`<h2>Nodes (${nodes.length})</h2>`);
  out.push('<p class="small">Each node: its status and score, then every primitive that ran with its resolved inputs, outcome and evidence.</p>');
  for (const n of nodes) {
    const shots = screenshotsOf(runDir, n.nodeId);
    const steps = (n.steps ?? []).map(
      (s, i) => `<h3>${i + 1}. ${esc(s.type)} ${s.passed === undefined ? '' : statusBadge(s.passed ? 'PASSED' : 'FAILED')} <span class="small">${s.durationMs !== undefined ? `${s.durationMs} ms` : ''}</span></h3>
<div>${esc(s.message ?? '')}</div>
<div class="small">inputs</div>${json(s.inputs)}
${s.data !== undefined ? `<div class="small">evidence</div>${json(s.data)}` : ''}`,
    );
    out.push(`<details class="node" id="node-${esc(n.nodeId)}"><summary>${statusBadge(n.status)} <b>${esc(n.nodeId)}</b> · ${esc(n.category)}${n.subcategory ? `/${esc(n.subcategory)}` : ''} · ${esc(n.method)} · ${n.score}/${n.maxScore} <span class="msg">${esc((n.message ?? '').slice(0, 160))}</span></summary>
${n.description ? `<p>${esc(n.description)}</p>` : ''}
${steps.join('\n') || '<p class="small">no primitive ran (skipped)</p>'}
${n.error !== undefined ? `<div class="small">error</div>${json(n.error)}` : ''}
${shots.map((s) => `<div><img class="shot" loading="lazy" alt="${esc(s)}" src="${esc(s.split('/').map(encodeURIComponent).join('/'))}"></div>`).join('')}
</details>`);
  }
  out.push(run.html);
  return page(`saasbench ${r.task} ${r.agent} ${r.model} #${r.repeat}`, out.join('\n'));
}
