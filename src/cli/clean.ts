import { reapStacks } from '../sandbox';
import { connectClient } from '../temporal/connection';
import { temporalTarget } from './temporal-target';

/**
 * Remove every labelled container, network and volume whose rollout workflow is not running.
 * A rollout we cannot ask Temporal about is kept (unless --all), never guessed dead.
 */
export async function cleanCommand(opts: { all: boolean }): Promise<number> {
  let isLive: (key: string) => Promise<boolean> = async () => false;
  let close = async () => undefined as void;
  if (!opts.all) {
    const target = await temporalTarget(true);
    const { client, connection } = await connectClient(target);
    close = () => connection.close();
    const { listLabelledWorkflows } = await import('./labelled-workflows');
    const byKey = await listLabelledWorkflows();
    isLive = async (key) => {
      const wf = byKey.get(key);
      if (!wf) return false;
      const d = await client.workflow.getHandle(wf).describe().catch(() => null);
      return d?.status.name === 'RUNNING';
    };
  }
  try {
    const removed = await reapStacks(isLive);
    process.stdout.write(removed.length ? `removed ${removed.length} stack(s): ${removed.join(', ')}\n` : 'nothing to remove\n');
    return 0;
  } finally {
    await close();
  }
}
