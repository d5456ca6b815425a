import type { SandboxBackend } from '../sandbox/backend';
import { isNotFound } from '../sandbox/errors';
import { HostLostError } from './errors';

/** True when the container no longer exists on this host (not: exists but an exec failed). */
export async function containerGone(sandbox: SandboxBackend, container: string): Promise<boolean> {
  try {
    await sandbox.exec(container, ['true']);
    return false;
  } catch (err) {
    for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
      if (isNotFound(e) || /no such container/i.test(String((e as Error).message))) return true;
    }
    return false;
  }
}

/** Throw HostLostError (the workflow moves the rollout) when the rollout's app container is gone. */
export async function assertStackPresent(sandbox: SandboxBackend, container: string, rolloutKey: string): Promise<void> {
  if (await containerGone(sandbox, container)) throw new HostLostError(`rollout ${rolloutKey}: container ${container} is gone from this host`);
}
