import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient, ObjectId } from 'mongodb';
import { databasePort } from '../../src/primitives/db-drivers';
import { P08 } from '../../src/primitives/p08-db-query';
import { P09 } from '../../src/primitives/p09-db-table-exists';
import { P10 } from '../../src/primitives/p10-db-column-check';
import { P11 } from '../../src/primitives/p11-db-index-check';
import type { PrimitiveEnv } from '../../src/primitives/types';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import type { DatabaseTarget } from '../../src/model/database';
import { repoRoot } from '../../src/paths';
import { buildMariadbImage, docker, startContainer, type TestContainer } from '../fixtures/primitives/container-env';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

/**
 * The database engines beyond PostgreSQL against real servers: MariaDB (Debian's mariadb-server
 * in a container built from the base image) through mysql2, and a MongoDB-protocol server
 * (FerretDB embedded with SQLite, test/tools/ferretdb, built by scripts/setup.sh) through the
 * official driver. ClickHouse has no server here: its HTTP client is checked against a local
 * HTTP server that answers in ClickHouse's documented JSON format (request shape and parsing only).
 */
const FERRET_BIN = path.join(repoRoot(), '.saasbench', 'bin', 'ferretdb-test');

function envOf(primary: DatabaseTarget | undefined, named: Record<string, DatabaseTarget> | undefined, ports: Record<string, number>): PrimitiveEnv {
  const db = databasePort(primary, named, (t) => ({ host: '127.0.0.1', port: ports[t.service] }));
  return httpEnv('http://127.0.0.1:9', { sql: db.sql, dbKind: db.dbKind, mongo: db.mongo });
}

const run = (env: PrimitiveEnv, p: Parameters<typeof runPrimitive>[0], inputs: unknown, vars = {}) => runPrimitive(p, inputs, makeCtx(env, vars));

/** The canonical inputs the published dialect makes of one step of `task`. */
function canonical(task: string, step: Record<string, unknown>): Record<string, unknown> {
  const n = normalizePublishedDag({ nodes: [{ id: 'N', description: 'd', prereqs: [], primitive_chain: [step], scoring: { category: 'c', subcategory: 's', method: 'binary', maxScore: 1 } }] }, { task, file: 'dag.json' });
  assert.deepEqual(n.issues, []);
  return ((n.dag.nodes[0] as { primitive_chain: { inputs: Record<string, unknown> }[] }).primitive_chain[0]).inputs;
}

