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

/**
 * `:name` parameters (outside string literals, quoted identifiers and `::` casts) replaced by the
 * values as SQL literals of the engine: text quoted and escaped, numbers and booleans as they are,
 * null as NULL. A parameter the statement uses but `params` lacks is an error.
 */
export function bindNamed(sql: string, params: Record<string, unknown>, kind: DbKind): { text: string } | { error: string } {
  const lit = (v: unknown): string => {
    if (v === null || v === undefined) return 'NULL';
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
    const t = typeof v === 'string' ? v : JSON.stringify(v);
    return kind === 'postgres' ? sqlLiteral(t) : sqlLiteralBackslash(t);
  };
  let out = '';
  let i = 0;
  const missing: string[] = [];
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : kind !== 'postgres' && sql[j] === '\\' ? 2 : 1;
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === ':' && sql[i + 1] === ':') {
      out += '::';
      i += 2;
    } else if (c === ':' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))!;
      if (Object.prototype.hasOwnProperty.call(params, m[0])) out += lit(params[m[0]]);
      else missing.push(m[0]);
      i += 1 + m[0].length;
    } else {
      out += c;
      i++;
    }
  }
  return missing.length ? { error: `no value for parameter(s) ${missing.map((m) => `:${m}`).join(', ')}` } : { text: out };
}
