import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { P08 } from '../../src/primitives/p08-db-query';
import { P09 } from '../../src/primitives/p09-db-table-exists';
import { P10 } from '../../src/primitives/p10-db-column-check';
import { runNode } from '../../src/primitives/run-chain';
import type { PrimitiveEnv } from '../../src/primitives/types';
import type { DagNode } from '../../src/model/dag';
import { startPostgres, type TestPostgres } from '../fixtures/primitives/container-env';
import { httpEnv, makeCtx, runPrimitive, schemaIssues } from '../fixtures/primitives/harness';

let pg: TestPostgres;
let env: PrimitiveEnv;

const SCHEMA = `
CREATE TABLE users (
  id bigserial PRIMARY KEY, username text NOT NULL, email varchar(200), admin boolean NOT NULL DEFAULT false,
  trust_level integer NOT NULL DEFAULT 0, balance numeric(10,2), created_at timestamp NOT NULL DEFAULT now(), meta jsonb
);
CREATE TABLE "Posts" (id serial PRIMARY KEY, title text);
CREATE VIEW active_users AS SELECT * FROM users WHERE admin;
INSERT INTO users (username, email, admin, trust_level, balance, meta) VALUES
  ('admin', 'admin@example.test', true, 2, 10.50, '{"k": 1, "tags": ["a"]}'),
  ('bob', NULL, false, 0, 0, NULL),
  ('eve', 'eve@example.test', false, 1, 3.25, NULL);
`;

before(async () => {
  pg = await startPostgres();
  await pg.sql(SCHEMA);
  env = httpEnv('http://127.0.0.1:9', { sql: pg.sql });
});

after(async () => {
  await pg?.remove();
});

const run = (p: Parameters<typeof runPrimitive>[0], inputs: unknown) => runPrimitive(p, inputs, makeCtx(env));
const passes = async (inputs: Record<string, unknown>) => (await run(P08, inputs)).passed;

