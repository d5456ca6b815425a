import { InvalidInputError } from './errors';
import { RolloutInputSchema, type RolloutInput } from './model/rollout';
import { zodIssuePaths } from './zod-issues';

/**
 * A rollout workflow's raw input, checked and defaulted: the one place its errors are worded
 * ("rollout input: <path>: <message>"). Runs in the validateRolloutInput local activity (zod
 * stays out of each workflow run's module set: src/workflows/index.ts), and in the workflow only
 * when replaying a history recorded before that activity existed.
 */
export function checkRolloutInput(raw: unknown): RolloutInput {
  const parsed = RolloutInputSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new InvalidInputError(zodIssuePaths(parsed.error).map((i) => ({ file: 'rollout input', path: i.path || '(root)', message: i.message })));
}
