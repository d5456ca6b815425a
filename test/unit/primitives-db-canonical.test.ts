import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { applyCheck, dbEqual } from '../../src/primitives/db-checks';
import { P01 } from '../../src/primitives/p01-file-exists';
import { P02 } from '../../src/primitives/p02-file-content-match';
import { P08 } from '../../src/primitives/p08-db-query';
import { P09 } from '../../src/primitives/p09-db-table-exists';
import { P12 } from '../../src/primitives/p12-docker-exec';
import type { ExecResult, PrimitiveEnv, SqlResult } from '../../src/primitives/types';
import { publishedDatabases } from '../../src/tasks/published/databases';
import { httpEnv, makeCtx, runPrimitive, schemaIssues } from '../fixtures/primitives/harness';

/** The canonical inputs added for the published dialects, on fake ports (real servers: test/integration/primitives-db-engines). */
function sqlEnv(answer: (text: string, n: number) => SqlResult, extra: Partial<PrimitiveEnv> = {}): PrimitiveEnv {
  let n = 0;
  return httpEnv('http://127.0.0.1:9', { sql: async (text) => answer(text, ++n), ...extra });
}
const rows = (r: Record<string, unknown>[], columns = Object.keys(r[0] ?? {})): SqlResult => ({ rows: r, columns });

describe('db checks', () => {
  test('dbEqual: numbers vs numeric strings, booleans vs 1/0 (MySQL), tolerance; strict otherwise', () => {
    assert.ok(dbEqual('3', 3) && dbEqual(1, true) && dbEqual('0', false) && dbEqual(100.0004, 100, 0.001));
    assert.ok(!dbEqual(true, 1) && !dbEqual('a', 'A') && !dbEqual(2, true) && !dbEqual(100.01, 100, 0.001));
  });
  test('operators', () => {
    assert.ok(applyCheck('contains_all', ['a', 'b', 'c'], ['a', 'c']).ok);
    assert.match(applyCheck('contains_all', ['a'], ['a', 'z']).why!, /missing \["z"\]/);
    assert.ok(applyCheck('in', '2', [1, 2]).ok);
    assert.ok(applyCheck('regex', 'ICD10:J45', '^ICD10').ok && !applyCheck('regex', null, '.').ok);
    assert.ok(applyCheck('regex', 'ABC', 'abc', { ignoreCase: true }).ok);
    assert.ok(applyCheck('starts_with', 'whsec_x', 'whsec_').ok);
    assert.ok(applyCheck('min_length', [1, 2], 2).ok && !applyCheck('min_length', 'a', 2).ok);
    assert.ok(!applyCheck('gte', 'abc', 1).ok);
  });
});

