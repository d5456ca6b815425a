import type { PrimitiveEnv, SqlResult } from './types';

/** Quote a value as a SQL string literal (standard_conforming_strings on, as in every supported PostgreSQL). */
export function sqlLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

export const NO_DATABASE = 'this task has no database configured (environment.database), so SQL primitives cannot run';

/** Run SQL; a failure to run (syntax, missing table, connection) is returned, not thrown. */
export async function runSql(env: PrimitiveEnv, text: string): Promise<{ ok: true; result: SqlResult; elapsedMs: number } | { ok: false; error: string }> {
  if (!env.sql) return { ok: false, error: NO_DATABASE };
  const started = Date.now();
  try {
    const result = await env.sql(text);
    return { ok: true, result, elapsedMs: Date.now() - started };
  } catch (err) {
    const e = err as Error & { code?: string };
    return { ok: false, error: `SQL error${e.code ? ` ${e.code}` : ''}: ${e.message}` };
  }
}
