import type { WorkflowHandle } from '@temporalio/client';
import type { RolloutProgress } from '../model/rollout';
import { progressQuery } from '../workflows/rollout';

function fmtSecs(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/**
 * Print the rollout's progress while it runs: one line per phase change and per evaluation step,
 * so a long run is never silent. Stops when `until` settles.
 */
export async function watchRollout(handle: WorkflowHandle, until: Promise<unknown>, out: NodeJS.WritableStream = process.stderr): Promise<void> {
  let settled = false;
  until.then(() => (settled = true), () => (settled = true));
  let last = '';
  let lastPrint = 0;
  while (!settled) {
    const p = await handle.query(progressQuery).catch(() => null);
    if (p) {
      const nodes = p.nodesTotal ? ` nodes ${p.nodesDone}/${p.nodesTotal}` : '';
      const counts = Object.entries(p.statusCounts).map(([k, v]) => `${k}=${v}`).join(' ');
      const gov = p.governor ? ` · governor waits ${p.governor.waits} (${p.governor.waitSeconds}s, not billed to the agent)` : '';
      const line = `[${fmtSecs(Date.now() - p.startedAt)}] ${p.phase}${nodes}${counts ? ` (${counts})` : ''}${gov}`;
      const key = `${p.phase}|${p.nodesDone}`;
      if (key !== last || Date.now() - lastPrint > 30_000) {
        out.write(`${line}\n`);
        last = key;
        lastPrint = Date.now();
      }
    }
    await Promise.race([until.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
  }
}
