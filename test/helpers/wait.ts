import type { WorkflowHandle } from '@temporalio/client';
import type { RolloutProgress } from '../../src/model/rollout';
import { progressQuery } from '../../src/workflows/rollout';

export async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 120_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function progressOf(h: WorkflowHandle): Promise<RolloutProgress> {
  return h.query(progressQuery);
}
