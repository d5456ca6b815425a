import { MongoClient } from 'mongodb';
import { createConnection, type FieldPacket, type ResultSetHeader } from 'mysql2/promise';
import { Client } from 'pg';
import type { DatabaseTarget } from '../model/database';
import { runMongo, type MongoRequest } from './mongo-op';
import type { DbKind, DbOptions, MongoResult, SqlResult } from './types';

/**
 * The database side of a PrimitiveEnv: one connection per statement (as the published evaluators
 * did), to the primary database or a named one. Drivers: pg (PostgreSQL), mysql2 (MySQL and
 * MariaDB), the official mongodb driver, and ClickHouse's HTTP interface (plain fetch, JSON).
 * `address(target)` gives the loopback host and port the target's container port is published on.
 */
export interface DatabasePort {
  sql(text: string, opts?: DbOptions): Promise<SqlResult>;
  dbKind(database?: string): DbKind | undefined;
  mongo(req: MongoRequest, opts?: DbOptions): Promise<MongoResult>;
}

const CONNECT_TIMEOUT_MS = 10_000;
const STATEMENT_TIMEOUT_MS = 60_000;

type Address = { host: string; port: number };
type Creds = { user: string; password: string; name: string };

function credentials(t: DatabaseTarget, opts?: DbOptions): Creds {
  const c = opts?.connection;
  if (c?.port !== undefined && c.port !== t.port) throw new Error(`connection port ${c.port} is not the port of ${t.service}'s ${t.kind} server (${t.port})`);
  return { user: c?.user ?? t.user, password: c?.password ?? t.password, name: c?.name ?? t.name };
}

async function postgres(a: Address, c: Creds, text: string): Promise<SqlResult> {
  const client = new Client({ host: a.host, port: a.port, user: c.user, password: c.password, database: c.name, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, statement_timeout: STATEMENT_TIMEOUT_MS });
  await client.connect();
  try {
    const r = await client.query(text);
    const last = Array.isArray(r) ? r[r.length - 1] : r;
    const columns = (last.fields ?? []).map((f: { name: string }) => f.name);
    const noResultSet = columns.length === 0 && ['INSERT', 'UPDATE', 'DELETE', 'MERGE'].includes(last.command);
    return { rows: last.rows ?? [], columns, ...(noResultSet ? { affectedRows: last.rowCount ?? 0 } : {}) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function mysql(a: Address, c: Creds, text: string): Promise<SqlResult> {
  // dateStrings: DATE/DATETIME come back as MySQL prints them ('2024-01-31 12:00:00'), not as JS dates in the host's zone
  const conn = await createConnection({ host: a.host, port: a.port, user: c.user, password: c.password, database: c.name, connectTimeout: CONNECT_TIMEOUT_MS, multipleStatements: true, dateStrings: true, supportBigNumbers: true });
  try {
    const [result, fields] = (await conn.query({ sql: text, timeout: STATEMENT_TIMEOUT_MS })) as unknown as [unknown, unknown];
    // several statements: one result and one field list per statement; the last one is the answer
    const multi = Array.isArray(fields) && fields.length > 0 && fields.every((f) => f === undefined || Array.isArray(f));
    const last = (multi ? (result as unknown[])[(result as unknown[]).length - 1] : result) as Record<string, unknown>[] | ResultSetHeader;
    const lastFields = ((multi ? (fields as unknown[])[(fields as unknown[]).length - 1] : fields) ?? []) as FieldPacket[];
    if (!Array.isArray(last)) return { rows: [], columns: [], affectedRows: last.affectedRows };
    return { rows: last, columns: lastFields.map((f) => f.name) };
  } finally {
    await conn.end().catch(() => undefined);
  }
}

async function clickhouse(a: Address, c: Creds, text: string): Promise<SqlResult> {
  const url = `http://${a.host}:${a.port}/?database=${encodeURIComponent(c.name)}&default_format=JSON&max_execution_time=${STATEMENT_TIMEOUT_MS / 1000}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'X-ClickHouse-User': c.user, 'X-ClickHouse-Key': c.password, 'Content-Type': 'text/plain' },
    body: text,
    signal: AbortSignal.timeout(STATEMENT_TIMEOUT_MS + CONNECT_TIMEOUT_MS),
  });
  const body = await res.text();
  if (!res.ok) throw Object.assign(new Error(body.trim().slice(0, 500) || `HTTP ${res.status}`), { code: `HTTP ${res.status}` });
  if (!body.trim()) return { rows: [], columns: [] };
  const j = JSON.parse(body) as { meta?: { name: string }[]; data?: Record<string, unknown>[] };
  return { rows: j.data ?? [], columns: (j.meta ?? []).map((m) => m.name) };
}

async function mongo(a: Address, t: Extract<DatabaseTarget, { kind: 'mongodb' }>, c: Creds, req: MongoRequest): Promise<MongoResult> {
  const auth = c.user ? `${encodeURIComponent(c.user)}:${encodeURIComponent(c.password)}@` : '';
  const query = c.user ? `?authSource=${encodeURIComponent(t.auth_source)}` : '';
  const client = new MongoClient(`mongodb://${auth}${a.host}:${a.port}/${query}`, { directConnection: true, serverSelectionTimeoutMS: CONNECT_TIMEOUT_MS, connectTimeoutMS: CONNECT_TIMEOUT_MS, socketTimeoutMS: STATEMENT_TIMEOUT_MS });
  await client.connect();
  try {
    return await runMongo(client.db(c.name), req);
  } finally {
    await client.close().catch(() => undefined);
  }
}

export function databasePort(primary: DatabaseTarget | undefined, named: Record<string, DatabaseTarget> | undefined, address: (t: DatabaseTarget) => Address): DatabasePort {
  const target = (database?: string): DatabaseTarget => {
    const t = database === undefined ? primary : named?.[database];
    if (!t) throw new Error(database === undefined ? 'this task has no database configured (environment.database)' : `this task declares no database named "${database}"`);
    return t;
  };
  return {
    dbKind: (database) => (database === undefined ? primary?.kind : named?.[database]?.kind),
    async sql(text, opts) {
      const t = target(opts?.database);
      const c = credentials(t, opts);
      if (t.kind === 'postgres') return postgres(address(t), c, text);
      if (t.kind === 'mysql') return mysql(address(t), c, text);
      if (t.kind === 'clickhouse') return clickhouse(address(t), c, text);
      throw new Error(`${t.service} is MongoDB: it runs no SQL`);
    },
    async mongo(req, opts) {
      const t = target(opts?.database);
      if (t.kind !== 'mongodb') throw new Error(`${t.service} is ${t.kind}, not MongoDB`);
      return mongo(address(t), t, credentials(t, opts), req);
    },
  };
}