describe('MySQL kind on MariaDB', () => {
  let c: TestContainer;
  let env: PrimitiveEnv;
  before(async () => {
    c = await startContainer(await buildMariadbImage(), ['-p', '127.0.0.1::3306'], []);
    const mapped = (await docker(['port', c.id, '3306/tcp'])).stdout.toString().trim();
    const port = Number(mapped.split('\n')[0].split(':').pop());
    env = envOf({ kind: 'mysql', service: 'db', port: 3306, user: 'app', password: 'apppw', name: 'app' }, undefined, { db: port });
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        await env.sql!('SELECT 1');
        break;
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`mariadb not ready: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    await env.sql!(`CREATE TABLE users (id INT AUTO_INCREMENT PRIMARY KEY, email VARCHAR(200) NOT NULL, enabled TINYINT(1) NOT NULL DEFAULT 1,
      amount DECIMAL(32,12), created DATETIME NOT NULL DEFAULT '2024-01-31 12:00:00', UNIQUE KEY users_email (email), KEY users_enabled_created (enabled, created));
      INSERT INTO users (email, enabled, amount) VALUES ('a@x', 1, 10.5), ('b@x', 0, NULL), ('c@x', 1, 0)`);
  });
  after(async () => {
    await c?.remove();
  });

  test('P08: MySQL booleans are 1/0, DECIMAL and DATETIME come back as MySQL prints them', async () => {
    const r = await run(env, P08, { sql: "SELECT enabled, amount, created FROM users WHERE email = 'a@x'", expected_result: { enabled: true, amount: 10.5, created: '2024-01-31 12:00:00' } });
    assert.equal(r.passed, true, r.message);
    assert.equal((await run(env, P08, { sql: "SELECT enabled FROM users WHERE email = 'b@x'", expected_result: { enabled: true } })).passed, false);
    assert.equal((await run(env, P08, { sql: 'SELECT COUNT(*) AS cnt FROM users', expected_result: { cnt: '>=3' } })).passed, true);
  });
  test('P08: DML reports affected rows; several statements answer with the last', async () => {
    const upd = await run(env, P08, { sql: "UPDATE users SET amount = 1 WHERE enabled = 1", affected_rows: '==2' });
    assert.equal(upd.passed, true, upd.message);
    assert.equal((await run(env, P08, { sql: "DELETE FROM users WHERE email = 'nobody'", affected_rows: '>=1' })).passed, false);
    assert.equal((await run(env, P08, { sql: 'SET @x = 41; SELECT @x + 1 AS x', expected_result: { x: 42 } })).passed, true);
  });
  test('P08 through the published dialect: rjhcjrst predicates, all-rows checks and a captured row', async () => {
    const pred = canonical('rjhcjrst', { type: 'P08', inputs: { sql: 'SELECT COUNT(*) AS cnt, SUM(enabled) AS on_cnt FROM users', expected_predicates: [{ field: 'cnt', op: '>=', value: 3 }, { field: 'on_cnt', op: '=', value: 2 }] } });
    assert.equal((await run(env, P08, pred)).passed, true);
    const all = canonical('rjhcjrst', { type: 'P08', inputs: { sql: 'SELECT enabled FROM users WHERE amount IS NOT NULL', expected_all_rows_match: { enabled: 1 } } });
    assert.equal((await run(env, P08, all)).passed, true);
    const ctx = makeCtx(env);
    const save = canonical('rjhcjrst', { type: 'P08', inputs: { sql: 'SELECT COUNT(*) AS cnt FROM users', save_first_row_as: 'before' } });
    assert.equal((await runPrimitive(P08, save, ctx)).passed, true);
    const same = canonical('rjhcjrst', { type: 'P08', inputs: { sql: 'SELECT COUNT(*) AS cnt FROM users', expected_first_row_equals_saved: 'before' } });
    assert.equal((await runPrimitive(P08, same, ctx)).passed, true);
    await env.sql!("INSERT INTO users (email) VALUES ('d@x')");
    assert.equal((await runPrimitive(P08, same, ctx)).passed, false, 'the count changed');
  });
  test('P09/P10/P11 read information_schema of the connection\'s database', async () => {
    assert.equal((await run(env, P09, { tables: ['users', 'USERS'] })).passed, true);
    assert.equal((await run(env, P09, { tables: ['users', 'missing'] })).passed, false);
    const cols = await run(env, P10, { table: 'users', columns: [{ name: 'email', type: 'VARCHAR', length: 200 }], types: { enabled: 'tinyint(1)', amount: 'decimal(32,12)' } });
    assert.equal(cols.passed, true, cols.message);
    assert.equal((await run(env, P10, { table: 'users', columns: [{ name: 'email', length: 100 }] })).passed, false);
    const ix = await run(env, P11, { table: 'users', expected_indexes: [{ columns: ['id'], name: 'PRIMARY' }, { columns: ['email'], unique: true }, { columns: ['enabled', 'created'], exact: true }] });
    assert.equal(ix.passed, true, ix.message);
    assert.equal((await run(env, P11, { table: 'users', expected_indexes: [{ columns: ['enabled'], unique: true }] })).passed, false);
  });
});

describe('MongoDB kind on a MongoDB-protocol server (FerretDB)', { skip: existsSync(FERRET_BIN) ? undefined : `needs ${FERRET_BIN} (scripts/setup.sh builds it with Go)` }, () => {
  let proc: ChildProcess;
  let dir: string;
  let env: PrimitiveEnv;
  let appId: string;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferretdb-'));
    const port = 20000 + Math.floor(Math.random() * 20000);
    proc = spawn(FERRET_BIN, ['-listen', `127.0.0.1:${port}`, '-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('ferretdb-test did not start in 30 s')), 30_000);
      proc.stdout!.on('data', (b: Buffer) => b.toString().includes('listening') && (clearTimeout(t), resolve()));
      proc.on('exit', (code) => reject(new Error(`ferretdb-test exited ${code}`)));
    });
    const client = new MongoClient(`mongodb://127.0.0.1:${port}/`, { directConnection: true });
    await client.connect();
    const db = client.db('app_test');
    const ins = await db.collection('application').insertOne({ name: 'App', deletedAt: new Date('2024-01-01T00:00:00Z'), pages: [{ slug: 'home' }] });
    appId = ins.insertedId.toHexString();
    await db.collection('user').insertMany([{ email: 'a@x', isEnabled: true, profile: { locale: 'en' } }, { email: 'b@x', isEnabled: false }]);
    await db.collection('user').createIndex({ email: 1 }, { unique: true });
    await client.close();
    env = envOf({ kind: 'mongodb', service: 'mongo', port: 27017, user: '', password: '', name: 'app_test', auth_source: 'admin' }, undefined, { mongo: port });
  });
  after(() => {
    proc?.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('P08 mongo reads: countDocuments, findOne by ObjectId ($oid), find; dates and ids as text', async () => {
    assert.equal((await run(env, P08, { mongo: { collection: 'user', operation: 'countDocuments', filter: { isEnabled: true } }, expected_result: { count: 1 } })).passed, true);
    const one = await run(env, P08, { mongo: { collection: 'application', operation: 'findOne', filter: { _id: { $oid: appId } } }, assertions: [{ path: '$.value.deletedAt', operator: 'equals', expected: '2024-01-01T00:00:00.000Z' }, { path: '$.value._id', operator: 'equals', expected: appId }] });
    assert.equal(one.passed, true, one.message);
    assert.equal((await run(env, P08, { mongo: { collection: 'user', operation: 'find', filter: { email: 'zzz' } }, row_count: '==0' })).passed, true);
    const sql = await run(env, P08, { sql: 'SELECT 1' });
    assert.match(sql.message, /MongoDB: SQL cannot run/);
  });
  test('P08 through the published dialect: ygamciur mongo-shell commands and collection + query', async () => {
    const soft = canonical('ygamciur', { type: 'P08', inputs: { command: `db.application.findOne({_id: ObjectId('${appId}')})`, assertions: [{ path: '$.deletedAt', operator: 'exists' }, { path: '$.deletedAt', operator: 'ne', expected: null }] } });
    assert.equal((await run(env, P08, soft)).passed, true);
    const count = canonical('ygamciur', { type: 'P08', inputs: { command: "db.user.find({isEnabled: false}).count()", assertions: [{ path: '$', operator: 'eq', expected: 1 }] } });
    assert.equal((await run(env, P08, count)).passed, true);
    const docs = canonical('ygamciur', { type: 'P08', inputs: { command: "db.user.countDocuments({email: 'a@x'})", expected_result: { count: 1 } } });
    assert.equal((await run(env, P08, docs)).passed, true);
    const find = canonical('ygamciur', { type: 'P08', inputs: { collection: 'user', query: { email: 'b@x' }, expected_result: { email: 'b@x', isEnabled: true } } });
    const bad = await run(env, P08, find);
    assert.equal(bad.passed, false);
    assert.match(bad.message, /isEnabled/);
  });
  test('P09/P10/P11 on collections: names, fields of sampled documents (dotted), index keys', async () => {
    assert.equal((await run(env, P09, { collections: ['user', 'application'] })).passed, true);
    assert.equal((await run(env, P09, { collections: ['user', 'theme'] })).passed, false);
    assert.equal((await run(env, P10, { collection: 'user', expected_columns: ['email', 'isEnabled', 'profile.locale'] })).passed, true);
    const missing = await run(env, P10, { collection: 'user', expected_columns: ['email', 'password'] });
    assert.equal(missing.passed, false);
    assert.match(missing.message, /password/);
    assert.equal((await run(env, P11, { collection: 'user', expected_indexes: [{ columns: ['email'], unique: true }] })).passed, true);
    assert.equal((await run(env, P11, { collection: 'application', expected_indexes: [{ columns: ['workspaceId'] }] })).passed, false);
    assert.ok(ObjectId.isValid(appId));
  });
});

describe('ClickHouse kind: the HTTP client against a server speaking ClickHouse\'s JSON format (no ClickHouse server here)', () => {
  let server: Server;
  let port = 0;
  const seen: { url: string; user?: string; key?: string; body: string }[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', user: req.headers['x-clickhouse-user'] as string, key: req.headers['x-clickhouse-key'] as string, body });
        if (/syntax error/.test(body)) return res.writeHead(500).end('Code: 62. DB::Exception: Syntax error');
        if (/^INSERT/.test(body)) return res.writeHead(200).end('');
        // what ClickHouse sends for SELECT count() AS cnt … with default_format=JSON (UInt64 quoted)
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ meta: [{ name: 'cnt', type: 'UInt64' }], data: [{ cnt: '20' }], rows: 1, statistics: {} }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  test('P08 with database: the named ClickHouse runs the query; 64-bit counts compare as numbers; errors surface', async () => {
    const env = envOf({ kind: 'postgres', service: 'db', port: 5432, user: 'u', password: 'p', name: 'n' }, { clickhouse: { kind: 'clickhouse', service: 'ch', port: 8123, user: 'default', password: 'pw', name: 'analytics' } }, { ch: port });
    const r = await run(env, P08, { database: 'clickhouse', sql: 'SELECT count() AS cnt FROM system.tables', assertions: [{ path: '$.rows[0].cnt', operator: 'gte', expected: 18 }] });
    assert.equal(r.passed, true, r.message);
    assert.match(seen[0].url, /database=analytics/);
    assert.match(seen[0].url, /default_format=JSON/);
    assert.equal(seen[0].user, 'default');
    assert.equal(seen[0].key, 'pw');
    assert.equal((await run(env, P08, { database: 'clickhouse', sql: 'INSERT INTO t VALUES (1)' })).passed, true);
    const err = await run(env, P08, { database: 'clickhouse', sql: 'syntax error' });
    assert.equal(err.passed, false);
    assert.match(err.message, /Code: 62/);
    const none = await run(env, P08, { database: 'nope', sql: 'SELECT 1' });
    assert.match(none.message, /no database named "nope"/);
  });
});
