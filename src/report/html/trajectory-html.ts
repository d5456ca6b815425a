/**
 * The agent's run as a person reads it, on the rollout page: every turn's text, its tool calls with
 * their (truncated, expandable) outputs, tokens and cost per turn, and where a retry or a resume
 * started a new attempt. Rendered from the ATIF file only (trajectory.atif.json), so Claude Code,
 * Codex and OpenHands runs look the same. Everything from the transcript is escaped: agent output
 * is hostile.
 *
 * Size: a 3-hour run has thousands of turns and megabytes of tool output. The page shows the first
 * `headTurns` and last `tailTurns` turns with a count of the elided ones, at most `outputMax`
 * characters of any one text, and stops expanding outputs once `budgetChars` of them are on the
 * page; the full record stays in trajectory.atif.json.
 */
import { esc } from './page';
import type { AtifFile, AtifFileStep, AttemptRow } from './trajectory-read';

export interface TrajectoryViewOptions {
  headTurns: number;
  tailTurns: number;
  /** characters of an output / message shown before "show all" */
  preview: number;
  /** characters of one output / message kept behind "show all" */
  outputMax: number;
  /** characters of expandable text on the whole page, after which outputs show their preview only */
  budgetChars: number;
}

export const DEFAULT_VIEW: TrajectoryViewOptions = { headTurns: 60, tailTurns: 40, preview: 600, outputMax: 16_000, budgetChars: 2_000_000 };

const fmtInt = (n: number | undefined) => (n === undefined ? '—' : n.toLocaleString('en-US'));
/** dollars: cents from $1 up; below, up to 4 decimals (a turn costs fractions of a cent) */
export const fmtUsd = (n: number | undefined | null) => (n === undefined || n === null ? '—' : `$${n >= 1 ? n.toFixed(2) : n.toFixed(4).replace(/0{1,2}$/, '')}`);

class Budget {
  constructor(public left: number) {}
}

/** A text shown as its first `preview` characters, the rest behind <details> (within the caps). */
export function clipped(text: string, o: TrajectoryViewOptions, budget: Budget, cls = ''): string {
  const c = cls ? ` class="${cls}"` : '';
  if (text.length <= o.preview) return `<pre${c}>${esc(text)}</pre>`;
  const head = text.slice(0, o.preview);
  const restAll = text.slice(o.preview);
  const lines = text.split('\n').length;
  if (budget.left <= 0) return `<pre${c}>${esc(head)}</pre><div class="small">… ${fmtInt(restAll.length)} more characters not shown (page size cap reached; full text in trajectory.atif.json)</div>`;
  const keep = Math.min(restAll.length, o.outputMax - o.preview, budget.left);
  budget.left -= keep;
  const cut = restAll.length - keep;
  return `<pre${c}>${esc(head)}</pre><details class="more"><summary>show all (${fmtInt(text.length)} characters, ${fmtInt(lines)} lines)</summary><pre${c}>${esc(restAll.slice(0, keep))}</pre>${
    cut > 0 ? `<div class="small">… ${fmtInt(cut)} more characters cut (full text in trajectory.atif.json)</div>` : ''
  }</details>`;
}

const attemptOf = (s: AtifFileStep): number => (typeof s.extra?.attempt === 'number' ? s.extra.attempt : 1);

/** How attempt `n` began and ended, from the supervisor's records (atif extra.saasbench.attempts). */
export function attemptMarker(n: number, history: AttemptRow[]): string {
  const prev = history.find((h) => h.attempt === n - 1);
  const self = history.find((h) => h.attempt === n);
  // the supervisor records a lost process as infrastructure with no exit code, then resumes its session
  const how = !prev ? 'first attempt' : prev.exitReason === 'infrastructure' && prev.exitCode === null ? 'resumed the session after the agent process was lost' : prev.transient ? `retry after a transient failure: ${prev.transient}` : 'new attempt';
  const kind = !prev ? 'start' : /^resumed/.test(how) ? 'resume' : 'retry';
  const end = self ? ` · ended ${self.exitReason}${self.exitCode !== null ? ` (exit ${self.exitCode})` : ''} after ${self.seconds}s` : '';
  return `<div class="attempt-mark am-${kind}"><b>attempt ${n}</b> — ${esc(how)}<span class="small">${esc(end)}</span></div>`;
}

function toolResults(s: AtifFileStep): Record<string, { exit_code?: number | null; is_error?: boolean }> {
  const tr = s.extra?.tool_results;
  return tr && typeof tr === 'object' ? (tr as Record<string, { exit_code?: number | null; is_error?: boolean }>) : {};
}

function stepTokens(s: AtifFileStep): string {
  const m = s.metrics;
  if (s.source !== 'agent') return '';
  const tok = m && (m.prompt_tokens !== undefined || m.completion_tokens !== undefined)
    ? `in ${fmtInt(m.prompt_tokens)}${m.cached_tokens ? ` (cached ${fmtInt(m.cached_tokens)})` : ''} · out ${fmtInt(m.completion_tokens)}`
    : 'tokens —';
  return `<span class="tok">${tok} · cost ${fmtUsd(m?.cost_usd)}</span>`;
}