describe('P08 canonical inputs', () => {
  const ctxOf = (env: PrimitiveEnv, vars = {}) => makeCtx(env, vars);
  test('row_count, affected_rows, any_of, rows_contain, all-rows and path checks', async () => {
    const env = sqlEnv(() => rows([{ code: 'USD', d: 2 }, { code: 'JPY', d: 0 }]));
    const run = (i: Record<string, unknown>) => runPrimitive(P08, { sql: 'SELECT', ...i }, ctxOf(env));
    assert.equal((await run({ row_count: '==2', rows_contain: [{ code: 'JPY', d: 0 }] })).passed, true);
    assert.equal((await run({ rows_contain: [{ code: 'JPY', d: 2 }] })).passed, false);
    assert.equal((await run({ any_of: [{ field: 'd', operator: 'gte', expected: 5 }, { field: 'code', operator: 'equals', expected: 'USD' }] })).passed, true);
    assert.equal((await run({ any_of: [{ field: 'd', operator: 'gte', expected: 5 }] })).passed, false);
    assert.equal((await run({ assertions: [{ field: 'd', rows: 'all', operator: 'lte', expected: 2 }, { field: 'd', rows: 'any', operator: 'equals', expected: 0 }] })).passed, true);
    assert.equal((await run({ assertions: [{ field: 'd', rows: 'all', operator: 'equals', expected: 2 }] })).passed, false);
    assert.equal((await run({ assertions: [{ path: '$.rows[*].code', match: 'all', operator: 'contains_all', expected: ['USD', 'JPY'] }, { path: '$.row_count', operator: 'equals', expected: 2 }] })).passed, true);
    const dml = sqlEnv(() => ({ rows: [], columns: [], affectedRows: 3 }));
    assert.equal((await runPrimitive(P08, { sql: 'UPDATE', affected_rows: '==3' }, ctxOf(dml))).passed, true);
    assert.match((await runPrimitive(P08, { sql: 'SELECT', affected_rows: '==3' }, ctxOf(env))).message, /reported no affected rows/);
  });
  test('captures: store_value_as (value_field / first column), store_fallback, equals_var; nothing stored when checks fail', async () => {
    const env = sqlEnv(() => rows([{ id: 'abc', n: 2 }]));
    const ctx = ctxOf(env);
    await runPrimitive(P08, { sql: 'S', store_value_as: 'uid' }, ctx);
    await runPrimitive(P08, { sql: 'S', store_value_as: 'n', value_field: 'n', store_as: 'row' }, ctx);
    assert.deepEqual([ctx.state.vars.uid, ctx.state.vars.n, ctx.state.vars.row], ['abc', 2, { id: 'abc', n: 2 }]);
    assert.equal((await runPrimitive(P08, { sql: 'S', equals_var: 'row' }, ctx)).passed, true);
    const empty = sqlEnv(() => rows([], ['token']));
    const e = ctxOf(empty);
    assert.equal((await runPrimitive(P08, { sql: 'S', store_as: 'cfg', store_fallback: 'tok' }, e)).passed, true);
    assert.deepEqual(e.state.vars.cfg, { token: 'tok' });
    assert.match((await runPrimitive(P08, { sql: 'S', store_value_as: 'x' }, e)).message, /store_value_as x: no rows/);
    const f = ctxOf(env);
    assert.equal((await runPrimitive(P08, { sql: 'S', row_count: '==5', store_value_as: 'uid' }, f)).passed, false);
    assert.equal(f.state.vars.uid, undefined);
  });
  test('retry re-runs until the checks pass; fallback_exec rescues a failing step', async () => {
    const env = sqlEnv((_t, n) => rows([{ cnt: n >= 3 ? 1 : 0 }]));
    const r = await runPrimitive(P08, { sql: 'S', expected_result: { cnt: 1 }, retry: { timeout_s: 5, interval_s: 0.05 } }, makeCtx(env));
    assert.equal(r.passed, true, r.message);
    assert.match(r.message, /after 3 attempts/);
    const exec = async (): Promise<ExecResult> => ({ exitCode: 0, stdout: 'line1\nline2\n', stderr: '', timedOut: false });
    const fenv = sqlEnv(() => rows([{ q: 0 }]), { exec });
    assert.equal((await runPrimitive(P08, { sql: 'S', any_of: [{ field: 'q', operator: 'gte', expected: 1 }], fallback_exec: { command: 'tail log', expect_output_min_lines: 2 } }, makeCtx(fenv))).passed, true);
    assert.equal((await runPrimitive(P08, { sql: 'S', any_of: [{ field: 'q', operator: 'gte', expected: 1 }], fallback_exec: { command: 'tail log', expect_output_min_lines: 3 } }, makeCtx(fenv))).passed, false);
  });
  test('schema: exactly one of sql / mongo; named database without a declaration fails at run time', async () => {
    assert.ok(schemaIssues(P08, { expected_result: {} }).length > 0);
    assert.ok(schemaIssues(P08, { sql: 'S', mongo: { collection: 'c', operation: 'find' } }).length > 0);
    assert.ok(schemaIssues(P08, { sql: 'S', assertions: [{ field: 'a', operator: 'gte', expected: 1, tolerance: 1 }] }).length > 0, 'tolerance only with equality');
    const env = sqlEnv(() => rows([{ a: 1 }]));
    assert.match((await runPrimitive(P08, { sql: 'S', database: 'clickhouse' }, makeCtx(env))).message, /no database named "clickhouse"/);
  });
});

