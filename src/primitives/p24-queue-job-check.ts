import { z } from 'zod';
import { LAST_VARS_LOCAL } from './auth/request';
import { definePrimitive } from './types';
import { RequestSchema, sendRequest, SqlCheckSchema, sqlCheck } from './workflow-http';

export const P24Schema = z
  .object({
    /** what enqueues the job: a request to the app, or a command in a stack service; absent: earlier steps did */
    trigger: z.union([RequestSchema, z.object({ command: z.string().min(1), service: z.string().min(1).optional() }).strict()]).optional(),
    /** the job's effect, as the database shows it */
    verify: SqlCheckSchema,
    /** the longest wait for the job, polled every 500 ms */
    wait_seconds: z.number().min(0).max(600).default(15),
    timeout: z.number().positive().max(600).default(15),
  })
  .strict();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * P24: a background job runs. The trigger (a request that must answer below 400, or a command
 * that must exit 0) enqueues it; the SQL check must hold within wait_seconds.
 */
export const P24 = definePrimitive({
  id: 'P24',
  name: 'queue_job_check',
  schema: P24Schema,
  produces: () => ({ exported: [], local: LAST_VARS_LOCAL }),
  async run(input, ctx) {
    let head: string;
    if (!input.trigger) head = 'no trigger (earlier steps enqueued the job)';
    else if ('command' in input.trigger) {
      const service = input.trigger.service ?? ctx.env.appService;
      const r = await ctx.env.exec(service, input.trigger.command, { timeoutMs: input.timeout * 1000 });
      head = `${service}$ ${input.trigger.command.slice(0, 80)} → exit ${r.exitCode}`;
      if (r.exitCode !== 0 || r.timedOut) return { passed: false, message: `${head}${r.timedOut ? ' (timed out)' : ''}: ${(r.stderr || r.stdout).slice(-300)}` };
    } else {
      const out = await sendRequest(ctx, input.trigger, input.timeout, 'trigger');
      if (out.problem) return { passed: false, message: out.problem };
      head = out.line;
    }
    const deadline = Date.now() + input.wait_seconds * 1000;
    let problem = '';
    for (;;) {
      problem = await sqlCheck(ctx, input.verify);
      if (!problem || Date.now() >= deadline) break;
      await sleep(500);
    }
    return { passed: !problem, message: problem ? `${head}; after ${input.wait_seconds}s: ${problem}` : `${head}; the job's effect is in the database` };
  },
});
