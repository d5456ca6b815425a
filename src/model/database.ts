import { z } from 'zod';

/**
 * The database a task's checks read (P08–P11, P27). `kind`: postgres; mysql (MySQL and MariaDB);
 * clickhouse (its HTTP interface, port 8123); mongodb. `port` is the container port; the stack
 * publishes it on a loopback port the evaluator connects to.
 */
const DbCommon = {
  service: z.string().min(1),
  password: z.string(),
  name: z.string().min(1),
};
export const DatabaseSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('postgres'), port: z.number().int().positive().default(5432), user: z.string().min(1), ...DbCommon }).strict(),
  z.object({ kind: z.literal('mysql'), port: z.number().int().positive().default(3306), user: z.string().min(1), ...DbCommon }).strict(),
  z.object({ kind: z.literal('clickhouse'), port: z.number().int().positive().default(8123), user: z.string().min(1).default('default'), ...DbCommon, password: z.string().default('') }).strict(),
  z
    .object({
      kind: z.literal('mongodb'),
      port: z.number().int().positive().default(27017),
      /** '' = no authentication */
      user: z.string().default(''),
      ...DbCommon,
      password: z.string().default(''),
      /** the database that holds the user (MongoDB authSource) */
      auth_source: z.string().min(1).default('admin'),
    })
    .strict(),
]);
export type DatabaseTarget = z.infer<typeof DatabaseSchema>;