describe('P08 db_query', () => {
  test('no expected_result: passes iff the query runs', async () => {
    assert.equal(await passes({ sql: 'SELECT 1' }), true);
    const bad = await run(P08, { sql: 'SELECT * FROM no_such_table' });
    assert.equal(bad.passed, false);
    assert.match(bad.message, /42P01/);
  });
  test('object form: first row, column by column; count(*) (a pg bigint string) vs numbers', async () => {
    const count = "SELECT count(*) AS cnt FROM users";
    assert.equal(await passes({ sql: count, expected_result: { cnt: 3 } }), true);
    assert.equal(await passes({ sql: count, expected_result: { cnt: 4 } }), false);
    assert.equal(await passes({ sql: count, expected_result: { cnt: '3' } }), true);
    assert.equal(await passes({ sql: count, expected_result: { cnt: '>=3' } }), true);
    assert.equal(await passes({ sql: count, expected_result: { cnt: '>3' } }), false);
    assert.equal(await passes({ sql: count, expected_result: { cnt: '<5' } }), true);
    assert.equal(await passes({ sql: count, expected_result: { cnt: '!=3' } }), false);
  });
  test('object form: strict types (booleans, text), NULL / NOT NULL, numeric, jsonb', async () => {
    const admin = "SELECT * FROM users WHERE username = 'admin'";
    assert.equal(await passes({ sql: admin, expected_result: { admin: true, trust_level: 2, email: 'admin@example.test' } }), true);
    assert.equal(await passes({ sql: admin, expected_result: { admin: 1 } }), false, 'no truthiness');
    assert.equal(await passes({ sql: admin, expected_result: { admin: 'true' } }), false);
    assert.equal(await passes({ sql: admin, expected_result: { email: 'ADMIN@example.test' } }), false, 'no case folding');
    assert.equal(await passes({ sql: admin, expected_result: { balance: 10.5 } }), true, 'numeric string vs number');
    assert.equal(await passes({ sql: admin, expected_result: { balance: '>10' } }), true);
    assert.equal(await passes({ sql: admin, expected_result: { created_at: 'NOT NULL', meta: { tags: ['a'], k: 1 } } }), true);
    assert.equal(await passes({ sql: admin, expected_result: { username: '>=1' } }), false, 'a condition on text fails');
    const bob = "SELECT * FROM users WHERE username = 'bob'";
    assert.equal(await passes({ sql: bob, expected_result: { email: 'NULL' } }), true);
    assert.equal(await passes({ sql: bob, expected_result: { email: 'NOT NULL' } }), false);
    assert.equal(await passes({ sql: bob, expected_result: { email: null } }), true);
  });
  test('object form: a missing column or no rows fails with a message', async () => {
    const miss = await run(P08, { sql: 'SELECT 1 AS a', expected_result: { b: 1 } });
    assert.equal(miss.passed, false);
    assert.match(miss.message, /column b not in the result/);
    const none = await run(P08, { sql: "SELECT * FROM users WHERE username = 'nobody'", expected_result: { id: 'NOT NULL' } });
    assert.equal(none.passed, false);
    assert.match(none.message, /no rows/);
  });
  test('boolean form: rows exist or not', async () => {
    assert.equal(await passes({ sql: 'SELECT * FROM users WHERE admin', expected_result: true }), true);
    assert.equal(await passes({ sql: "SELECT * FROM users WHERE username = 'x'", expected_result: true }), false);
    assert.equal(await passes({ sql: "SELECT * FROM users WHERE username = 'x'", expected_result: false }), true);
  });
  test('number form: the row count', async () => {
    assert.equal(await passes({ sql: 'SELECT * FROM users', expected_result: 3 }), true);
    assert.equal(await passes({ sql: 'SELECT count(*) FROM users', expected_result: 3 }), false, 'one row, not the count value');
    assert.equal(await passes({ sql: 'SELECT * FROM users WHERE false', expected_result: 0 }), true);
  });
  test('string form: row count, or the single numeric cell of a single-row single-column result', async () => {
    assert.equal(await passes({ sql: 'SELECT * FROM users', expected_result: '>=3' }), true);
    assert.equal(await passes({ sql: 'SELECT * FROM users', expected_result: '==2' }), false);
    assert.equal(await passes({ sql: 'SELECT count(*) FROM users WHERE trust_level > 0', expected_result: '==2' }), true);
    assert.equal(await passes({ sql: 'SELECT count(*) FROM users WHERE trust_level > 5', expected_result: '>=1' }), false, 'count 0 even though there is one row');
    assert.equal(await passes({ sql: "SELECT username FROM users WHERE username = 'bob'", expected_result: '1' }), true, 'non-numeric single cell: row count');
  });
  test('assertions on the first row', async () => {
    const sql = "SELECT id, username, email, trust_level, balance FROM users WHERE username = 'bob'";
    const ok = await run(P08, {
      sql,
      assertions: [
        { field: 'username', operator: 'equals', expected: 'bob' },
        { field: 'trust_level', operator: 'lt', expected: 1 },
        { field: 'balance', operator: 'gte', expected: 0 },
        { field: 'id', operator: 'gt', expected: 0 },
        { field: 'email', operator: 'is_null' },
        { field: 'id', operator: 'not_null' },
        { field: 'username', operator: 'not_equals', expected: 'eve' },
      ],
    });
    assert.equal(ok.passed, true, ok.message);
    const bad = await run(P08, { sql, assertions: [{ field: 'trust_level', operator: 'lte', expected: -1 }, { field: 'email', operator: 'exists' }, { field: 'nope', operator: 'exists' }] });
    assert.equal(bad.passed, false);
    assert.match(bad.message, /trust_level lte -1: row 1 has 0/);
    assert.match(bad.message, /email exists: row 1 has null/);
    assert.match(bad.message, /no column nope/);
  });
  test('schema: unknown assertion operator, bad string form, unknown key', () => {
    assert.deepEqual(schemaIssues(P08, { sql: 'SELECT 1', assertions: [{ field: 'a', operator: 'matches', expected: 1 }] })[0].path, ['assertions', 0, 'operator']);
    assert.deepEqual(schemaIssues(P08, { sql: 'SELECT 1', assertions: [{ field: 'a', operator: 'gt' }] })[0].path, ['assertions', 0, 'expected']);
    assert.ok(schemaIssues(P08, { sql: 'SELECT 1', expected_result: 'lots' }).length > 0);
    assert.deepEqual(schemaIssues(P08, { sql: 'SELECT 1', save_id: 'x' })[0].keys, ['save_id']);
  });
  test('store_as exports the first row; no rows fails', async () => {
    const ctx = makeCtx(env);
    const out = await runPrimitive(P08, { sql: "SELECT id, username, created_at FROM users WHERE username = 'eve'", store_as: 'eve' }, ctx);
    assert.equal(out.passed, true, out.message);
    const row = ctx.state.exports.eve as Record<string, unknown>;
    assert.equal(row.username, 'eve');
    assert.equal(typeof row.id, 'string', 'bigint arrives as text');
    assert.match(String(row.created_at), /^\d{4}-\d\d-\d\dT/);
    const none = await run(P08, { sql: 'SELECT * FROM users WHERE false', store_as: 'x' });
    assert.equal(none.passed, false);
    assert.match(none.message, /store_as x: no rows/);
  });
  test('no database configured fails with a message', async () => {
    const out = await runPrimitive(P08, { sql: 'SELECT 1' }, makeCtx(httpEnv('http://127.0.0.1:9')));
    assert.equal(out.passed, false);
    assert.match(out.message, /no database configured/);
  });
  test('through run-chain: templated SQL, store_as, then P07 on $.rows and P15 on the SQL "response"', async () => {
    const node: DagNode = {
      id: 'DB_CHAIN', description: '', prereqs: [],
      chain: [
        { type: 'P08', inputs: { sql: "SELECT id, trust_level FROM users WHERE username = '{{who}}'", store_as: 'target' } },
        { type: 'P08', inputs: { sql: 'SELECT username, trust_level FROM users WHERE id = {{target.id}}', expected_result: { username: '{{who}}' } } },
        { type: 'P07', inputs: { assertions: [{ path: '$.rows[0].trust_level', expected: 1 }, { path: '$.row_count', expected: 1 }] } },
        { type: 'P15', inputs: { expected_status: 200 } },
      ],
      scoring: { category: 'Data', subcategory: '', method: 'binary', maxScore: 2 },
    };
    const r = await runNode(node, env, { judgeEnabled: false, vars: { who: 'eve' } });
    assert.equal(r.status, 'PASSED', r.message);
    assert.equal((r.exports.target as Record<string, unknown>).trust_level, 1);
  });
});

