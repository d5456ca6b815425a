import { dbKindOf, runMongoRequest, runSql, sqlLiteral, sqlLiteralBackslash } from './sql';
import type { DbKind, DbOptions, PrimitiveEnv } from './types';

/**
 * What the schema primitives (P09–P11) read about a database, the same shape for every engine:
 * PostgreSQL reads schema `public`, MySQL/MariaDB the connection's database (DATABASE()),
 * ClickHouse currentDatabase(), MongoDB the database's collections and their indexes.
 */
export interface ColumnInfo {
  name: string;
  /** information_schema data_type (`integer`, `varchar`), ClickHouse type, or a BSON type name */
  type: string;
  /** the full declared type where the engine has one (MySQL COLUMN_TYPE `varchar(20)`, `tinyint(4)`) */
  fullType?: string;
  /** character maximum length */
  length?: number;
}

export interface IndexInfo {
  name: string;
  unique: boolean;
  primary: boolean;
  definition: string;
  /** key columns in order (INCLUDE columns excluded), unquoted */
  columns: string[];
}

type Got<T> = { ok: true; kind: DbKind; value: T } | { ok: false; error: string };

const str = (v: unknown) => String(v ?? '');

/** Table (or collection) names, exactly as the database spells them. */
export async function listTables(env: PrimitiveEnv, opts?: DbOptions): Promise<Got<string[]>> {
  const k = dbKindOf(env, opts);
  if (!k.ok) return k;
  if (k.kind === 'mongodb') {
    const r = await runMongoRequest(env, { operation: 'listCollections' }, opts);
    return r.ok ? { ok: true, kind: k.kind, value: r.result.rows.map((x) => str(x.name)) } : r;
  }
  const sql = {
    postgres: "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'",
    mysql: 'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE()',
    clickhouse: 'SELECT name AS t FROM system.tables WHERE database = currentDatabase()',
  }[k.kind];
  const r = await runSql(env, sql, opts);
  return r.ok ? { ok: true, kind: k.kind, value: r.result.rows.map((x) => str(x.t)) } : r;
}

/** Where a kind looks for tables, for messages. */
export const WHERE: Record<DbKind, string> = { postgres: 'schema public', mysql: "the connection's database", clickhouse: 'the current database', mongodb: 'the database' };

/** The table's exact name: the same spelling if present, else the first case-insensitive match. */
export function resolveName(present: string[], wanted: string): string | undefined {
  return present.includes(wanted) ? wanted : present.find((p) => p.toLowerCase() === wanted.toLowerCase());
}

/** Columns of one table (already resolved to its exact name), in declaration order. */
export async function listColumns(env: PrimitiveEnv, kind: Exclude<DbKind, 'mongodb'>, table: string, opts?: DbOptions): Promise<Got<ColumnInfo[]>> {
  const sql = {
    postgres: `SELECT column_name AS n, data_type AS t, udt_name AS f, character_maximum_length AS l FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ${sqlLiteral(table)} ORDER BY ordinal_position`,
    mysql: `SELECT column_name AS n, data_type AS t, column_type AS f, character_maximum_length AS l FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ${sqlLiteralBackslash(table)} ORDER BY ordinal_position`,
    clickhouse: `SELECT name AS n, type AS t, type AS f, NULL AS l FROM system.columns WHERE database = currentDatabase() AND table = ${sqlLiteralBackslash(table)} ORDER BY position`,
  }[kind];
  const r = await runSql(env, sql, opts);
  if (!r.ok) return r;
  const value = r.result.rows.map((x) => ({ name: str(x.n), type: str(x.t), fullType: x.f == null ? undefined : str(x.f), length: x.l == null ? undefined : Number(x.l) }));
  return { ok: true, kind, value };
}

/** Indexes of one table (exact name). PostgreSQL from pg_index, MySQL from information_schema.statistics. */
export async function listIndexes(env: PrimitiveEnv, kind: Exclude<DbKind, 'mongodb'>, table: string, opts?: DbOptions): Promise<Got<IndexInfo[]>> {
  if (kind === 'clickhouse') return { ok: false, error: 'index checks are not available for ClickHouse tables (they have sorting keys and skipping indexes, not B-tree indexes)' };
  if (kind === 'postgres') {
    const r = await runSql(
      env,
      `SELECT i.relname AS index_name, ix.indisunique AS is_unique, ix.indisprimary AS is_primary,
              pg_get_indexdef(ix.indexrelid) AS definition,
              ARRAY(SELECT pg_get_indexdef(ix.indexrelid, k, true) FROM generate_series(1, ix.indnkeyatts) AS k ORDER BY k) AS columns
         FROM pg_index ix
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_class i ON i.oid = ix.indexrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND t.relname = ${sqlLiteral(table)}
        ORDER BY i.relname`,
      opts,
    );
    if (!r.ok) return r;
    const value = r.result.rows.map((x) => ({
      name: str(x.index_name),
      unique: x.is_unique === true,
      primary: x.is_primary === true,
      definition: str(x.definition),
      columns: Array.isArray(x.columns) ? x.columns.map(String) : str(x.columns).replace(/^\{|\}$/g, '').split(',').filter(Boolean),
    }));
    return { ok: true, kind, value };
  }
  const r = await runSql(
    env,
    `SELECT index_name AS n, non_unique AS nu, seq_in_index AS s, column_name AS c FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ${sqlLiteralBackslash(table)} ORDER BY index_name, seq_in_index`,
    opts,
  );
  if (!r.ok) return r;
  const byName = new Map<string, IndexInfo>();
  for (const x of r.result.rows) {
    const name = str(x.n);
    const ix = byName.get(name) ?? { name, unique: Number(x.nu) === 0, primary: name === 'PRIMARY', definition: '', columns: [] };
    // functional key parts have no column name (MySQL 8 EXPRESSION); they still occupy a position
    ix.columns.push(x.c == null ? '(expression)' : str(x.c));
    byName.set(name, ix);
  }
  const value = [...byName.values()].map((ix) => ({ ...ix, definition: `${ix.unique ? 'UNIQUE ' : ''}INDEX ${ix.name} (${ix.columns.join(', ')})` }));
  return { ok: true, kind, value };
}

/** MongoDB: a collection's indexes as IndexInfo (key fields in order; `_id_` is the primary). */
export async function listMongoIndexes(env: PrimitiveEnv, collection: string, opts?: DbOptions): Promise<Got<IndexInfo[]>> {
  const r = await runMongoRequest(env, { operation: 'listIndexes', collection }, opts);
  if (!r.ok) return r;
  const value = r.result.rows.map((d) => {
    const key = (d.key ?? {}) as Record<string, unknown>;
    const name = str(d.name);
    return { name, unique: d.unique === true || name === '_id_', primary: name === '_id_', definition: JSON.stringify(key), columns: Object.keys(key) };
  });
  return { ok: true, kind: 'mongodb', value };
}
