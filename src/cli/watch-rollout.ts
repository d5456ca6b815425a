import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
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
      const waitMs = p.phase === 'agent' && Date.now() - lastPrint > 30_000 ? await liveGovernorWaitMs(handle) : 0;
      const line = `[${fmtSecs(Date.now() - p.startedAt)}] ${p.phase}${nodes}${counts ? ` (${counts})` : ''}${governorText(p, waitMs)}`;
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

/** Rate governor waits (docs/gateway.md "Rate governor"): live from the agent's heartbeat, final from the agent's summary. */
function governorText(p: RolloutProgress, liveMs: number): string {
  if (p.governor) return ` · governor waits ${p.governor.waits} (${p.governor.waitSeconds}s, not billed to the agent)`;
  return liveMs > 0 ? ` · governor waits ${fmtSecs(liveMs)} so far (not billed to the agent)` : '';
}

/** The supervisor's heartbeat (SupervisionState.unbilledMs) of the running runAgent activity, if any. */
async function liveGovernorWaitMs(handle: WorkflowHandle): Promise<number> {
  const d = await handle.describe().catch(() => null);
  const payload = d?.raw.pendingActivities?.find((a) => a.activityType?.name === 'runAgent')?.heartbeatDetails?.payloads?.[0];
  if (!payload) return 0;
  try {
    const beat = defaultPayloadConverter.fromPayload<{ unbilledMs?: number } | undefined>(payload);
    return typeof beat?.unbilledMs === 'number' ? beat.unbilledMs : 0;
  } catch {
    return 0;
  }
}
