import { z } from 'zod';
import { listTables, resolveName } from './db-catalog';
import { definePrimitive } from './types';

const Names = z.array(z.string().min(1)).min(1);

export const P09Schema = z
  .object({
    tables: Names.optional(),
    table: z.string().min(1).optional(),
    /** MongoDB collections (on a mongodb database) */
    collections: Names.optional(),
    /** a name of environment.databases; default the primary database */
    database: z.string().min(1).optional(),
    /** report the fraction present (data.fraction) for proportional credit; passing still needs all */
    partial: z.boolean().optional(),
  })
  .strict()
  .refine((v) => v.tables !== undefined || v.table !== undefined || v.collections !== undefined, { message: 'give tables, table or collections' });

/**
 * P09: every named table (tables ∪ table) — or MongoDB collection — exists (PostgreSQL: schema
 * public, tables and views; MySQL/MariaDB: the connection's database; names case-insensitive).
 */
export const P09 = definePrimitive({
  id: 'P09',
  name: 'db_table_exists',
  schema: P09Schema,
  async run(input, { env }) {
    const wanted = [...new Set([...(input.table ? [input.table] : []), ...(input.tables ?? []), ...(input.collections ?? [])])];
    const got = await listTables(env, { database: input.database });
    if (!got.ok) return { passed: false, message: got.error };
    if (input.collections && got.kind !== 'mongodb') return { passed: false, message: `collections were asked for, but the database is ${got.kind}` };
    const missing = wanted.filter((t) => resolveName(got.value, t) === undefined);
    const what = got.kind === 'mongodb' ? 'collection(s)' : 'table(s)';
    const fraction = (wanted.length - missing.length) / wanted.length;
    return {
      passed: missing.length === 0,
      message: missing.length ? `missing ${missing.length}/${wanted.length} ${what}: ${missing.join(', ')}` : `all ${wanted.length} ${what} exist`,
      data: { wanted, missing, ...(input.partial ? { fraction } : {}) },
    };
  },
});
