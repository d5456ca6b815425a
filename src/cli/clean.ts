import { reapStacks } from '../sandbox';
import { connectClient } from '../temporal/connection';
import { reapDeadRollouts } from '../temporal/reaper';
import { temporalTarget } from './temporal-target';

/**
 * Remove every labelled container, network and volume whose rollout workflow is not running.
 * With --all, remove every saasbench-labelled resource without asking Temporal.
 */
export async function cleanCommand(opts: { all: boolean }): Promise<number> {
  let removed: string[];
  if (opts.all) removed = await reapStacks(async () => false);
  else {
    const { client, connection } = await connectClient(await temporalTarget(true));
    try {
      removed = await reapDeadRollouts(client);
    } finally {
      await connection.close();
    }
  }
  process.stdout.write(removed.length ? `removed ${removed.length} stack(s): ${removed.join(', ')}\n` : 'nothing to remove\n');
  return 0;
}
