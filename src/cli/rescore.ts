import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { config } from '../config';
import { log } from '../log';
import { rescore } from '../evaluation/rescore';
import { textTable } from '../report/table';

/** `saasbench rescore <run folder | rollout key>`: exit 0 when nothing changed, 3 when something did. */
export async function rescoreCommand(arg: string, opts: { json?: boolean }): Promise<number> {
  const dir = existsSync(arg) ? resolve(arg) : join(config.runsDir(), arg);
  const r = await rescore(dir, log.child({ rescore: arg }));
  if (opts.json) {
    process.stdout.write(JSON.stringify({ rolloutKey: r.rolloutKey, lockChanges: r.lockChanges, statusChanges: r.statusChanges }, null, 2) + '\n');
  } else {
    const w = (l = '') => process.stdout.write(`${l}\n`);
    w(`re-scored ${r.rolloutKey}: ${r.outcomes.length} nodes`);
    w(r.lockChanges.length ? `lock CHANGED (${r.lockChanges.length}):` : 'lock unchanged');
    if (r.lockChanges.length) w(textTable(['what', 'before', 'after'], r.lockChanges.map((c) => [c.path, String(c.before).slice(0, 24), String(c.after).slice(0, 24)])));
    w(r.statusChanges.length ? `node statuses CHANGED (${r.statusChanges.length}):` : 'node statuses identical');
    if (r.statusChanges.length) w(textTable(['node', 'before', 'after'], r.statusChanges.map((c) => [c.nodeId, c.before, c.after])));
  }
  return r.lockChanges.length || r.statusChanges.length ? 3 : 0;
}
