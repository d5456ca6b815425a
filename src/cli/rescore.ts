import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { config } from '../config';
import { log } from '../log';
import { InvalidInputError } from '../errors';
import { rescore, type RescoreResult } from '../evaluation/rescore';
import { readJsonIfExists } from '../runs/files';
import { sweepReportDir } from '../activities/sweep-report';
import type { SweepResult } from '../model/sweep';
import { textTable } from '../report/table';

/** The run folders to re-score: one rollout (folder or key), or every completed rollout of a sweep (folder or name). */
function targets(arg: string): { sweep: string | null; dirs: string[] } {
  const candidates = [resolve(arg), join(config.runsDir(), arg), sweepReportDir(arg)];
  for (const dir of candidates) {
    if (existsSync(join(dir, 'rollout.json'))) return { sweep: null, dirs: [dir] };
    const sweep = readJsonIfExists<SweepResult>(join(dir, 'sweep.json'));
    if (sweep) return { sweep: sweep.name, dirs: sweep.rollouts.filter((r) => r.state === 'completed' && r.runDir && existsSync(join(r.runDir, 'workspace.tar.gz'))).map((r) => r.runDir!) };
  }
  throw InvalidInputError.one(arg, '', 'neither a rollout (run folder or key) nor a sweep (runs/sweeps/<name> or its name)');
}

/**
 * `saasbench rescore <rollout | sweep>`: re-evaluate what changed since the last scoring (every node
 * with --full). Exit 0 when no status changed anywhere, 3 when something did.
 */
export async function rescoreCommand(arg: string, opts: { json?: boolean; full?: boolean }): Promise<number> {
  const t = targets(arg);
  const results: RescoreResult[] = [];
  const w = (l = '') => process.stdout.write(`${l}\n`);
  for (const dir of t.dirs) {
    const r = await rescore(dir, log.child({ rescore: dir }), { full: opts.full });
    results.push(r);
    if (!opts.json) print(r, w);
  }
  if (opts.json) {
    const rows = results.map((r) => ({ rolloutKey: r.rolloutKey, lockChanges: r.lockChanges, statusChanges: r.statusChanges, evaluated: r.evaluated, reused: r.reused, versions: r.versions }));
    w(JSON.stringify(t.sweep === null ? rows[0] : { sweep: t.sweep, rollouts: rows }, null, 2));
  } else if (t.sweep !== null) {
    const changed = results.filter((r) => r.statusChanges.length).length;
    w(`sweep ${t.sweep}: ${results.length} rollouts re-scored, ${results.reduce((n, r) => n + r.evaluated.length, 0)} node evaluations, ${changed} rollouts with changed statuses`);
  }
  return results.some((r) => r.lockChanges.length || r.statusChanges.length) ? 3 : 0;
}

function print(r: RescoreResult, w: (l?: string) => void): void {
  w(`re-scored ${r.rolloutKey}: ${r.outcomes.length} nodes, ${r.evaluated.length} re-evaluated, ${r.reused.length} reused`);
  if (r.evaluated.length) w(textTable(['re-evaluated', 'why'], r.evaluated.map((e) => [e.nodeId, e.why])));
  w(r.lockChanges.length ? `lock CHANGED (${r.lockChanges.length}):` : 'lock unchanged');
  if (r.lockChanges.length) w(textTable(['what', 'before', 'after'], r.lockChanges.map((c) => [c.path, String(c.before).slice(0, 24), String(c.after).slice(0, 24)])));
  w(r.statusChanges.length ? `node statuses CHANGED (${r.statusChanges.length}):` : 'node statuses identical');
  if (r.statusChanges.length) w(textTable(['node', 'before', 'after'], r.statusChanges.map((c) => [c.nodeId, c.before, c.after])));
}
