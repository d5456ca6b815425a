import { z } from 'zod';
import { JsonSchema } from '../model/json';
import { DatabaseSchema } from '../model/database';
import { RolesSchema } from '../model/roles';
import { parseByteSize } from '../sandbox/compose-values';

const Rel = z.string().min(1);


/** "4g", "512m", "1.5gb" or a number of bytes; at least 64 MiB. */
const MemorySize = z
  .union([z.number().int().positive(), z.string().regex(/^\d+(\.\d+)?\s*[kmgt]?i?b?$/i, 'a size such as "4g", "512m" or a number of bytes')], {
    error: 'a size such as "4g", "512m" or a number of bytes',
  })
  .transform((v) => parseByteSize(v))
  .refine((n) => n >= 64 * 1024 ** 2, 'at least 64m');

/** The agent's container's resource limits (defaults: docs/security.md). */
export const LimitsSchema = z
  .object({
    cpus: z.number().positive().max(1024).optional(),
    memory: MemorySize.optional(),
    pids: z.number().int().min(64, 'at least 64 (the agent and its tools need processes)').max(4_194_304).optional(),
  })
  .strict();

/**
 * An egress allowlist entry: a host name ("registry.npmjs.org"), every subdomain of one
 * ("*.pythonhosted.org"), or an IP address; optionally ":port" (else 80 and 443). No scheme, no path.
 */
export const EgressHostSchema = z
  .string()
  .regex(/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/i, 'a host name, "*.domain" or an IP address, optionally ":port" — no scheme, no path (e.g. "registry.npmjs.org", "*.pythonhosted.org", "deb.debian.org:80")')
  .refine((h) => !/:(\d+)$/.test(h) || (Number(h.split(':')[1]) >= 1 && Number(h.split(':')[1]) <= 65535), 'port must be 1-65535');

export const NetworkSchema = z
  .object({
    /** where the agent may connect through the egress proxy (besides its LLM relay); default: nowhere */
    allow: z.array(EgressHostSchema).default([]),
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
        /** further databases by name (P08–P11 `database: <name>`), e.g. an analytics ClickHouse beside PostgreSQL */
        databases: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), DatabaseSchema).optional(),
      })
      .strict(),
    evaluation: z
      .object({
        dag: Rel,
        /**
         * true: no two nodes that may run at once change state the other reads, so evaluation
         * runs nodes in parallel by default (docs/scoring.md#evaluation-order); false (default):
         * one at a time in topological order, as the published evaluator did
         */
        parallelSafe: z.boolean().default(false),
      })
      .strict(),
    solution: z.object({ dir: Rel, start: z.string().min(1) }).strict().optional(),
    variables: z.record(z.string(), JsonSchema).default({}),
    /** CPU, memory and pids limits of the agent's container (docs/security.md) */
    limits: LimitsSchema.optional(),
    /** outbound network of the agent: hosts reachable through the egress proxy (docs/security.md) */
    network: NetworkSchema.optional(),
    /** upstream codebases the agent must not clone or download (repo slugs or URLs); audited in the transcript */
    forbiddenSources: z.array(z.string().min(3)).optional(),
    /** how the evaluator obtains each role's credentials (P13); see docs/primitives.md#roles */
    roles: RolesSchema.optional(),
    /** behaviours kept for tasks imported from the published SaaSBench layout (docs/compatibility.md) */
    compat: z
      .object({
        /** copy id-like fields of 2xx JSON responses into chain variables (src/primitives/published-id-capture.ts) */
        published_id_capture: z.boolean().default(false),
        /** "runtime": a placeholder no step can produce is a load-time note and fails its step at run time */
        unresolved_placeholders: z.enum(['error', 'runtime']).default('error'),
        /** the published run-wide context: a reader runs after earlier nodes that capture what it reads (docs/compatibility.md#chain-context) */
        published_context: z.boolean().default(false),
      })
      .strict()
      .optional(),
  })
  .strict();

export type TaskManifest = z.infer<typeof TaskManifestSchema>;
export type TaskLimits = z.infer<typeof LimitsSchema>;
