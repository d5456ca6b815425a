/**
 * The rollout page's "Agent run" section: the timeline of where the time went, the gateway's
 * requests (statuses, retries, governor waits), the attempts, and the turns (trajectory-html.ts).
 */
import type { GatewayLogEntry } from '../../model/gateway-log';
import { esc, fmtMs, table } from './page';
import { DEFAULT_VIEW, fmtUsd, renderTurns, trajectoryTotals, type TrajectoryViewOptions } from './trajectory-html';
import type { AttemptRow, TrajectoryInputs } from './trajectory-read';

type Spec = Record<string, unknown>;
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
export interface Timings {
  provisionMs: number;
  agentMs: number;
  evaluationMs: number;
  totalMs: number;
}
interface Segment {
  row: string;
  phase: string;
  start: number;
  end: number;
}

export const PHASE_COLORS: Record<string, string> = {
  provision: '#9ecae9',
  agent: '#4c78a8',
  evaluation: '#54a24b',
  'persist & other': '#bab0ac',
  'LLM (gateway)': '#f58518',
  'governor wait': '#e45756',
  'tools & agent-side': '#72b7b2',
  attempt: '#4c78a8',
  'attempt (failed)': '#e45756',
};
const ROWS = ['rollout', 'agent time (summed)', 'attempts', 'LLM calls (by time)'];

/** LLM time of one request: from arrival to end, less what the governor held it back. */
const llmMs = (e: GatewayLogEntry) => Math.max(0, e.ms - (e.waitMs ?? 0));

/**
 * The timeline's bars, in seconds from the rollout's start. The rollout row is the phases in order;
 * the agent row splits the agent phase into LLM, governor waits and the rest (tools, the agent's
 * own work) by summing the gateway log; the LLM-calls row places each request at its time
 * (requests closer than 1/800 of the run are merged, so a long run stays a few hundred bars).
 */
export function timelineSegments(t: Timings, gateway: GatewayLogEntry[] | null, history: AttemptRow[]): Segment[] {
  const s = (ms: number) => Math.round(ms) / 1000;
  const out: Segment[] = [];
  const P = t.provisionMs;
  const A = t.agentMs;
  const E = t.evaluationMs;
  out.push({ row: ROWS[0], phase: 'provision', start: 0, end: s(P) });
  out.push({ row: ROWS[0], phase: 'agent', start: s(P), end: s(P + A) });
  out.push({ row: ROWS[0], phase: 'evaluation', start: s(P + A), end: s(P + A + E) });
  if (t.totalMs > P + A + E) out.push({ row: ROWS[0], phase: 'persist & other', start: s(P + A + E), end: s(t.totalMs) });
  if (gateway && gateway.length) {
    const llm = Math.min(A, gateway.reduce((n, e) => n + llmMs(e), 0));
    const wait = Math.min(A - llm, gateway.reduce((n, e) => n + (e.waitMs ?? 0), 0));
    let at = P;
    for (const [phase, ms] of [['LLM (gateway)', llm], ['governor wait', wait], ['tools & agent-side', A - llm - wait]] as const) {
      if (ms > 0) out.push({ row: ROWS[1], phase, start: s(at), end: s(at + ms) });
      at += ms;
    }
    // requests by their own clock, the first one at the agent phase's start
    const t0 = Math.min(...gateway.map((e) => Date.parse(e.t)));
    const minGap = Math.max(1, t.totalMs / 800);
    const bars: Segment[] = [];
    for (const e of [...gateway].sort((a, b) => Date.parse(a.t) - Date.parse(b.t))) {
      const from = P + Date.parse(e.t) - t0;
      const parts: [string, number, number][] = [];
      if (e.waitMs) parts.push(['governor wait', from, from + e.waitMs]);
      parts.push(['LLM (gateway)', from + (e.waitMs ?? 0), from + e.ms]);
      for (const [phase, a, b] of parts) {
        const last = bars[bars.length - 1];
        if (last && last.phase === phase && a - last.end * 1000 <= minGap) last.end = Math.max(last.end, s(b));
        else bars.push({ row: ROWS[3], phase, start: s(a), end: s(b) });
      }
    }
    out.push(...bars);
  } else {
    out.push({ row: ROWS[1], phase: 'agent', start: s(P), end: s(P + A) });
  }
  if (history.length > 1) {
    let at = P;
    for (const h of history) {
      out.push({ row: ROWS[2], phase: h.exitReason === 'completed' ? 'attempt' : 'attempt (failed)', start: s(at), end: s(at + h.seconds * 1000) });
      at += h.seconds * 1000;
    }
  }
  return out;
}

/** Vega-Lite: one horizontal lane per row, bars from start to end, coloured by phase. */
export function timelineSpec(segments: Segment[]): Spec {
  const phases = Object.keys(PHASE_COLORS).filter((p) => segments.some((x) => x.phase === p));
  const rows = ROWS.filter((r) => segments.some((x) => x.row === r));
  return {
    title: 'Where the time went',
    width: 640,
    height: { step: 26 },
    data: { values: segments },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      y: { field: 'row', type: 'nominal', title: null, sort: rows, axis: { labelLimit: 200 } },
      x: { field: 'start', type: 'quantitative', title: 'seconds from the rollout start' },
      x2: { field: 'end' },
      color: { field: 'phase', type: 'nominal', title: 'phase', scale: { domain: phases, range: phases.map((p) => PHASE_COLORS[p]) } },
    },
  };
}

