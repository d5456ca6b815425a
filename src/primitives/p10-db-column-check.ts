import { z } from 'zod';
import { listColumns, listTables, resolveName, WHERE, type ColumnInfo } from './db-catalog';
import { runMongoRequest } from './sql';
import { definePrimitive, type DbOptions, type PrimitiveEnv } from './types';

const Column = z.object({ name: z.string().min(1), type: z.string().min(1).optional(), length: z.number().int().positive().optional() }).strict();

export const P10Schema = z
  .object({
    table: z.string().min(1).optional(),
    /** a MongoDB collection instead of a table: fields are looked up in its documents */
    collection: z.string().min(1).optional(),
    expected_columns: z.array(z.string().min(1)).optional(),
    columns: z.array(Column).min(1).optional(),
    /** column → type: the declared type must contain it (case-insensitive) */
    types: z.record(z.string().min(1), z.string().min(1)).optional(),
    /** collection: documents sampled for fields (default 100) */
    sample_size: z.number().int().positive().max(10_000).optional(),
    /** collection: a field missing from every sampled document may appear in the collection's $jsonSchema validator instead */
    schema_fallback: z.boolean().optional(),
    database: z.string().min(1).optional(),
  })
  .strict()
  .refine((v) => (v.table === undefined) !== (v.collection === undefined), { message: 'give table or collection (exactly one)' })
  .refine((v) => (v.expected_columns?.length ?? 0) > 0 || v.columns !== undefined || v.types !== undefined, { message: 'give expected_columns, columns or types' })
  .refine((v) => v.collection === undefined || (v.columns === undefined && v.types === undefined), { message: 'columns and types apply to tables', path: ['columns'] });

type Want = { name: string; type?: string; length?: number };

/** Mongo: the dotted field paths present in a document (a.b for nested objects). */
function fieldPaths(doc: unknown, prefix = '', out = new Set<string>()): Set<string> {
  if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
    for (const [k, v] of Object.entries(doc)) {
      out.add(prefix + k);
      fieldPaths(v, `${prefix}${k}.`, out);
    }
  }
  return out;
}

async function collectionFields(env: PrimitiveEnv, collection: string, sample: number, fallback: boolean, opts: DbOptions) {
  const r = await runMongoRequest(env, { operation: 'sample', collection, limit: sample }, opts);
  if (!r.ok) return r;
  const present = new Set<string>();
  for (const d of r.result.rows) fieldPaths(d, '', present);
  let schemaFields: string[] = [];
  if (fallback) {
    const v = await runMongoRequest(env, { operation: 'schemaFields', collection }, opts);
    if (!v.ok) return v;
    schemaFields = v.result.value as string[];
  }
  return { ok: true as const, present, sampled: r.result.rows.length, schemaFields };
}

/**
 * P10: the table has every listed column (expected_columns ∪ columns ∪ types; exact name, else
 * case-insensitive); a `type` must be a case-insensitive substring of the column's data type or
 * full declared type (MySQL `varchar(20)`), a `length` must equal its character maximum length.
 * For a MongoDB collection, each field (dotted for nested ones) must occur in some sampled document.
 */
export const P10 = definePrimitive({
  id: 'P10',
  name: 'db_column_check',
  schema: P10Schema,
  async run(input, { env }) {
    const opts: DbOptions = { database: input.database };
    const wanted: Want[] = [
      ...(input.expected_columns ?? []).map((name) => ({ name })),
      ...(input.columns ?? []),
      ...Object.entries(input.types ?? {}).map(([name, type]) => ({ name, type })),
    ];
    if (input.collection !== undefined) {
      const got = await collectionFields(env, input.collection, input.sample_size ?? 100, input.schema_fallback === true, opts);
      if (!got.ok) return { passed: false, message: got.error };
      if (got.sampled === 0 && !input.schema_fallback) return { passed: false, message: `collection ${input.collection} has no documents to read fields from` };
      const missing = wanted.filter((w) => !got.present.has(w.name) && !got.schemaFields.includes(w.name)).map((w) => w.name);
      return {
        passed: missing.length === 0,
        message: missing.length ? `${input.collection}: field(s) missing from ${got.sampled} sampled document(s): ${missing.join(', ')}` : `${input.collection}: all ${wanted.length} field(s) present`,
        data: { collection: input.collection, sampled: got.sampled, missing },
      };
    }
    const tables = await listTables(env, opts);
    if (!tables.ok) return { passed: false, message: tables.error };
    if (tables.kind === 'mongodb') return { passed: false, message: 'the database is MongoDB: give collection, not table' };
    const table = resolveName(tables.value, input.table!);
    if (!table) return { passed: false, message: `table ${input.table} not found in ${WHERE[tables.kind]}` };
    const cols = await listColumns(env, tables.kind, table, opts);
    if (!cols.ok) return { passed: false, message: cols.error };
    const problems = wanted.map((w) => columnProblem(cols.value, w)).filter((p): p is string => p !== undefined);
    return {
      passed: problems.length === 0,
      message: problems.length ? `${table}: ${problems.join('; ')}` : `${table} has all ${wanted.length} column(s)`,
      data: { table, checked: wanted.length, problems, columns: cols.value.map((c) => `${c.name}:${shown(c)}`) },
    };
  },
});

const shown = (c: ColumnInfo) => (c.fullType && c.fullType.toLowerCase() !== c.type.toLowerCase() ? `${c.type} (${c.fullType})` : c.type);

function columnProblem(actual: ColumnInfo[], w: Want): string | undefined {
  const col = actual.find((c) => c.name === w.name) ?? actual.find((c) => c.name.toLowerCase() === w.name.toLowerCase());
  if (!col) return `${w.name} missing`;
  if (w.type) {
    const t = w.type.toLowerCase();
    if (!col.type.toLowerCase().includes(t) && !(col.fullType ?? '').toLowerCase().includes(t)) return `${w.name} is ${shown(col)}, expected ${w.type}`;
  }
  if (w.length !== undefined && col.length !== w.length) return `${w.name} has length ${col.length ?? 'none'}, expected ${w.length}`;
  return undefined;
}
