import { z } from 'zod';
import { runSql, sqlLiteral } from './sql';
import { definePrimitive } from './types';

export const P10Schema = z
  .object({
    table: z.string().min(1),
    expected_columns: z.array(z.string().min(1)).min(1).optional(),
    columns: z.array(z.object({ name: z.string().min(1), type: z.string().min(1).optional() }).strict()).min(1).optional(),
  })
  .strict()
  .refine((v) => v.expected_columns !== undefined || v.columns !== undefined, { message: 'give expected_columns or columns' });

/**
 * P10: the table (schema public, name case-insensitive) has every listed column (expected_columns
 * ∪ columns; exact name, else case-insensitive), and each `type` is a case-insensitive substring
 * of the column's information_schema data_type.
 */
export const P10 = definePrimitive({
  id: 'P10',
  name: 'db_column_check',
  schema: P10Schema,
  async run(input, { env }) {
    const ran = await runSql(
      env,
      `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND lower(table_name) = lower(${sqlLiteral(input.table)}) ORDER BY ordinal_position`,
    );
    if (!ran.ok) return { passed: false, message: ran.error };
    const cols = ran.result.rows.map((r) => ({ name: String(r.column_name), type: String(r.data_type), table: String(r.table_name) }));
    // a case-insensitive lookup can hit two tables ("Users" and "users"): prefer the exact name
    const tables = [...new Set(cols.map((c) => c.table))];
    const table = tables.includes(input.table) ? input.table : tables[0];
    const actual = cols.filter((c) => c.table === table);
    if (actual.length === 0) return { passed: false, message: `table ${input.table} not found in schema public` };
    const wanted = [...(input.expected_columns ?? []).map((name) => ({ name, type: undefined as string | undefined })), ...(input.columns ?? [])];
    const problems: string[] = [];
    for (const w of wanted) {
      const col = actual.find((c) => c.name === w.name) ?? actual.find((c) => c.name.toLowerCase() === w.name.toLowerCase());
      if (!col) problems.push(`${w.name} missing`);
      else if (w.type && !col.type.toLowerCase().includes(w.type.toLowerCase())) problems.push(`${w.name} is ${col.type}, expected ${w.type}`);
    }
    return {
      passed: problems.length === 0,
      message: problems.length ? `${table}: ${problems.join('; ')}` : `${table} has all ${wanted.length} column(s)`,
      data: { table, checked: wanted.length, problems, columns: actual.map((c) => `${c.name}:${c.type}`) },
    };
  },
});
