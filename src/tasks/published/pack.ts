import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import type { InputIssue } from '../../errors';
import { JsonSchema } from '../../model/json';
import { RolesSchema } from '../../model/roles';
import { NodeCaptureSchema } from '../../model/capture';
import { CLOCK_FAMILIES } from '../../primitives/run-clock';
import { SetupItemSchema } from '../../model/setup';
import { repoRoot } from '../../paths';
import { DatabaseSchema } from '../../model/database';
import { zodInputIssues } from '../../zod-issues';

/**
 * What saasbench needs to run one published task beyond its published files, written by us from
 * the published facts (benchmarks/saasbench/README.md): how each role logs in, the test users,
 * the app's port, the configuration constants its DAG reads, and what the prompt forbids.
 */
/**
 * A capture the published evaluator made by a rule of its own (a node-id keyword, a "last created"
 * key, a wrapper object), written down for the nodes it applied to: `node` names one node,
 * `node_contains` every node whose id contains the text (the published keyword rules). The loader
 * adds it to those nodes' `captures` (src/primitives/step-captures.ts).
 */
export const PackCaptureSchema = NodeCaptureSchema.extend({
  node: z.string().min(1).optional(),
  node_contains: z.string().min(1).optional(),
  /** a regular expression over node ids (the published keyword rules with their exclusions) */
  node_matches: z
    .string()
    .min(1)
    .refine((re) => {
      try {
        new RegExp(re);
        return true;
      } catch {
        return false;
      }
    }, 'not a valid regular expression')
    .optional(),
  /** node_contains / node_matches ignore case (as the published rules that lower-cased node ids) */
  ignore_case: z.boolean().default(false),
  /** only steps of these canonical types (the published rules that read only P04 responses, say) */
  step_types: z.array(z.string().min(1)).min(1).optional(),
  /** only the last step of the chain that leaves a response (the rules that ran once after a node's chain) */
  last_response: z.boolean().default(false),
})
  .strict()
  .superRefine((c, ctx) => {
    if (c.last_response && c.step !== undefined) ctx.addIssue({ code: 'custom', path: ['last_response'], message: 'give step or last_response, not both' });
    const given = [c.node, c.node_contains, c.node_matches].filter((x) => x !== undefined).length;
    if (given !== 1) ctx.addIssue({ code: 'custom', path: ['node'], message: 'give one of node, node_contains, node_matches' });
  });
export type PackCapture = z.infer<typeof PackCaptureSchema>;

export const PackEntrySchema = z
  .object({
    id: z.string().regex(/^[a-z0-9]+$/, 'the published id without task_, e.g. aoiwqoiq'),
    /** what the task builds (a clone of which product), for people reading the pack */
    product: z.string().min(1),
    /** overrides of what the loader reads from the compose file */
    app: z
      .object({
        service: z.string().min(1).optional(),
        port: z.number().int().positive().optional(),
        workspace: z.string().startsWith('/').optional(),
      })
      .strict()
      .optional(),
    /** the database the SQL primitives query (default: read from the compose file) */
    database: DatabaseSchema.optional(),
    /** test users role → {username, email, password, …}; they become `{{<role>_<field>}}` variables */
    users: z.record(z.string(), z.record(z.string(), z.string())).optional(),
    /** further variables the DAG reads (configuration constants of the published evaluator) */
    variables: z.record(z.string(), JsonSchema).optional(),
    /** how each role obtains credentials (docs/primitives.md#roles) */
    roles: RolesSchema.optional(),
    /** the fork's date/time variables, computed once per evaluation (src/primitives/run-clock.ts) */
    clock: z.enum(CLOCK_FAMILIES).optional(),
    /** values the published evaluator obtained itself before the first node, as declared chains (src/primitives/task-setup.ts) */
    setup: z.array(SetupItemSchema).optional(),
    /** the published evaluator's implicit id captures, as explicit rules (src/primitives/step-captures.ts) */
    captures: z.array(PackCaptureSchema).optional(),
    /**
     * `{{name}}` texts of the DAG that are content, not placeholders (a mustache binding in a rubric,
     * a Django template in an upload field), each with why: sent as written (`{{raw:…}}`)
     */
    literal: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/, 'a placeholder name as written (a.b)'), z.string().min(10)).default({}),
    /** the prompt's anti-cheat list: fed to the integrity audit */
    forbidden: z
      .object({
        /** upstream codebases (repo slugs or URLs) the agent must not clone or download */
        sources: z.array(z.string().min(3)).default([]),
        /** packages the agent must not install (the prompt's list; `*` matches any characters, e.g. docuseal*) */
        libraries: z.array(z.string().min(2)).default([]),
        /** container images the agent must not pull or run (`*` as above, e.g. docuseal/*) */
        images: z.array(z.string().min(2)).default([]),
      })
      .strict()
      .optional(),
    /**
     * placeholder names (the part before the first dot) the DAG reads that no step of it produces and
     * this entry does not provide, each with why — e.g. values the published harness set up itself.
     * The corpus test requires every such name to be provided or listed here.
     */
    unprovided: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a placeholder name (before any dot)'), z.string().min(10)).default({}),
    /** the published files this entry was written from (paths in ShadeCloak/SaaSbench), for review */
    sources: z.array(z.string().min(3)).default([]),
    /** facts a reader should know (how the published evaluator logged in, deviations, …) */
    notes: z.array(z.string()).default([]),
  })
  .strict();

export type PackEntry = z.infer<typeof PackEntrySchema>;

/** benchmarks/saasbench/, or SAASBENCH_PACK_DIR. */
export function packDir(): string {
  return process.env.SAASBENCH_PACK_DIR ?? join(repoRoot(), 'benchmarks', 'saasbench');
}

export function packFile(publishedId: string, dir = packDir()): string {
  return join(dir, 'tasks', `${publishedId}.yaml`);
}

/** The pack entry of a published task: null when there is none (the task still loads). */
export function loadPackEntry(publishedId: string, issues: InputIssue[], dir = packDir()): { entry: PackEntry | null; file: string } {
  const file = packFile(publishedId, dir);
  if (!existsSync(file)) return { entry: null, file };
  let raw: unknown;
  try {
    // merge keys (<<: *anchor) let roles that log in alike share one declaration
    raw = YAML.parse(readFileSync(file, 'utf8'), { merge: true });
  } catch (e) {
    issues.push({ file, path: '', message: `not valid YAML: ${(e as Error).message.split('\n')[0]}` });
    return { entry: null, file };
  }
  const parsed = PackEntrySchema.safeParse(raw);
  if (!parsed.success) {
    issues.push(...zodInputIssues(parsed.error, file));
    return { entry: null, file };
  }
  if (parsed.data.id !== publishedId) issues.push({ file, path: 'id', message: `the entry is for "${parsed.data.id}", not "${publishedId}"` });
  return { entry: parsed.data, file };
}