describe('P09 db_table_exists', () => {
  test('every table must exist in public; case-insensitive; views count', async () => {
    assert.equal((await run(P09, { tables: ['users', 'USERS', 'posts', 'active_users'] })).passed, true);
    assert.equal((await run(P09, { table: 'Posts' })).passed, true);
    const out = await run(P09, { tables: ['users', 'topics', 'badges'] });
    assert.equal(out.passed, false);
    assert.deepEqual(out.data?.missing, ['topics', 'badges']);
    assert.equal((await run(P09, { tables: ['pg_class'] })).passed, false, 'only schema public');
  });
});

describe('P10 db_column_check', () => {
  test('expected_columns are enforced (the published evaluator ignored them)', async () => {
    assert.equal((await run(P10, { table: 'users', expected_columns: ['id', 'username', 'email', 'created_at'] })).passed, true);
    const out = await run(P10, { table: 'users', expected_columns: ['id', 'username', 'username_lower', 'last_seen_at'] });
    assert.equal(out.passed, false);
    assert.match(out.message, /username_lower missing; last_seen_at missing/);
  });
  test('columns with types: case-insensitive substring of data_type', async () => {
    assert.equal((await run(P10, { table: 'users', columns: [{ name: 'email', type: 'character varying' }, { name: 'meta', type: 'JSONB' }, { name: 'id', type: 'bigint' }, { name: 'created_at', type: 'timestamp' }, { name: 'admin' }] })).passed, true);
    const wrong = await run(P10, { table: 'users', columns: [{ name: 'trust_level', type: 'text' }] });
    assert.equal(wrong.passed, false);
    assert.match(wrong.message, /trust_level is integer \(int4\), expected text/);
  });
  test('table name case-insensitive; missing table fails; quotes are escaped', async () => {
    assert.equal((await run(P10, { table: 'posts', expected_columns: ['TITLE'] })).passed, true);
    const missing = await run(P10, { table: 'topics', expected_columns: ['id'] });
    assert.equal(missing.passed, false);
    assert.match(missing.message, /table topics not found/);
    assert.equal((await run(P10, { table: "users' OR '1'='1", expected_columns: ['id'] })).passed, false);
  });
  test('schema needs expected_columns or columns; unknown column keys rejected', () => {
    assert.ok(schemaIssues(P10, { table: 'users' }).length > 0);
    assert.deepEqual(schemaIssues(P10, { table: 'users', columns: [{ name: 'id', nullable: false }] })[0].path, ['columns', 0]);
  });
});
