import { z } from 'zod';
import { JsonSchema } from '../json';
import { RolesSchema } from '../primitives/auth/roles-schema';

const Rel = z.string().min(1);

export const DatabaseSchema = z
  .object({
    kind: z.literal('postgres'),
    service: z.string().min(1),
    port: z.number().int().positive().default(5432),
    user: z.string().min(1),
    password: z.string(),
    name: z.string().min(1),
  })
  .strict();

export const TaskManifestSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'task ids use lowercase letters, digits and -'),
    title: z.string().min(1),
    prd: Rel.default('task.md'),
    knowledgeBase: Rel.optional(),
    prompt: Rel.default('prompt.md'),
    environment: z
      .object({
        compose: Rel,
        appService: z.string().min(1),
        workspace: z.string().startsWith('/').default('/app'),
        appPort: z.number().int().positive(),
        database: DatabaseSchema.optional(),
      })
      .strict(),
    evaluation: z.object({ dag: Rel }).strict(),
    solution: z.object({ dir: Rel, start: z.string().min(1) }).strict().optional(),
    variables: z.record(z.string(), JsonSchema).default({}),
    /** upstream codebases the agent must not clone or download (repo slugs or URLs); audited in the transcript */
    forbiddenSources: z.array(z.string().min(3)).optional(),
    /** how the evaluator obtains each role's credentials (P13); see docs/task-format.md */
    roles: RolesSchema.optional(),
    /** behaviours kept for tasks imported from the published SaaSBench layout (docs/compatibility.md) */
    compat: z
      .object({
        /** copy id-like fields of 2xx JSON responses into chain variables (src/primitives/published-id-capture.ts) */
        published_id_capture: z.boolean().default(false),
        /** "runtime": a placeholder no step can produce is a load-time note and fails its step at run time */
        unresolved_placeholders: z.enum(['error', 'runtime']).default('error'),
      })
      .strict()
      .optional(),
  })
  .strict();

export type TaskManifest = z.infer<typeof TaskManifestSchema>;
export type DatabaseTarget = z.infer<typeof DatabaseSchema>;