describe('P01 / P02 / P09 / P12 canonical inputs', () => {
  test('P01 type any: a file or a directory', async () => {
    const env = httpEnv('http://x', { statPath: async (p) => (p.endsWith('dir') ? 'dir' : null) });
    assert.equal((await runPrimitive(P01, { path_any_of: ['nofile', 'dir'], type: 'any' }, makeCtx(env))).passed, true);
    assert.equal((await runPrimitive(P01, { path: 'dir' }, makeCtx(env))).passed, false);
  });
  test('P02 from_variable, from_last_response, patterns with any_of, ignore_case', async () => {
    const env = httpEnv('http://x', {
      statPath: async () => 'file',
      readFile: async () => Buffer.from('{"dependencies": {"typescript": "5", "koa": "2"}}'),
    });
    const ctx = makeCtx(env, { previous: { stdout: 'mmctl Version: 9.1' } });
    assert.equal((await runPrimitive(P02, { from_variable: 'previous.stdout', match_type: 'regex', pattern: 'version', ignore_case: true }, ctx)).passed, true);
    assert.equal((await runPrimitive(P02, { from_variable: 'previous.stdout', match_type: 'regex', pattern: 'version' }, ctx)).passed, false);
    ctx.state.last = { method: 'GET', path: '/m', status: 200, headers: {}, body: '<EntityDescriptor>', elapsedMs: 1 };
    assert.equal((await runPrimitive(P02, { from_last_response: true, pattern: 'EntityDescriptor' }, ctx)).passed, true);
    assert.equal((await runPrimitive(P02, { path: 'package.json', patterns: ['typescript', { any_of: ['express', 'koa'] }] }, ctx)).passed, true);
    const miss = await runPrimitive(P02, { path: 'package.json', patterns: ['typescript', { any_of: ['express', 'fastify'] }] }, ctx);
    assert.match(miss.message, /missing any of \["express","fastify"\]/);
    assert.ok(schemaIssues(P02, { path: 'a', from_last_response: true, pattern: 'x' }).length > 0);
  });
  test('P09 partial reports the fraction present', async () => {
    const env = sqlEnv(() => rows([{ t: 'a' }, { t: 'b' }]));
    const r = await runPrimitive(P09, { tables: ['a', 'b', 'c', 'd'], partial: true }, makeCtx(env));
    assert.equal(r.passed, false);
    assert.equal(r.data?.fraction, 0.5);
  });
  test('P12 exit code sets, output groups / none-of / regex / forbidden patterns / min lines, regex captures', async () => {
    const env = httpEnv('http://x', { exec: async () => ({ exitCode: 1, stdout: 'Ran recurring and AutoBudget\ntoken=abcdefgh12\n', stderr: '** (CompileError) x', timedOut: false }) });
    const run = (i: Record<string, unknown>) => runPrimitive(P12, { command: 'c', ...i }, makeCtx(env));
    assert.equal((await run({ expect_exit_codes: [0, 1], expect_output_contains_groups: [['recurring', 'Recurring'], ['autobudget', 'AutoBudget']], expect_output_regex: 'token=\\w+' })).passed, true);
    assert.equal((await run({ expect_exit_codes: [0] })).passed, false);
    assert.match((await run({ expect_exit_code: null, expect_output_not_contains: ['CompileError'] })).message, /output contains "CompileError"/);
    assert.match((await run({ expect_exit_code: null, forbid_output_regex: ['\\*\\* \\(CompileError'] })).message, /forbidden/);
    assert.equal((await run({ expect_exit_code: null, expect_output_min_lines: 3 })).passed, true);
    const ctx = makeCtx(env);
    assert.equal((await runPrimitive(P12, { command: 'c', expect_exit_code: 1, capture: { tok: 'token=(\\w+)' } }, ctx)).passed, true);
    assert.equal(ctx.state.vars.tok, 'abcdefgh12');
  });
});

