import type { Client, WorkflowHandle } from '@temporalio/client';
import type { RolloutProgress } from '../model/rollout';
import { costText, fmtSecs, rolloutStateLabel, sweepWorkflowId, type SweepProgress, type SweepResult, type SweepRolloutProgress } from '../model/sweep';
import { leaderboardText, sweepBenchmark } from '../report/sweep-export';
import { costLine } from '../report/cost';
import { connectClient } from '../temporal/connection';
import { temporalTarget } from './temporal-target';
import { InvalidInputError } from '../errors';
import { isServerUnreachable, resultRidingRestarts } from './follow';
import { sweepProgressQuery } from '../workflows/sweep';
import { progressQuery } from '../workflows/rollout';

/**
 * `saasbench watch <sweep>`: the sweep's progress query, plus each running rollout's own progress
 * query (phase, nodes evaluated), redrawn every few seconds until the sweep closes; then the
 * leaderboard. On a terminal the screen is redrawn; otherwise only changes are printed.
 */

export interface WatchOptions {
  out?: NodeJS.WritableStream;
  intervalMs?: number;
  /** print one snapshot and return */
  once?: boolean;
  /** redraw the screen (default: when `out` is a TTY) */
  redraw?: boolean;
  /** stop when this settles (the caller awaits the result itself) */
  until?: Promise<unknown>;
  /** most running rollouts to query for their phase each tick */
  maxRolloutQueries?: number;
}

