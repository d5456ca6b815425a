import { AgentConfigError } from '../../errors';
import type { AgentDriver } from '../types';

/**
 * Puts the task's reference solution into the workspace and starts it the way the solution's own
 * script says. The ceiling of the benchmark: every deterministic node should pass.
 */
export const oracleAgent: AgentDriver = {
  name: 'oracle',
  async prepare(ctx) {
    if (!ctx.task.solution) throw new AgentConfigError(`task ${ctx.task.id} has no reference solution (solution: in task.yaml)`);
    await ctx.sandbox.copyDir(ctx.container, ctx.task.solution.dir, ctx.workspace);
  },
  launch(ctx) {
    return { script: ctx.task.solution!.start, workdir: ctx.workspace };
  },
  // The oracle's "session" is its start script, which is idempotent: resuming is running it again.
  resume(ctx) {
    return { script: ctx.task.solution!.start, workdir: ctx.workspace };
  },
};