/** One ATIF step as a block: header (source, tokens, cost), text, reasoning, tool calls with outputs. */
export function renderStep(s: AtifFileStep, o: TrajectoryViewOptions, budget: Budget): string {
  const out: string[] = [];
  const when = s.timestamp ? ` <span class="small">${esc(s.timestamp)}</span>` : '';
  out.push(`<div class="turn-h"><b>#${s.step_id}</b> <span class="badge src-${esc(s.source)}">${esc(s.source)}</span>${s.model_name ? ` <span class="small">${esc(s.model_name)}</span>` : ''} ${stepTokens(s)}${when}</div>`);
  if (s.message) out.push(clipped(s.message, o, budget, 'say'));
  if (s.reasoning_content) out.push(`<details class="more"><summary>reasoning (${fmtInt(s.reasoning_content.length)} characters)</summary>${clipped(s.reasoning_content, o, budget)}</details>`);
  const results = s.observation?.results ?? [];
  const exits = toolResults(s);
  const used = new Set<number>();
  for (const c of s.tool_calls ?? []) {
    const args = c.arguments;
    const cmd = typeof args.command === 'string' ? args.command : typeof args.cmd === 'string' ? args.cmd : typeof args.code === 'string' ? args.code : undefined;
    const x = exits[c.tool_call_id];
    const status = x ? ` ${x.is_error ? '<span class="badge st-FAILED">error</span>' : ''}${x.exit_code !== undefined && x.exit_code !== null ? ` <span class="small">exit ${x.exit_code}</span>` : ''}` : '';
    const shownArgs = cmd !== undefined ? clipped(cmd, o, budget, 'cmd') : clipped(JSON.stringify(args, null, 1), o, budget, 'cmd');
    const ri = results.findIndex((r, i) => !used.has(i) && r.source_call_id === c.tool_call_id);
    if (ri >= 0) used.add(ri);
    const output = ri >= 0 ? `<div class="small">output</div>${clipped(results[ri].content ?? '', o, budget, 'out')}` : '<div class="small">no output recorded</div>';
    out.push(`<div class="call"><div><span class="tool">${esc(c.function_name)}</span> <span class="small">${esc(c.tool_call_id)}</span>${status}</div>${shownArgs}${output}</div>`);
  }
  // results that name no call of this step (an agent whose observations stand alone)
  results.forEach((r, i) => {
    if (!used.has(i)) out.push(`<div class="call"><div class="small">observation${r.source_call_id ? ` for ${esc(r.source_call_id)}` : ''}</div>${clipped(r.content ?? '', o, budget, 'out')}</div>`);
  });
  return `<div class="turn src-${esc(s.source)}" id="step-${s.step_id}">${out.join('')}</div>`;
}

function elidedNote(steps: AtifFileStep[]): string {
  const calls = steps.reduce((n, s) => n + (s.tool_calls?.length ?? 0), 0);
  const tin = steps.reduce((n, s) => n + (s.metrics?.prompt_tokens ?? 0), 0);
  const tout = steps.reduce((n, s) => n + (s.metrics?.completion_tokens ?? 0), 0);
  const attempts = [...new Set(steps.map(attemptOf))];
  return `<div class="elided">… <b>${fmtInt(steps.length)} turns elided</b> (steps ${steps[0].step_id}–${steps[steps.length - 1].step_id}: ${fmtInt(calls)} tool calls, tokens in ${fmtInt(tin)} / out ${fmtInt(tout)}, attempt${attempts.length > 1 ? 's' : ''} ${attempts.join(', ')}) — the full list is in trajectory.atif.json …</div>`;
}

/** The turns, with attempt markers and the head/tail cap. */
export function renderTurns(a: AtifFile, o: TrajectoryViewOptions = DEFAULT_VIEW): string {
  const steps = a.steps;
  const history = a.extra?.saasbench?.attempts ?? [];
  const budget = new Budget(o.budgetChars);
  const capped = steps.length > o.headTurns + o.tailTurns;
  const shown = capped ? [...steps.slice(0, o.headTurns), null, ...steps.slice(steps.length - o.tailTurns)] : steps;
  const multi = new Set(steps.map(attemptOf)).size > 1 || history.length > 1;
  const out: string[] = [];
  let lastAttempt = 0;
  for (const s of shown) {
    if (s === null) {
      out.push(elidedNote(steps.slice(o.headTurns, steps.length - o.tailTurns)));
      continue;
    }
    const at = attemptOf(s);
    if (multi && at !== lastAttempt) out.push(attemptMarker(at, history));
    lastAttempt = at;
    out.push(renderStep(s, o, budget));
  }
  const cap = capped ? `showing the first ${o.headTurns} and last ${o.tailTurns} of ${steps.length} turns; ` : '';
  return `<p class="small">${cap}outputs show ${o.preview} characters, up to ${fmtInt(o.outputMax)} behind "show all", and expand no further once ${fmtInt(o.budgetChars)} characters of them are on the page.</p>${out.join('\n')}`;
}

/** Totals over the trajectory (final_metrics, or the steps' own numbers). */
export function trajectoryTotals(a: AtifFile): { turns: number; toolCalls: number; inTok: number; outTok: number; cachedTok: number; costUsd: number | null } {
  const agentSteps = a.steps.filter((s) => s.source === 'agent');
  const f = a.final_metrics;
  const stepCost = agentSteps.some((s) => s.metrics?.cost_usd !== undefined) ? agentSteps.reduce((n, s) => n + (s.metrics?.cost_usd ?? 0), 0) : null;
  return {
    turns: agentSteps.length,
    toolCalls: agentSteps.reduce((n, s) => n + (s.tool_calls?.length ?? 0), 0),
    inTok: f?.total_prompt_tokens ?? agentSteps.reduce((n, s) => n + (s.metrics?.prompt_tokens ?? 0), 0),
    outTok: f?.total_completion_tokens ?? agentSteps.reduce((n, s) => n + (s.metrics?.completion_tokens ?? 0), 0),
    cachedTok: f?.total_cached_tokens ?? agentSteps.reduce((n, s) => n + (s.metrics?.cached_tokens ?? 0), 0),
    costUsd: f?.total_cost_usd ?? stepCost,
  };
}
