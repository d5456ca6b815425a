import { z } from 'zod';

/**
 * The shape of a node-level capture (dag.json `captures`, the benchmark pack's `captures`); what it
 * does at run time is in step-captures.ts. Kept apart so the DAG schema does not load the primitives.
 */

const compiles = (re: string) => {
  try {
    new RegExp(re);
    return true;
  } catch {
    return false;
  }
};

const VarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'variable names are letters, digits and _');
const OneOrMore = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

export const NodeCaptureSchema = z
  .object({
    /** index (0-based) of the step whose response is read; omitted: every step that leaves a new response */
    step: z.number().int().min(0).optional(),
    name: VarName,
    /** body: `path` is a JSONPath (or a list tried in order); header: `path` is a header name (or a list) */
    from: z.enum(['body', 'header']).default('body'),
    path: OneOrMore,
    /** over the found value as text: the first group of this regular expression (or the whole match) */
    pattern: z.string().min(1).refine(compiles, 'not a valid regular expression').optional(),
    /** `2xx` (default): only from a 2xx response (query results count as 2xx); `any`: whatever the status */
    when: z.enum(['2xx', 'any']).default('2xx'),
    /** only from a response to this request: method(s) and/or a regular expression over the request path */
    if_request: z
      .object({
        method: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
        path: z.string().min(1).refine(compiles, 'not a valid regular expression').optional(),
      })
      .strict()
      .optional(),
    /** do not replace a value the chain already sees (from its prereqs, earlier nodes or an earlier step): first write wins */
    keep_existing: z.boolean().default(false),
    /** visible to the later steps of this chain only, not exported to other nodes */
    local: z.boolean().default(false),
    /** the published mechanism this capture reproduces (shown in reviews, never used) */
    note: z.string().optional(),
  })
  .strict();

export type NodeCapture = z.infer<typeof NodeCaptureSchema>;
