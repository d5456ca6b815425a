import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sweepReportDir } from '../activities/sweep-report';
import { InvalidInputError } from '../errors';
import { writeRolloutHtml, writeSweepReport } from '../report/html/write';
import { withBenchmark } from '../report/sweep-export';
import { connectClient } from '../temporal/connection';
import type { SweepResult } from '../model/sweep';
import { temporalTarget } from './temporal-target';
import { sweepIdOf } from './watch';

/**
 * `saasbench report <run-dir | sweep-dir | sweep-name>`: (re)write the HTML report and exports.
 * A run folder (report.json) gets report.html; a sweep folder (sweep.json) gets every sweep file;
 * a sweep name that has no folder here is fetched from Temporal (the sweep's result) — the way
 * to get the report on a machine other than the host that wrote it.
 */
export async function reportCommand(arg: string, o: { asPaper?: boolean } = {}): Promise<number> {
  const dir = resolve(arg);
  if (existsSync(dir) && statSync(dir).isDirectory()) {
    if (existsSync(join(dir, 'sweep.json'))) return writeSweep(JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8')) as SweepResult, dir, o);
    if (existsSync(join(dir, 'report.json'))) {
      const f = await writeRolloutHtml(dir);
      process.stdout.write(`${f}\n`);
      return 0;
    }
    throw InvalidInputError.one(dir, '', 'neither a run folder (report.json) nor a sweep folder (sweep.json)');
  }
  const name = sweepIdOf(arg).slice('sweep/'.length);
  const local = sweepReportDir(name);
  if (existsSync(join(local, 'sweep.json'))) return writeSweep(JSON.parse(readFileSync(join(local, 'sweep.json'), 'utf8')) as SweepResult, local, o);
  const target = await temporalTarget(true);
  const { client, connection } = await connectClient(target);
  try {
    const handle = client.workflow.getHandle(sweepIdOf(arg));
    const d = await handle.describe();
    if (d.status.name !== 'COMPLETED') throw InvalidInputError.one(arg, '', `sweep ${handle.workflowId} is ${d.status.name.toLowerCase()}: no result to report yet (see \`saasbench watch ${name}\`)`);
    return writeSweep((await handle.result()) as SweepResult, local, o);
  } finally {
    await connection.close();
  }
}

/**
 * The leaderboard is recomputed from the rollouts over the declared tasks (a sweep.json written
 * before that rule renders by it too); the paper's view goes to its own folder so the default
 * files stay what the sweep computed.
 */
async function writeSweep(r: SweepResult, dir: string, o: { asPaper?: boolean } = {}): Promise<number> {
  const w = await writeSweepReport(withBenchmark(r, o), o.asPaper ? join(dir, 'as-paper') : dir);
  for (const f of w.files) process.stdout.write(`${f}\n`);
  process.stderr.write(`${w.rolloutPages} rollout report(s) written in their run folders\n`);
  return 0;
}
