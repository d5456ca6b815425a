import { sandboxBackend } from '../sandbox/factory';
import { rolloutLogger } from '../log';

/** Remove every container, network and volume labelled with this rollout. Safe to repeat. */
export async function teardown(i: { rolloutKey: string }): Promise<{ containers: number; networks: number; volumes: number }> {
  const r = await sandboxBackend().down(i.rolloutKey);
  rolloutLogger(i.rolloutKey, { activity: 'teardown' }).info(r.removed, 'stack removed');
  return r.removed;
}
