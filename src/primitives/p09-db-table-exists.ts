import { z } from 'zod';
import { runSql } from './sql';
import { definePrimitive } from './types';

export const P09Schema = z
  .object({
    tables: z.array(z.string().min(1)).min(1).optional(),
    table: z.string().min(1).optional(),
  })
  .strict()
  .refine((v) => v.tables !== undefined || v.table !== undefined, { message: 'give tables or table' });

/** P09: every named table (tables ∪ table) exists in schema public (tables and views; names case-insensitive). */
export const P09 = definePrimitive({
  id: 'P09',
  name: 'db_table_exists',
  schema: P09Schema,
  async run(input, { env }) {
    const wanted = [...new Set([...(input.table ? [input.table] : []), ...(input.tables ?? [])])];
    const ran = await runSql(env, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
    if (!ran.ok) return { passed: false, message: ran.error };
    const present = new Set(ran.result.rows.map((r) => String(r.table_name).toLowerCase()));
    const missing = wanted.filter((t) => !present.has(t.toLowerCase()));
    return {
      passed: missing.length === 0,
      message: missing.length ? `missing ${missing.length}/${wanted.length} table(s): ${missing.join(', ')}` : `all ${wanted.length} table(s) exist`,
      data: { wanted, missing },
    };
  },
});
