import { checkRolloutInput } from '../rollout-input';
import type { RolloutInput } from '../model/rollout';

/**
 * The rollout workflow's first step, as a local activity: its input checked with zod in the
 * worker's main thread, where the schemas are built once, instead of in every workflow run
 * (~0.02 s of each rollout's first workflow task: bench/sweep-overhead.ts).
 */
export async function validateRolloutInput(raw: unknown): Promise<RolloutInput> {
  return checkRolloutInput(raw);
}
