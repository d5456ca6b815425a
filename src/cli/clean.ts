import { sandboxBackend } from '../sandbox';
import { connectClient } from '../temporal/connection';
import { reapDeadRollouts } from '../worker/reaper';
import { temporalTarget } from './temporal-target';

/**
 * Remove every labelled container, network and volume whose rollout workflow (on this Temporal
 * cluster) is not running. With --all, remove every saasbench-labelled resource without asking.
 */
export async function cleanCommand(opts: { all: boolean }): Promise<number> {
  let removed: string[];
  if (opts.all) removed = await sandboxBackend().reap(async () => false);
  else {
    const target = await temporalTarget(true);
    const { client, connection } = await connectClient(target);
    try {
      removed = await reapDeadRollouts(client, `${target.address}/${target.namespace}`);
    } finally {
      await connection.close();
    }
  }
  process.stdout.write(removed.length ? `removed ${removed.length} stack(s): ${removed.join(', ')}\n` : 'nothing to remove\n');
  return 0;
}
