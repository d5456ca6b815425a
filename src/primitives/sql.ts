import type { DbKind, DbOptions, MongoResult, PrimitiveEnv, SqlResult } from './types';
import type { MongoRequest } from './mongo-op';

/** Quote a value as a SQL string literal (standard_conforming_strings on, as in every supported PostgreSQL). */
export function sqlLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** A string literal for MySQL/MariaDB and ClickHouse, where a backslash escapes in string literals. */
export function sqlLiteralBackslash(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

export const NO_DATABASE = 'this task has no database configured (environment.database), so SQL primitives cannot run';

const label = (opts?: DbOptions) => (opts?.database ? `database "${opts.database}"` : 'the database');

/**
 * The engine of the database a step addresses. A name the task does not declare is an error
 * (returned, not thrown); without dbKind (test environments) a configured `sql` means PostgreSQL.
 */
export function dbKindOf(env: PrimitiveEnv, opts?: DbOptions): { ok: true; kind: DbKind } | { ok: false; error: string } {
  if (env.dbKind) {
    const kind = env.dbKind(opts?.database);
    if (kind) return { ok: true, kind };
    return { ok: false, error: opts?.database ? `this task declares no database named "${opts.database}" (environment.databases)` : NO_DATABASE };
  }
  if (opts?.database) return { ok: false, error: `this task declares no database named "${opts.database}" (environment.databases)` };
  return env.sql ? { ok: true, kind: 'postgres' } : { ok: false, error: NO_DATABASE };
}

/** Run SQL; a failure to run (syntax, missing table, connection) is returned, not thrown. */
export async function runSql(env: PrimitiveEnv, text: string, opts?: DbOptions): Promise<{ ok: true; result: SqlResult; elapsedMs: number } | { ok: false; error: string }> {
  if (!env.sql) return { ok: false, error: NO_DATABASE };
  const kind = dbKindOf(env, opts);
  if (!kind.ok) return kind;
  if (kind.kind === 'mongodb') return { ok: false, error: `${label(opts)} is MongoDB: SQL cannot run on it (give a mongo request instead)` };
  const started = Date.now();
  try {
    const result = await env.sql(text, opts);
    return { ok: true, result, elapsedMs: Date.now() - started };
  } catch (err) {
    const e = err as Error & { code?: string };
    return { ok: false, error: `SQL error${e.code ? ` ${e.code}` : ''}: ${e.message}` };
  }
}

/** Run a MongoDB request; failures are returned, not thrown. */
export async function runMongoRequest(env: PrimitiveEnv, req: MongoRequest, opts?: DbOptions): Promise<{ ok: true; result: MongoResult; elapsedMs: number } | { ok: false; error: string }> {
  const kind = dbKindOf(env, opts);
  if (!kind.ok) return kind;
  if (kind.kind !== 'mongodb' || !env.mongo) return { ok: false, error: `${label(opts)} is ${kind.kind}, not MongoDB` };
  const started = Date.now();
  try {
    const result = await env.mongo(req, opts);
    return { ok: true, result, elapsedMs: Date.now() - started };
  } catch (err) {
    const e = err as Error & { codeName?: string };
    return { ok: false, error: `MongoDB error${e.codeName ? ` ${e.codeName}` : ''}: ${e.message}` };
  }
}