/** The relay's totals and its per-request log (capped to its first and last 50 lines). */
export function gatewayHtml(inp: TrajectoryInputs, cap = 50): string {
  const out: string[] = [];
  const r = inp.relay;
  if (r) {
    const codes = Object.entries(r.statusCounts ?? {}).map(([k, v]) => `${esc(k)}×${v}`).join(' ') || '—';
    out.push(`<p>relay: ${r.requests} requests · statuses ${codes} · upstream errors ${r.upstreamErrors ?? 0} · rejected ${r.rejected ?? 0} · translated ${r.translated ?? 0}${r.usage ? ` · metered tokens in ${r.usage.input} / out ${r.usage.output}` : ''}</p>`);
  }
  const g = inp.gateway;
  if (!g) {
    out.push('<p class="small">no gateway log (agent/gateway-log.jsonl): this run predates it or had no relay — LLM time, retries and governor waits per request are unknown.</p>');
    return out.join('');
  }
  const sum = (f: (e: GatewayLogEntry) => number) => g.reduce((n, e) => n + f(e), 0);
  const waits = g.filter((e) => (e.waitMs ?? 0) > 0);
  const costs = g.some((e) => e.costUsd !== undefined) ? sum((e) => e.costUsd ?? 0) : null;
  out.push(`<p>gateway log: ${g.length} model requests · LLM time ${fmtMs(sum(llmMs))} · retries ${sum((e) => e.retries ?? 0)} · governor waits ${waits.length} (${fmtMs(sum((e) => e.waitMs ?? 0))}) · non-2xx ${g.filter((e) => e.status < 200 || e.status >= 300).length} · cost ${fmtUsd(costs)}</p>`);
  const t0 = g.length ? Math.min(...g.map((e) => Date.parse(e.t))) : 0;
  const rowOf = (e: GatewayLogEntry, i: number) => [
    `<td class="num">${i + 1}</td>`,
    `<td class="num">+${fmtMs(Date.parse(e.t) - t0)}</td>`,
    `<td class="num">${fmtMs(e.ms)}</td>`,
    `<td class="num">${e.status}</td>`,
    esc(e.protocol),
    `<td class="num">${e.inTok}</td>`,
    `<td class="num">${e.outTok}</td>`,
    `<td class="num">${e.retries ?? '—'}</td>`,
    `<td class="num">${e.waitMs === undefined ? '—' : fmtMs(e.waitMs)}</td>`,
    `<td class="num">${fmtUsd(e.costUsd)}</td>`,
  ];
  const rows = g.length > 2 * cap ? [...g.slice(0, cap).map(rowOf), [`<td colspan="10" class="small">… ${g.length - 2 * cap} requests elided …</td>`], ...g.slice(g.length - cap).map((e, i) => rowOf(e, g.length - cap + i))] : g.map(rowOf);
  out.push(`<details class="more"><summary>requests${g.length > 2 * cap ? ` (first and last ${cap} of ${g.length})` : ''}</summary>${table(['#', 'at', 'took', 'status', 'protocol', 'in tok', 'out tok', 'retries', 'wait', 'cost'], rows)}</details>`);
  return out.join('');
}

/** The whole section (HTML) and the timeline's spec (null without timings). */
export function trajectorySection(inp: TrajectoryInputs, timings: Timings | undefined, view: TrajectoryViewOptions = DEFAULT_VIEW): { html: string; timeline: Spec | null } {
  const a = inp.atif;
  const history = a?.extra?.saasbench?.attempts ?? [];
  const out: string[] = ['<h2 id="agent-run">Agent run</h2>'];
  for (const p of inp.problems) out.push(`<p class="problem">${esc(p)}</p>`);
  if (a) {
    const t = trajectoryTotals(a);
    const sessions = a.extra?.session_ids ?? [a.session_id];
    out.push(`<dl class="meta">
<dt>agent</dt><dd>${esc(a.agent.name)} ${esc(a.agent.version)} · model ${esc(a.agent.model_name ?? '—')} · ${esc(a.schema_version)}</dd>
<dt>turns</dt><dd>${plural(t.turns, 'agent turn')} · ${plural(t.toolCalls, 'tool call')} · ${plural(a.steps.length, 'step')}</dd>
<dt>tokens</dt><dd>in ${t.inTok.toLocaleString('en-US')} (cached ${t.cachedTok.toLocaleString('en-US')}) · out ${t.outTok.toLocaleString('en-US')} · cost ${fmtUsd(t.costUsd)}</dd>
<dt>sessions</dt><dd>${sessions.map((x) => `<code>${esc(x)}</code>`).join(' ') || '—'}</dd>
</dl>`);
  }
  if (history.length) {
    out.push('<h3>Attempts</h3>', table(['attempt', 'ended', 'exit', 'time', 'why it ended / what followed'], history.map((h) => [`<td class="num">${h.attempt}</td>`, esc(h.exitReason), `<td class="num">${h.exitCode ?? '—'}</td>`, `<td class="num">${h.seconds}s</td>`, esc(h.transient ?? '')])));
  }
  out.push('<h3>Gateway</h3>', gatewayHtml(inp));
  out.push('<h3>Turns</h3>');
  out.push(a ? renderTurns(a, view) : '<p class="small">no trajectory.atif.json in this run folder (the agent wrote no transcript saasbench can read).</p>');
  return { html: out.join('\n'), timeline: timings ? timelineSpec(timelineSegments(timings, inp.gateway, history)) : null };
}
