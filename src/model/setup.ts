import { z } from 'zod';

const VarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name');

/**
 * A declared setup of a task (the benchmark pack's `setup:`): a short chain of ordinary steps run
 * once per evaluation of a running system, whose captures become variables of every node that reads
 * them. It stands for a value the published evaluator obtained itself before the first node (a
 * client it read back from the app's database, an account it created through the API, …): the
 * steps are visible in the pack and in each node record that used them; nothing is hidden.
 */
export const SetupItemSchema = z
  .object({
    /** what the published evaluator did, and where (a file of the published task) */
    description: z.string().min(10),
    /** the variables this setup provides: captures of its chain (checked at load time) */
    exports: z.array(VarName).min(1),
    /** exports that are secrets: redacted from records and logs */
    secret: z.array(VarName).default([]),
    /** canonical steps ({type, inputs}); a P13 step logs in as a declared role */
    chain: z.array(z.object({ type: z.string().min(1), inputs: z.record(z.string(), z.unknown()).default({}) }).strict()).min(1),
  })
  .strict()
  .superRefine((s, ctx) => {
    for (const n of s.secret) if (!s.exports.includes(n)) ctx.addIssue({ code: 'custom', path: ['secret'], message: `"${n}" is not one of the exports` });
  });
export type SetupItem = z.infer<typeof SetupItemSchema>;