export function sweepIdOf(nameOrId: string): string {
  return nameOrId.startsWith('sweep/') ? nameOrId : sweepWorkflowId(nameOrId);
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | null> {
  let t: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((r) => (t = setTimeout(() => r(null), ms)));
  try {
    return await Promise.race([p.catch(() => null), timeout]);
  } finally {
    clearTimeout(t);
  }
}

export interface Snapshot {
  progress: SweepProgress;
  phases: Record<string, RolloutProgress>;
}

export async function snapshot(client: Client, handle: WorkflowHandle, maxRolloutQueries = 24): Promise<Snapshot | null> {
  const progress = await withTimeout(handle.query(sweepProgressQuery), 5000);
  if (!progress) return null;
  const running = progress.rollouts.filter((r) => r.state === 'running').slice(0, maxRolloutQueries);
  const phases: Record<string, RolloutProgress> = {};
  await Promise.all(
    running.map(async (r) => {
      const p = await withTimeout(client.workflow.getHandle(r.workflowId).query(progressQuery), 3000);
      if (p) phases[r.workflowId] = p;
    }),
  );
  return { progress, phases };
}

const label = (r: SweepRolloutProgress) => `${r.taskId} · ${r.agent}${r.model === 'none' ? '' : `/${r.model}`} · #${r.repeat}`;

export function headerLine(p: SweepProgress): string {
  const c = p.counts;
  const done = c.completed + c.failed + c.cancelled + c.terminated + c.timed_out;
  const parts = [
    `sweep ${p.name}`,
    `${done}/${p.total} done (completed ${c.completed}${c.failed + c.timed_out ? `, failed ${c.failed + c.timed_out}` : ''}${c.cancelled + c.terminated ? `, cancelled ${c.cancelled + c.terminated}` : ''}${p.reused ? `, reused ${p.reused}` : ''})`,
    `running ${c.running}`,
    `pending ${c.pending}`,
  ];
  if (p.etaSeconds !== null && c.running + c.pending > 0) parts.push(`ETA ~${fmtSecs(p.etaSeconds)}`);
  const cost = costText(p);
  if (cost) parts.push(cost.slice(3));
  if (p.stopping) parts.push(`stopping (${p.stopping})`);
  if (p.run > 1) parts.push(`run ${p.run}`);
  return parts.join(' · ');
}

export function rolloutLine(r: SweepRolloutProgress, phase: RolloutProgress | undefined, now: number): string {
  let what: string = r.state;
  if (r.state === 'running') {
    if (phase) {
      what = `${phase.phase}${phase.nodesTotal ? ` ${phase.nodesDone}/${phase.nodesTotal} nodes` : ''}${phase.host ? ` @${phase.host}` : ''}`;
      // the agent phase's rate governor waits, once it has ended
      if (phase.governor?.waits) what += ` · governor waits ${phase.governor.waits} (${fmtSecs(Math.round(phase.governor.waitSeconds))})`;
    } else what = r.adopted ? 'running (adopted)' : 'running';
    if (r.startedAt) what += ` ${fmtSecs(Math.max(0, Math.round((now - r.startedAt) / 1000)))}`;
  } else if (r.state === 'completed') {
    what = `${rolloutStateLabel(r)} ${r.scorePct ?? '–'}${r.taxonomy ? ` ${r.taxonomy}` : ''}${r.origin === 'earlier' ? ' (reused)' : ''}`;
  } else if (r.notRun) what = rolloutStateLabel(r).slice(0, 100);
  else if (r.state !== 'pending') what = `${r.state}${r.error ? `: ${r.error.slice(0, 80)}` : ''}`;
  return `  ${label(r).padEnd(36)} ${what}`;
}

export function renderSnapshot(s: Snapshot): string {
  const p = s.progress;
  const lines = [headerLine(p)];
  const shown = p.rollouts.filter((r) => r.state !== 'pending');
  for (const r of shown) lines.push(rolloutLine(r, s.phases[r.workflowId], Date.now()));
  if (p.counts.pending) lines.push(`  … ${p.counts.pending} pending`);
  if (p.leaders.length) lines.push(`leaders: ${p.leaders.map((l) => `${l.agent}${l.model === 'none' ? '' : `/${l.model}`} ${l.score ?? '–'} (${l.declaredTasks !== undefined ? `${l.tasks}/${l.declaredTasks} tasks` : `${l.tasks} task${l.tasks === 1 ? '' : 's'}`})`).join(' · ')}`);
  return lines.join('\n');
}

/** Follow a sweep until it closes (or `until` settles); returns the last snapshot. */
export async function followSweep(client: Client, handle: WorkflowHandle, o: WatchOptions = {}): Promise<Snapshot | null> {
  const out = o.out ?? process.stderr;
  const redraw = o.redraw ?? !!(out as NodeJS.WriteStream).isTTY;
  let settled = false;
  o.until?.then(
    () => (settled = true),
    () => (settled = true),
  );
  const seen = new Map<string, string>();
  let lastHeader = '';
  let last: Snapshot | null = null;
  let away = false;
  for (;;) {
    const s = await snapshot(client, handle, o.maxRolloutQueries);
    if (s) {
      last = s;
      if (redraw) out.write(`\x1b[H\x1b[2J${renderSnapshot(s)}\n`);
      else {
        const h = headerLine(s.progress);
        if (h !== lastHeader) out.write(`${h}\n`);
        lastHeader = h;
        for (const r of s.progress.rollouts) {
          if (r.state === 'pending') continue;
          const phase = s.phases[r.workflowId];
          const key = `${r.state}|${phase?.phase ?? ''}`;
          if (seen.get(r.workflowId) === key) continue;
          seen.set(r.workflowId, key);
          out.write(`${rolloutLine(r, phase, Date.now())}\n`);
        }
      }
    }
    if (o.once || settled) return last;
    // a Temporal restart: say so once, keep following (the sweep goes on meanwhile)
    const d = await handle.describe().catch((err: unknown) => {
      if (isServerUnreachable(err) && !away) out.write('saasbench: Temporal server unreachable; retrying until it is back\n');
      away = away || isServerUnreachable(err);
      return null;
    });
    if (d) away = false;
    if (d && d.status.name !== 'RUNNING') return last;
    await Promise.race([new Promise((r) => setTimeout(r, o.intervalMs ?? 2000)), o.until?.catch(() => undefined) ?? new Promise(() => undefined)]);
  }
}

export async function watchCommand(nameOrId: string, o: { once?: boolean; interval?: number; asPaper?: boolean }): Promise<number> {
  const target = await temporalTarget(true);
  const { client, connection } = await connectClient(target);
  try {
    const handle = client.workflow.getHandle(sweepIdOf(nameOrId));
    const d = await handle.describe().catch((err: Error) => {
      if (err.name === 'WorkflowNotFoundError') throw InvalidInputError.one('command line', '<sweep>', `no sweep ${handle.workflowId} on ${target.address}`);
      throw err;
    });
    if (d.status.name === 'RUNNING') {
      await followSweep(client, handle, { once: o.once, intervalMs: (o.interval ?? 2) * 1000, out: process.stdout });
      if (o.once) return 0;
    }
    const final = await handle.describe();
    if (final.status.name === 'COMPLETED') printSweepResult(await resultRidingRestarts<SweepResult>(handle), process.stdout, { asPaper: o.asPaper });
    else process.stdout.write(`${handle.workflowId} is ${final.status.name.toLowerCase()}\n`);
    return 0;
  } finally {
    await connection.close();
  }
}

/** The end-of-sweep summary and leaderboard (recomputed over the declared tasks; `asPaper`: the paper's view). */
export function printSweepResult(r: SweepResult, out: NodeJS.WritableStream = process.stdout, o: { asPaper?: boolean } = {}): void {
  const c = r.counts;
  out.write(`\nsweep ${r.name}: completed ${c.completed}, failed ${c.failed + c.timed_out}, cancelled ${c.cancelled + c.terminated}, not started ${c.pending}${r.stopped ? ` (stopped: ${r.stopped})` : ''}\n\n`);
  out.write(`${leaderboardText(sweepBenchmark(r, o), r.rollouts)}\n`);
  const cost = costLine(r);
  if (cost) out.write(`\n${cost}\n`);
  if (r.reportDir) out.write(`\nreport: ${r.reportDir}/report.html${r.reportHost ? ` (host ${r.reportHost})` : ''}\n`);
}
