import { join } from 'node:path';
import { config } from '../config';
import { writeSweepReport } from '../report/html/write';
import type { SweepResult } from '../model/sweep';
import { withHeartbeat } from './heartbeat';

export function sweepReportDir(name: string): string {
  return join(config.runsDir(), 'sweeps', name.replace(/[^A-Za-z0-9_.-]/g, '-'));
}

/** Activity: write the sweep's report files under runs/sweeps/<name>/ on this host. Idempotent. */
export async function sweepWriteReport(i: { result: SweepResult }): Promise<{ dir: string; host: string }> {
  const dir = sweepReportDir(i.result.name);
  await withHeartbeat(() => writeSweepReport(i.result, dir));
  return { dir, host: config.hostId() };
}
