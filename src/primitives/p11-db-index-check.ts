import { z } from 'zod';
import { runSql, sqlLiteral } from './sql';
import { definePrimitive } from './types';

const IndexSpec = z.union([
  z.string().min(1).describe('an exact index name'),
  z
    .object({
      /** key columns (or index expressions as PostgreSQL prints them), in order */
      columns: z.array(z.string().min(1)).min(1),
      /** the index must be UNIQUE (or a primary key) */
      unique: z.boolean().optional(),
      /** the key columns must be exactly these (default: these are the leading key columns) */
      exact: z.boolean().optional(),
      name: z.string().min(1).optional(),
    })
    .strict(),
]);

export const P11Schema = z
  .object({
    table: z.string().min(1),
    expected_indexes: z.array(IndexSpec).min(1).optional(),
    /** regular expressions; each must match some index's name or definition */
    indexes: z
      .array(
        z.string().min(1).refine((s) => {
          try {
            new RegExp(s);
            return true;
          } catch {
            return false;
          }
        }, 'not a valid regular expression'),
      )
      .min(1)
      .optional(),
  })
  .strict()
  .refine((v) => v.expected_indexes !== undefined || v.indexes !== undefined, { message: 'give expected_indexes or indexes' });

export interface IndexInfo {
  name: string;
  unique: boolean;
  primary: boolean;
  definition: string;
  /** key columns in order (INCLUDE columns excluded), unquoted, as pg_get_indexdef prints them */
  columns: string[];
}

const norm = (c: string) => c.replace(/"/g, '').trim().toLowerCase();

/** Does `ix` serve `spec`? Leading key columns in order (or exactly, with exact), unique if asked. */
export function indexMatches(ix: IndexInfo, spec: z.infer<typeof IndexSpec>): boolean {
  if (typeof spec === 'string') return ix.name === spec;
  if (spec.name && ix.name !== spec.name) return false;
  if (spec.unique && !(ix.unique || ix.primary)) return false;
  const want = spec.columns.map(norm);
  const have = ix.columns.map(norm);
  if (spec.exact && want.length !== have.length) return false;
  return want.length <= have.length && want.every((c, i) => have[i] === c);
}

function describe(spec: z.infer<typeof IndexSpec>): string {
  if (typeof spec === 'string') return `index named ${spec}`;
  return `${spec.unique ? 'unique ' : ''}index on (${spec.columns.join(', ')})${spec.exact ? ' exactly' : ''}${spec.name ? ` named ${spec.name}` : ''}`;
}

/**
 * P11: the table (schema public; exact name, else case-insensitive) has an index for every entry of
 * `expected_indexes` — read from the catalogue (pg_index), key columns in order — and, for
 * `indexes`, an index whose name or definition matches each regular expression.
 */
export const P11 = definePrimitive({
  id: 'P11',
  name: 'db_index_check',
  schema: P11Schema,
  async run(input, { env }) {
    const ran = await runSql(
      env,
      `SELECT t.relname AS table_name, i.relname AS index_name, ix.indisunique AS is_unique, ix.indisprimary AS is_primary,
              pg_get_indexdef(ix.indexrelid) AS definition,
              ARRAY(SELECT pg_get_indexdef(ix.indexrelid, k, true) FROM generate_series(1, ix.indnkeyatts) AS k ORDER BY k) AS columns
         FROM pg_index ix
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_class i ON i.oid = ix.indexrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND lower(t.relname) = lower(${sqlLiteral(input.table)})
        ORDER BY i.relname`,
    );
    if (!ran.ok) return { passed: false, message: ran.error };
    const exists = await runSql(env, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r','p','m') AND lower(c.relname) = lower(${sqlLiteral(input.table)})`);
    if (!exists.ok) return { passed: false, message: exists.error };
    const tables = exists.result.rows.map((r) => String(r.relname));
    if (tables.length === 0) return { passed: false, message: `table ${input.table} not found in schema public` };
    const table = tables.includes(input.table) ? input.table : tables[0];
    const indexes: IndexInfo[] = ran.result.rows
      .filter((r) => r.table_name === table)
      .map((r) => ({
        name: String(r.index_name),
        unique: r.is_unique === true,
        primary: r.is_primary === true,
        definition: String(r.definition),
        columns: Array.isArray(r.columns) ? r.columns.map(String) : String(r.columns ?? '').replace(/^\{|\}$/g, '').split(',').filter(Boolean),
      }));
    const problems: string[] = [];
    const matched: Record<string, string> = {};
    for (const spec of input.expected_indexes ?? []) {
      const hit = indexes.find((ix) => indexMatches(ix, spec));
      if (hit) matched[describe(spec)] = hit.name;
      else problems.push(`no ${describe(spec)}`);
    }
    for (const re of input.indexes ?? []) {
      const r = new RegExp(re);
      const hit = indexes.find((ix) => r.test(ix.name) || r.test(ix.definition));
      if (hit) matched[`/${re}/`] = hit.name;
      else problems.push(`no index name or definition matches /${re}/`);
    }
    const listing = indexes.map((ix) => `${ix.name}(${ix.columns.join(', ')})${ix.unique ? ' unique' : ''}`);
    return {
      passed: problems.length === 0,
      message: problems.length ? `${table}: ${problems.join('; ')} (indexes: ${listing.join('; ') || 'none'})` : `${table}: all ${Object.keys(matched).length} expected index(es) present`,
      data: { table, matched, problems, indexes: listing },
    };
  },
});
