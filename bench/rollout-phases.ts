/**
 * Where a rollout's wall time goes, read from its workflow history (no instrumentation in the
 * harness itself): for every activity, the time from being scheduled to being picked up by a worker
 * (scheduling latency) and from then to its completion (execution); the rest is the workflow's own
 * work between activities (workflow task round trips).
 */
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
type Event = temporal.api.history.v1.IHistoryEvent;

const ms = (t: Event['eventTime']): number => (t ? Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6) : 0);

export interface RolloutPhases {
  totalMs: number;
  /** execution time per activity type (summed over its calls, retries included) */
  execMs: Record<string, number>;
  /** scheduled → started, summed over every activity */
  schedulingMs: number;
  /** everything else: workflow tasks between activities, start and completion of the workflow */
  workflowMs: number;
  activities: number;
  startedAt: number;
  closedAt: number;
}

export function rolloutPhases(h: History): RolloutPhases {
  const events = h.events ?? [];
  const startedAt = ms(events[0]?.eventTime);
  const closedAt = ms(events[events.length - 1]?.eventTime);
  const scheduled = new Map<number, { type: string; at: number }>();
  const started = new Map<number, number>();
  const execMs: Record<string, number> = {};
  let schedulingMs = 0;
  const spans: [number, number][] = [];
  let activities = 0;
  for (const e of events) {
    const id = Number(e.eventId);
    const at = ms(e.eventTime);
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(id, { type: s.activityType?.name ?? '?', at });
    const st = e.activityTaskStartedEventAttributes;
    if (st) started.set(Number(st.scheduledEventId), at);
    const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
    if (done) {
      const sid = Number(done.scheduledEventId);
      const sch = scheduled.get(sid);
      const stAt = started.get(sid) ?? at;
      if (!sch) continue;
      activities++;
      schedulingMs += stAt - sch.at;
      execMs[sch.type] = (execMs[sch.type] ?? 0) + (at - stAt);
      spans.push([sch.at, at]);
    }
  }
  // parallel activities (DAG nodes, persist beside teardown) overlap: the workflow's share is the
  // wall time no activity covered
  const busy = covered(spans);
  return { totalMs: closedAt - startedAt, execMs, schedulingMs, workflowMs: Math.max(0, closedAt - startedAt - busy), activities, startedAt, closedAt };
}

/** Total length of the union of [from, to] spans. */
function covered(spans: [number, number][]): number {
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of [...spans].sort((x, y) => x[0] - y[0])) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

/** The mean over rollouts, and the mean gap between one rollout closing and the next starting (a serial sweep). */
export function meanPhases(all: RolloutPhases[]): { mean: RolloutPhases; gapMs: number } {
  const n = all.length || 1;
  const execMs: Record<string, number> = {};
  for (const p of all) for (const [k, v] of Object.entries(p.execMs)) execMs[k] = (execMs[k] ?? 0) + v / n;
  const sum = (f: (p: RolloutPhases) => number) => all.reduce((s, p) => s + f(p), 0) / n;
  const sorted = [...all].sort((a, b) => a.startedAt - b.startedAt);
  const gaps = sorted.slice(1).map((p, i) => p.startedAt - sorted[i].closedAt);
  return {
    mean: { totalMs: sum((p) => p.totalMs), execMs, schedulingMs: sum((p) => p.schedulingMs), workflowMs: sum((p) => p.workflowMs), activities: sum((p) => p.activities), startedAt: 0, closedAt: 0 },
    gapMs: gaps.length ? gaps.reduce((s, g) => s + g, 0) / gaps.length : 0,
  };
}