describe('published databases from compose', () => {
  test('MariaDB / MySQL variables, ClickHouse as a named database, MongoDB inside the app via a localhost URL', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pubdb-'));
    writeFileSync(path.join(dir, '.env'), 'DB_PASS=s3cret\nPLATFORM_DB_URL=mongodb://u:p%40ss@localhost:27017/app_x?authSource=admin\n');
    const raw = YAML.parse(`
services:
  app: { image: app, env_file: [.env] }
  db: { image: "mariadb:11.4", environment: { MARIADB_DATABASE: app_x, MARIADB_USER: appx, MARIADB_PASSWORD: "\${DB_PASS}" } }
  ch: { image: "clickhouse/clickhouse-server:24", environment: [CLICKHOUSE_DB=events] }
`);
    const r = publishedDatabases(raw, undefined, dir);
    assert.deepEqual(r.database, { kind: 'mysql', service: 'db', port: 3306, user: 'appx', password: 's3cret', name: 'app_x' });
    assert.deepEqual(r.databases, {
      ch: { kind: 'clickhouse', service: 'ch', port: 8123, user: 'default', password: '', name: 'events' },
      app: { kind: 'mongodb', service: 'app', port: 27017, user: 'u', password: 'p@ss', name: 'app_x', auth_source: 'admin' },
    });
  });
});

describe('canonical inputs for the later published tasks', () => {
  test('P08 rows_equal, capture by path, params bound as literals, is_type / each-match / time-window checks', async () => {
    let seen = '';
    const soon = new Date(Date.now() + 7200_000).toISOString();
    const env = sqlEnv((t) => ((seen = t), rows([{ id: '42', k: 'ab12', e: soon }, { id: '43', k: 'cd34', e: soon }])));
    const ctx = makeCtx(env);
    assert.equal((await runPrimitive(P08, { sql: 'S', rows_equal: [{ id: 42, k: 'ab12', e: soon }, { id: '43', k: 'cd34', e: soon }] }, ctx)).passed, true);
    assert.equal((await runPrimitive(P08, { sql: 'S', rows_equal: [{ id: 42, k: 'ab12' }, { id: 43, k: 'cd34' }] }, ctx)).passed, false, 'every column is compared');
    assert.equal((await runPrimitive(P08, { sql: 'S', rows_match: [{ id: 42, k: 'ab12' }, { id: 43 }] }, ctx)).passed, true, 'rows_match compares the named columns');
    assert.equal((await runPrimitive(P08, { sql: 'S', rows_match: [{ id: 43 }, { id: 42 }] }, ctx)).passed, false, 'in order');
    const r = await runPrimitive(P08, { sql: "SELECT * FROM t WHERE a = :a AND b = ':a'", params: { a: "x'y" }, capture: { uid: '$.rows[1].id' }, assertions: [
      { path: '$.rows[0].id', operator: 'is_type', expected: 'integer' }, { path: '$.rows[*].k', match: 'each', operator: 'regex', expected: '^[a-z]{2}\\d{2}$' },
      { path: '$.rows[0].e', operator: 'seconds_from_now_between', expected: [3600, 10800] },
    ] }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.equal(seen, "SELECT * FROM t WHERE a = 'x''y' AND b = ':a'");
    assert.equal(ctx.state.vars.uid, '43');
    assert.equal((await runPrimitive(P08, { sql: 'S', assertions: [{ path: '$.rows[*].k', match: 'each', operator: 'regex', expected: '^ab' }] }, ctx)).passed, false);
    assert.match((await runPrimitive(P08, { sql: 'S :b', params: {} }, ctx)).message, /no value for parameter\(s\) :b/);
  });
  test('P12 stdout-only checks and teardown-only steps', async () => {
    let ran = 0;
    const env = httpEnv('http://x', { exec: async () => ((ran += 1), { exitCode: 0, stdout: '33\n', stderr: 'S:200', timedOut: false }) });
    assert.equal((await runPrimitive(P12, { command: 'c', expect_stdout_int_min: 32, expect_stdout_min_lines: 1 }, makeCtx(env))).passed, true);
    assert.equal((await runPrimitive(P12, { command: 'c', expect_stdout_contains_any: ['S:200'] }, makeCtx(env))).passed, false, 'stderr does not count');
    const before = ran;
    const t = await runPrimitive(P12, { command: 'reset everything', teardown_only: true }, makeCtx(env));
    assert.equal(t.passed, true);
    assert.equal(ran, before, 'the command did not run');
  });
});
