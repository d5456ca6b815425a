import { z } from 'zod';
import { listIndexes, listMongoIndexes, listTables, resolveName, WHERE, type IndexInfo } from './db-catalog';
import { definePrimitive, type DbOptions } from './types';

export type { IndexInfo } from './db-catalog';

const IndexSpec = z.union([
  z.string().min(1).describe('an exact index name'),
  z
    .object({
      /** key columns (or index expressions as PostgreSQL prints them; MongoDB key fields), in order */
      columns: z.array(z.string().min(1)).min(1),
      /** the index must be UNIQUE (or a primary key) */
      unique: z.boolean().optional(),
      /** the key columns must be exactly these (default: these are the leading key columns) */
      exact: z.boolean().optional(),
      name: z.string().min(1).optional(),
    })
    .strict(),
]);

const Regex = z.string().min(1).refine((s) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
}, 'not a valid regular expression');

export const P11Schema = z
  .object({
    table: z.string().min(1).optional(),
    /** a MongoDB collection instead of a table */
    collection: z.string().min(1).optional(),
    expected_indexes: z.array(IndexSpec).min(1).optional(),
    /** regular expressions; each must match some index's name or definition */
    indexes: z.array(Regex).min(1).optional(),
    database: z.string().min(1).optional(),
  })
  .strict()
  .refine((v) => (v.table === undefined) !== (v.collection === undefined), { message: 'give table or collection (exactly one)' })
  .refine((v) => v.expected_indexes !== undefined || v.indexes !== undefined, { message: 'give expected_indexes or indexes' });

const norm = (c: string) => c.replace(/["`]/g, '').trim().toLowerCase();

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
 * P11: the table (exact name, else case-insensitive) — or MongoDB collection — has an index for
 * every entry of `expected_indexes`, read from the catalogue (PostgreSQL pg_index, MySQL
 * information_schema.statistics, MongoDB listIndexes), key columns in order; and, for `indexes`,
 * an index whose name or definition matches each regular expression.
 */
export const P11 = definePrimitive({
  id: 'P11',
  name: 'db_index_check',
  schema: P11Schema,
  async run(input, { env }) {
    const opts: DbOptions = { database: input.database };
    const tables = await listTables(env, opts);
    if (!tables.ok) return { passed: false, message: tables.error };
    const wantedName = (input.table ?? input.collection)!;
    if ((tables.kind === 'mongodb') !== (input.collection !== undefined)) {
      return { passed: false, message: tables.kind === 'mongodb' ? 'the database is MongoDB: give collection, not table' : `the database is ${tables.kind}: give table, not collection` };
    }
    const table = resolveName(tables.value, wantedName);
    if (!table) return { passed: false, message: `${input.collection ? 'collection' : 'table'} ${wantedName} not found in ${WHERE[tables.kind]}` };
    const got = tables.kind === 'mongodb' ? await listMongoIndexes(env, table, opts) : await listIndexes(env, tables.kind, table, opts);
    if (!got.ok) return { passed: false, message: got.error };
    const indexes = got.value;
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
