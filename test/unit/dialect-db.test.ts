import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkDag } from '../../src/tasks/validate-dag';
import { checkPlaceholders } from '../../src/tasks/placeholders';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { parseMongoShell } from '../../src/tasks/published/dialect/mongo-shell';
import { shellWords, unwrapDockerExec } from '../../src/tasks/published/dialect/shell-words';

/**
 * The database / files / exec dialects (P01–P03, P08–P12): each family of published spellings on
 * small steps of our own, asserting the canonical inputs, the recorded spelling, and that the
 * canonical schema accepts the result.
 */
type Step = Record<string, unknown>;

function norm(task: string, steps: Step[], node: Step = {}) {
  const raw = { nodes: [{ id: 'N1', description: 'd', prereqs: [], primitive_chain: steps, scoring: { category: 'c', subcategory: 's', method: 'weighted', maxScore: 1 }, ...node }] };
  const n = normalizePublishedDag(raw, { task, file: 'dag.json' });
  const checked = checkDag(n.dag, 'dag.json', undefined, { allowZeroMaxScore: true });
  const chain = (n.dag.nodes[0] as { primitive_chain: { type: string; inputs: Step; notes?: Step }[] }).primitive_chain;
  return { chain, inputs: chain.map((s) => s.inputs), spellings: n.spellings.map((s) => s.spelling), issues: [...n.issues, ...checked.issues].map((i) => `${i.path}: ${i.message}`) };
}

const one = (task: string, type: string, inputs: Step, node: Step = {}) => {
  const r = norm(task, [{ type, inputs }], node);
  return { ...r, inputs: r.inputs[0] };
};

describe('files dialect (P01–P03)', () => {
  test('P01 any_of → path_any_of; rjhcjrst without type means file or directory', () => {
    const r = one('rjhcjrst', 'P01', { any_of: ['a', 'b'] });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.inputs, { path_any_of: ['a', 'b'], type: 'any' });
    assert.ok(r.spellings.includes('any_of'));
    assert.equal(one('aoiwqoiq', 'P01', { path: 'a' }).inputs.type, undefined, 'other tasks keep the file default');
  });
  test('P02 output_var stdout, no path (last response), (?i) inline flag, patterns', () => {
    const v = one('sgdoserd', 'P02', { output_var: 'stdout', match_type: 'regex', pattern: '(?i)version' });
    assert.deepEqual(v.issues, []);
    assert.deepEqual(v.inputs, { from_variable: 'previous.stdout', match_type: 'regex', pattern: 'version', ignore_case: true });
    const last = one('cvyocaao', 'P02', { match_type: 'contains', pattern: 'EntityDescriptor' });
    assert.deepEqual(last.inputs, { match_type: 'contains', pattern: 'EntityDescriptor', from_last_response: true });
    assert.ok(last.spellings.includes('P02 without path'));
    assert.deepEqual(one('dfhjkeb', 'P02', { path: 'package.json', patterns: ['typescript', { any_of: ['express', 'koa'] }] }).issues, []);
    assert.match(one('x', 'P02', { output_var: 'stderr', pattern: 'a' }).issues.join(), /unsupported output_var/);
  });
  test('P03 pattern/min_count → glob/min_expected', () => {
    const r = one('jzssnoqp', 'P03', { pattern: 'app/services/**/*.rb', min_count: 2 });
    assert.deepEqual(r.inputs, { glob: 'app/services/**/*.rb', min_expected: 2 });
    assert.deepEqual(r.issues, []);
  });
});

describe('exec dialect (P12)', () => {
  test('host "docker exec <container> sh -c …" → the inner command in that container', () => {
    const r = one('orghjavi', 'P12', { command: `docker exec webanalytics_x_app sh -c "cd /app && echo \\"fn=\\" && mix run -e 'x = \\"Xy7$\\"'"`, exit_code: 0, expect_output_match_regex: 'fn=true' });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.inputs, { command: `cd /app && echo "fn=" && mix run -e 'x = "Xy7$"'`, container: 'webanalytics_x_app', expect_exit_code: 0, expect_output_regex: 'fn=true' });
    const v = one('orghjavi', 'P12', { command: "docker exec ${APP_CONTAINER} bash -c 'test -d /app'" });
    assert.deepEqual(v.inputs, { command: 'test -d /app' }, 'a $VARIABLE container is the app');
    assert.match(one('orghjavi', 'P12', { command: 'docker exec app sh -c "echo $HOME"' }).issues.join(), /host shell would expand/);
  });
  test('exit-code and output spellings', () => {
    const r = one('rjhcjrst', 'P12', {
      container: '{{app_container}}', command: 'x', expect_success: true, expect_exit_code: 0,
      expect_output_contains_all_any_form: [['a', 'A']], expect_output_not_contains_any: ['fatal'], expect_output_contains_any: ['b'],
      capture_to_context: { regex: '([a-z]{4,})', context_key: 'pat' },
    });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.inputs, { command: 'x', expect_exit_code: 0, expect_output_contains_groups: [['a', 'A']], expect_output_not_contains: ['fatal'], expect_output_contains_any: ['b'], capture: { pat: '([a-z]{4,})' } });
    assert.deepEqual(one('orghjavi', 'P12', { command: 'x', expected_acceptable_exit_codes: [0, 1] }).inputs, { command: 'x', expect_exit_codes: [0, 1] });
    assert.deepEqual(one('gmdnohlg', 'P12', { command: 'x', expected_exit_code: 0 }).inputs, { command: 'x', expect_exit_code: 0 });
    assert.match(one('x', 'P12', { command: 'x', expect_success: true, expect_exit_code: 3 }).issues.join(), /contradicts/);
    assert.deepEqual(one('ygamciur', 'P12', { command: 'x', expect_output_contains: '' }).inputs, { command: 'x' });
  });
  test('forbid_elixir_errors on the step and on the node', () => {
    const r = one('orghjavi', 'P12', { command: 'x', forbid_elixir_errors: true });
    assert.ok((r.inputs.forbid_output_regex as string[]).includes('\\*\\* \\(CompileError'));
    const n = norm('orghjavi', [{ type: 'P04', inputs: { method: 'GET', path: '/' } }, { type: 'P12', inputs: { command: 'y' } }], { forbid_elixir_errors: true });
    assert.deepEqual(n.issues, []);
    assert.ok(Array.isArray(n.inputs[1].forbid_output_regex));
    assert.ok(n.spellings.includes('node forbid_elixir_errors'));
  });
  test('shellWords / unwrapDockerExec', () => {
    assert.deepEqual(shellWords(`a 'b c' "d\\"e" f\\ g`).words.map((w) => w.text), ['a', 'b c', 'd"e', 'f g']);
    assert.equal(shellWords('echo "$x"').words[1].expands, true);
    assert.equal(shellWords('echo "a$"').words[1].expands, false);
    assert.equal(unwrapDockerExec('ls -la'), undefined);
    assert.match(JSON.stringify(unwrapDockerExec('docker exec -u root c sh -c x')), /"user":"root"/);
    assert.match(JSON.stringify(unwrapDockerExec('docker exec c sh -c x; rm y')), /cannot run in a container/);
    assert.match(JSON.stringify(unwrapDockerExec('docker exec c ls | grep a && rm b')), /cannot run in a container/);
    assert.equal((unwrapDockerExec('docker exec c ls 2>&1 | grep a') as { inner: string }).inner, 'ls 2>&1 | grep a');
  });
});

describe('schema dialect (P09–P11)', () => {
  test('P09 weighted → partial; collections are canonical', () => {
    assert.deepEqual(one('lgzivily', 'P09', { tables: ['a'], weighted: true }).inputs, { tables: ['a'], partial: true });
    assert.deepEqual(one('ygamciur', 'P09', { collections: ['user'] }).issues, []);
  });
  test('P10 expected_fields, schema_introspect_fallback, column_type_check (with an empty expected_columns)', () => {
    const m = one('ygamciur', 'P10', { collection: 'user', expected_fields: ['email'], schema_introspect_fallback: true });
    assert.deepEqual(m.inputs, { collection: 'user', expected_columns: ['email'], schema_fallback: true });
    assert.deepEqual(m.issues, []);
    const t = one('lgzivily', 'P10', { table: 'log', expected_columns: [], column_type_check: { log_from: 'varchar(20)' } });
    assert.deepEqual(t.inputs, { table: 'log', types: { log_from: 'varchar(20)' } });
    assert.deepEqual(one('ychlukjm', 'P10', { table: 't', columns: [{ name: 'urn', type: 'VARCHAR', length: 500 }] }).issues, []);
  });
  test('P11 index spellings: column lists, fields, expected_columns + unique_required, index_name + columns', () => {
    assert.deepEqual(one('kmasmnil', 'P11', { table: 'T', expected_indexes: [['a', 'b']] }).inputs, { table: 'T', expected_indexes: [{ columns: ['a', 'b'] }] });
    assert.deepEqual(one('ygamciur', 'P11', { collection: 'user', expected_indexes: [{ fields: ['email'], unique: true }] }).inputs, { collection: 'user', expected_indexes: [{ columns: ['email'], unique: true }] });
    assert.deepEqual(one('sgdoserd', 'P11', { table: 'users', expected_columns: ['email'], unique_required: true }).inputs, { table: 'users', expected_indexes: [{ columns: ['email'], unique: true }] });
    const y = one('ychlukjm', 'P11', { table: 't', index_name: 'PRIMARY', columns: ['a', 'b'] });
    assert.deepEqual(y.inputs, { table: 't', expected_indexes: [{ columns: ['a', 'b'], name: 'PRIMARY' }] });
    assert.deepEqual(y.issues, []);
  });
});

describe('P08 dialect: statement, database, connection, retry', () => {
  test('query → sql; db → database; db_* → connection; retry_ms / poll_seconds → retry', () => {
    assert.deepEqual(one('lgzivily', 'P08', { query: 'SELECT 1' }).inputs, { sql: 'SELECT 1' });
    assert.deepEqual(one('orghjavi', 'P08', { db: 'clickhouse', sql: 'SELECT 1' }).inputs, { database: 'clickhouse', sql: 'SELECT 1' });
    assert.deepEqual(one('gmdnohlg', 'P08', { sql: 'SELECT 1', db_name: 'd', db_user: 'u', db_password: 'p', db_port: 5432 }).inputs, { sql: 'SELECT 1', connection: { name: 'd', user: 'u', password: 'p', port: 5432 } });
    assert.deepEqual(one('cqfnbfay', 'P08', { sql: 'SELECT 1', retry_ms: 5000 }).inputs.retry, { timeout_s: 5, interval_s: 1 });
    assert.deepEqual(one('jzssnoqp', 'P08', { sql: 'SELECT 1', poll_seconds: 12 }).inputs.retry, { timeout_s: 12, interval_s: 1 });
  });
  test('MongoDB: mongo-shell commands and collection + query + count_only', () => {
    const c = one('ygamciur', 'P08', { command: "db.user.countDocuments({email: 'a@x', createdAt: {$exists: true}})", expected_result: { count: 1 } });
    assert.deepEqual(c.inputs, { mongo: { collection: 'user', operation: 'countDocuments', filter: { email: 'a@x', createdAt: { $exists: true } } }, expected_result: { count: 1 } });
    assert.deepEqual(c.issues, []);
    const both = one('ygamciur', 'P08', { command: "db.user.findOne({email: 'a'}, {state: 1})", collection: 'user', query: { email: 'a' }, count_only: true, expected_result: {} });
    assert.deepEqual(both.inputs, { mongo: { collection: 'user', operation: 'countDocuments', filter: { email: 'a' } } });
    assert.match(one('ygamciur', 'P08', { command: "db.user.findOne({email: 'a'})", collection: 'other', query: { email: 'a' } }).issues.join(), /disagree/);
    const path = one('ygamciur', 'P08', { command: "db.a.findOne({_id: ObjectId('{{id}}')})", assertions: [{ path: '$.deletedAt', operator: 'ne', expected: null }, { path: '$', operator: 'gte', expected: 1 }] });
    assert.deepEqual(path.inputs.assertions, [{ path: '$.value.deletedAt', operator: 'not_equals', expected: null }, { path: '$.value', operator: 'gte', expected: 1 }]);
  });
  test('parseMongoShell', () => {
    assert.deepEqual(parseMongoShell("db.newPage.find({applicationId: '{{x}}', deletedAt: {$ne: null}}).count()"), { read: { collection: 'newPage', operation: 'countDocuments', filter: { applicationId: '{{x}}', deletedAt: { $ne: null } } } });
    assert.deepEqual(parseMongoShell('db.t.aggregate([{$match: {a: 1}}])'), { read: { collection: 't', operation: 'aggregate', pipeline: [{ $match: { a: 1 } }] } });
    assert.match(JSON.stringify(parseMongoShell('db.t.drop()')), /unsupported method drop/);
    assert.match(JSON.stringify(parseMongoShell('db.t.find({a: print()})')), /unsupported value print/);
  });
});

describe('P08 dialect: what the result must be', () => {
  const sql = 'SELECT COUNT(*) AS cnt FROM t';
  test('expected_result forms: null, empty / non_empty, <col>_gte, row_count, {op, value}, {$gte}, rows_affected; expected', () => {
    assert.deepEqual(one('kmasmnil', 'P08', { sql, expected_result: null }).inputs, { sql });
    assert.deepEqual(one('jzssnoqp', 'P08', { sql, expected_result: 'empty' }).inputs, { sql, row_count: '==0' });
    assert.deepEqual(one('jzssnoqp', 'P08', { sql, expected_result: 'non_empty' }).inputs, { sql, row_count: '>=1' });
    assert.deepEqual(one('lzdugafl', 'P08', { sql, expected_result: { cnt_gte: 1 } }).inputs, { sql, expected_result: { cnt: '>=1' } });
    assert.deepEqual(one('xayqujrv', 'P08', { sql, expected: { cnt_min: 0 } }).inputs, { sql, expected_result: { cnt: '>=0' } });
    assert.deepEqual(one('x', 'P08', { sql: 'SELECT 1 AS cnt_gte', expected_result: { cnt_gte: 1 } }).inputs.expected_result, { cnt_gte: 1 }, 'a real column of that name');
    assert.deepEqual(one('ychlukjm', 'P08', { sql: 'SELECT a FROM t', expected_result: { row_count_gte: 1 } }).inputs, { sql: 'SELECT a FROM t', row_count: '>=1' });
    assert.deepEqual(one('kmasmnil', 'P08', { sql: 'SELECT a FROM t', expected_result: { row_count: 2 } }).inputs, { sql: 'SELECT a FROM t', row_count: '==2' });
    assert.deepEqual(one('cqfnbfay', 'P08', { sql, expected_result: { cnt: { op: '>=', value: 1 } } }).inputs.expected_result, { cnt: '>=1' });
    assert.deepEqual(one('pkvwdnhj', 'P08', { sql, expected_result: { cnt: { $gte: 60 } } }).inputs.expected_result, { cnt: '>=60' });
    assert.deepEqual(one('rjhcjrst', 'P08', { sql: "UPDATE t SET a = 1", expected_result: { rows_affected: 1 } }).inputs, { sql: 'UPDATE t SET a = 1', affected_rows: '==1' });
    assert.deepEqual(one('xayqujrv', 'P08', { sql, expected: '>=1' }).inputs, { sql, expected_result: '>=1' });
  });
  test('first-row spellings: expected_first_row (+tolerance), min_first_row, match, field regex, minimums, condition', () => {
    assert.deepEqual(one('lgzivily', 'P08', { query: sql, expected_first_row: { cnt: 1 } }).inputs, { sql, expected_result: { cnt: 1 } });
    assert.deepEqual(one('lgzivily', 'P08', { query: sql, tolerance: 0.5, expected_first_row: { cnt: 1 }, min_first_row: { cnt: 0 } }).inputs.assertions, [{ field: 'cnt', operator: 'equals', expected: 1, tolerance: 0.5 }, { field: 'cnt', operator: 'gte', expected: 0 }]);
    assert.deepEqual(one('lgzivily', 'P08', { query: sql, expected_first_row_match: { d: '.*X.*' } }).inputs.assertions, [{ field: 'd', operator: 'regex', expected: '.*X.*' }]);
    assert.deepEqual(one('sgdoserd', 'P08', { sql, expected_field_regex: { pattern: '^[a-z]{26}$' } }).inputs.assertions, [{ operator: 'regex', expected: '^[a-z]{26}$' }]);
    assert.deepEqual(one('sgdoserd', 'P08', { sql, expected_min: 100, field: 'cnt' }).inputs.assertions, [{ field: 'cnt', operator: 'gte', expected: 100 }]);
    assert.deepEqual(one('rjhcjrst', 'P08', { sql, expected_min: { cnt: 1 } }).inputs.assertions, [{ field: 'cnt', operator: 'gte', expected: 1 }]);
    assert.deepEqual(one('sgdoserd', 'P08', { sql, expected_min_field: 'deleteat', expected_min_value: 1 }).inputs.assertions, [{ field: 'deleteat', operator: 'gte', expected: 1 }]);
    assert.deepEqual(one('rjhcjrst', 'P08', { sql, min_value: 1 }).inputs.assertions, [{ operator: 'gte', expected: 1 }]);
    assert.deepEqual(one('xayqujrv', 'P08', { sql, expected_result_min: 0 }).inputs.assertions, [{ operator: 'gte', expected: 0 }]);
    assert.deepEqual(one('gmdnohlg', 'P08', { sql, expected_result_condition: 'cnt >= 1' }).inputs.assertions, [{ field: 'cnt', operator: 'gte', expected: 1 }]);
    assert.match(one('gmdnohlg', 'P08', { sql, expected_result_condition: 'cnt between 1' }).issues.join(), /expected "<column> <op> <number>"/);
  });
  test('rjhcjrst families: predicates, any_of, rows, all rows, row assertions, additional assertions, saved row, min rows, fallback', () => {
    const r = one('rjhcjrst', 'P08', {
      sql, expected_predicates: [{ field: 'cnt', op: '>=', value: 50 }, { field: 'k', op: '=', value: 14 }], any_of_predicates: [{ field: 'q', op: '>=', value: 1 }],
      expected_rows_contain: [{ code: 'JPY' }], expected_all_rows_match: { p: 32 }, row_assertions: [{ field: 'f', expected: null }],
      additional_assertions: [{ field: 's', match_type: 'numeric_equal_to_zero', comment: 'c' }, { field: 'v', match_type: 'numeric_equal', expected_numeric: 100, tolerance: 0.001 }],
      min_rows: 2, fallback_check: { type: 'P12', container: '{{app_container}}', command: 'tail log', expect_output_min_lines: 1, comment: 'c' },
    });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.inputs.assertions, [
      { field: 'cnt', operator: 'gte', expected: 50 }, { field: 'k', operator: 'equals', expected: 14 },
      { field: 'p', rows: 'all', operator: 'equals', expected: 32 }, { field: 'f', rows: 'all', operator: 'is_null' },
      { field: 's', operator: 'equals', expected: 0 }, { field: 'v', operator: 'equals', expected: 100, tolerance: 0.001 },
    ]);
    assert.deepEqual(r.inputs.any_of, [{ field: 'q', operator: 'gte', expected: 1 }]);
    assert.deepEqual(r.inputs.rows_contain, [{ code: 'JPY' }]);
    assert.equal(r.inputs.row_count, '>=2');
    assert.deepEqual(r.inputs.fallback_exec, { command: 'tail log', expect_output_min_lines: 1 });
    assert.deepEqual(one('rjhcjrst', 'P08', { sql, expected_first_row_equals_saved: 'before' }).inputs, { sql, equals_var: 'before' });
    assert.deepEqual(one('rjhcjrst', 'P08', { sql, expected_min_rows: 1 }).inputs, { sql, row_count: '>=1' });
  });
  test('assertions: orghjavi multi-key objects, op spelling and exact bounds, wildcard paths, yobgvieg "$" and bare columns', () => {
    const o = one('orghjavi', 'P08', { sql, assertions: [
      { path: '$.rows[0].cnt', expected_min: 18, expected_max: 28 }, { path: '$.rows[*].n', expected_contains_all: ['a'] },
      { path: '$.rows[0].c', op: '>=', expected: 1, tolerance: 100 }, { path: '$.rows', expected_min_length: 4 }, { path: '$.rows[0].d', match_regex: 'x', expected_in: ['x'] },
    ] });
    assert.deepEqual(o.issues, []);
    assert.deepEqual(o.inputs.assertions, [
      { path: '$.rows[0].cnt', operator: 'gte', expected: 18 }, { path: '$.rows[0].cnt', operator: 'lte', expected: 28 },
      { path: '$.rows[*].n', match: 'all', operator: 'contains_all', expected: ['a'] }, { path: '$.rows[0].c', operator: 'gte', expected: 1 },
      { path: '$.rows[0].d', operator: 'in', expected: ['x'] }, { path: '$.rows[0].d', operator: 'regex', expected: 'x' },
    ]);
    assert.equal(o.inputs.row_count, '>=4');
    const y = one('yobgvieg', 'P08', { sql, assertions: [{ path: '$', operator: 'length_gte', expected: 6 }, { path: 'cnt', operator: 'gte', expected: 1 }, { path: 'name', expected: 'W' }] });
    assert.deepEqual(y.inputs, { sql, row_count: '>=6', assertions: [{ field: 'cnt', operator: 'gte', expected: 1 }, { field: 'name', operator: 'equals', expected: 'W' }] });
    assert.match(one('x', 'P08', { sql, assertions: [{ path: '$.a', operator: 'approx', expected: 1 }] }).issues.join(), /unknown comparison operator "approx"/);
  });
});

describe('P08 dialect: captures per task', () => {
  const sql = 'SELECT id FROM t';
  test('store_as is the first row (aoiwqoiq) or its first column (sgdoserd, jzssnoqp); save_id, store_field_as, capture_only', () => {
    assert.deepEqual(one('aoiwqoiq', 'P08', { sql, store_as: 'ub' }).inputs, { sql, store_as: 'ub' });
    assert.deepEqual(one('jzssnoqp', 'P08', { sql, store_as: 'inbox_id' }).inputs, { sql, store_value_as: 'inbox_id' });
    assert.deepEqual(one('sgdoserd', 'P08', { sql, store_field_as: 'uid', capture_only: true }).inputs, { sql, store_value_as: 'uid' });
    assert.deepEqual(one('mnmtxiwb', 'P08', { sql, save_id: 'role_uuid', expected_result: {} }).inputs, { sql, store_value_as: 'role_uuid' });
    const fb = one('rjhcjrst', 'P08', { sql, save_first_row_as: 'cron_cfg', fallback_value: 'tok' });
    assert.deepEqual(fb.inputs, { sql, store_as: 'cron_cfg', store_fallback: 'tok' });
    assert.match(one('sgdoserd', 'P08', { sql, capture_only: true }).issues.join(), /capture_only without a capture/);
  });
  test('captures are produced for later placeholders (P08 value/row captures, P12 capture)', () => {
    const unresolved = (first: Step) => {
      const r = norm('sgdoserd', [first, { type: 'P08', inputs: { sql: "SELECT 1 FROM t WHERE id = '{{uid}}'" } }]);
      const raw = { nodes: [{ id: 'N1', description: 'd', prereqs: [], primitive_chain: r.chain, scoring: { category: 'c', subcategory: 's', method: 'binary', maxScore: 1 } }] };
      const checked = checkDag(raw, 'dag.json');
      return checkPlaceholders(checked.dag, raw.nodes, { file: 'dag.json', variables: [], publishedIdCapture: false }).map((i) => i.message);
    };
    assert.deepEqual(unresolved({ type: 'P08', inputs: { sql, store_field_as: 'uid', capture_only: true } }), []);
    assert.deepEqual(unresolved({ type: 'P12', inputs: { command: 'x', capture_to_context: { regex: '(.+)', context_key: 'uid' } } }), []);
    assert.equal(unresolved({ type: 'P08', inputs: { sql } }).length, 1, 'without the capture the placeholder is reported');
  });
});

describe('later published tasks (ididetxj, iyjruvfz, gavmyneb spellings)', () => {
  test('P12: general docker exec wrappers, stdout checks, host mode, teardown-only steps', () => {
    const db = one('ididetxj', 'P12', { command: `docker exec task_x-db psql -U a -tAc "SELECT 1;" 2>/dev/null`, expected_stdout_contains: '1', capture_stdout_var: 'v' });
    assert.deepEqual(db.issues, []);
    assert.deepEqual(db.inputs, { command: "psql -U a -tAc 'SELECT 1;' 2>/dev/null", container: 'task_x-db', expect_stdout_contains: '1', capture_stdout_as: 'v' });
    const pipe = one('iyjruvfz', 'P12', { command: 'docker exec task_x-redis redis-cli INFO | grep redis_version', expected_stdout_not_empty: true, expected_line_count_min: 4, expected_stdout_int_min: 32 });
    assert.deepEqual(pipe.inputs, { command: 'redis-cli INFO | grep redis_version', container: 'task_x-redis', expect_stdout_min_lines: 4, expect_stdout_int_min: 32 });
    const host = one('iyjruvfz', 'P12', { command: 'TOKEN=$(docker exec task_x-app printenv KEY) && curl -H "A: $TOKEN" http://localhost:8016/x', mode: 'host', expected_stdout_contains: ['S:200', 'S:204'] });
    assert.deepEqual(host.inputs, { command: 'TOKEN=$(printenv KEY) && curl -H "A: $TOKEN" http://localhost:8016/x', expect_stdout_contains_any: ['S:200', 'S:204'] });
    assert.match(one('iyjruvfz', 'P12', { command: 'docker compose restart app', mode: 'host' }).issues.join(), /drives docker/);
    assert.deepEqual(one('iyjruvfz', 'P12', { command: 'docker exec task_x-app reset', skip_in_normal_run: true }).inputs, { command: 'reset', container: 'task_x-app', teardown_only: true });
  });
  test('P08: expected_rows, expected_row_match, poll attempts, params, object conditions, assertion keys', () => {
    assert.deepEqual(one('ididetxj', 'P08', { sql: 'S', expected_rows: [{ u: 'a' }] }).inputs, { sql: 'S', rows_equal: [{ u: 'a' }] });
    assert.deepEqual(one('ididetxj', 'P08', { sql: 'S', expected_row_match: { c_min: 1 } }).inputs, { sql: 'S', expected_result: { c: '>=1' } });
    assert.deepEqual(one('iyjruvfz', 'P08', { sql: 'S', poll_attempts: 8, poll_interval_ms: 750 }).inputs.retry, { timeout_s: 5.25, interval_s: 0.75 });
    assert.deepEqual(one('gavmyneb', 'P08', { sql: 'S WHERE id = :cc', params: { cc: '{{channel_id}}' }, expect_rows: true }).issues, []);
    const cond = one('gavmyneb', 'P08', { sql: 'S', expected_result: { a: { not_null: true }, b: { in: ['x'] }, c: { min: 1, max: 2 } }, expected_result_min: { n: 100 }, expected_result_min_rows: 4 });
    assert.deepEqual(cond.inputs.assertions, [{ field: 'a', operator: 'not_null' }, { field: 'b', operator: 'in', expected: ['x'] }, { field: 'c', operator: 'gte', expected: 1 }, { field: 'c', operator: 'lte', expected: 2 }, { field: 'n', operator: 'gte', expected: 100 }]);
    assert.equal(cond.inputs.row_count, '>=4');
    const a = one('iyjruvfz', 'P08', { sql: 'S', assertions: [
      { path: '$.rows[0].id', expected_type: 'integer', store_as: '${USER_ID}' }, { path: '$.rows[*].k', expected_all_match_pattern: '^[a-f0-9]{64}$' },
      { path: '$.rows[0].n', expected_equals_var: '${BEFORE}' }, { path: '$.rows[0].e', expected_in_range_seconds_from_now: [3600, 172800] },
      { path: '$.rows', expected_min_count: 2 }, { path: '$.rows[0].t', expected_contains_one_of: ['text', 'varchar'] }, { comment: 'only a note' },
    ] });
    assert.deepEqual(a.issues, []);
    assert.deepEqual(a.inputs.capture, { USER_ID: '$.rows[0].id' });
    assert.deepEqual(a.inputs.assertions, [
      { path: '$.rows[0].id', operator: 'is_type', expected: 'integer' }, { path: '$.rows[*].k', match: 'each', operator: 'regex', expected: '^[a-f0-9]{64}$' },
      { path: '$.rows[0].n', operator: 'equals', expected: '{{BEFORE}}' }, { path: '$.rows[0].e', operator: 'seconds_from_now_between', expected: [3600, 172800] },
      { path: '$.rows[0].t', operator: 'contains_any', expected: ['text', 'varchar'] },
    ]);
    assert.equal(a.inputs.row_count, '>=2');
  });
  test('hhrdixum: list expected_result, expected_partial_result, first_row_assertions, expect_rowcount_min', () => {
    assert.deepEqual(one('hhrdixum', 'P08', { sql: 'SELECT 1 AS ok', expected_result: [{ ok: 1 }] }).inputs, { sql: 'SELECT 1 AS ok', rows_equal: [{ ok: 1 }] });
    assert.deepEqual(one('hhrdixum', 'P08', { sql: 'S', expected_partial_result: [{ i: 1 }] }).inputs, { sql: 'S', rows_match: [{ i: 1 }] });
    assert.deepEqual(one('hhrdixum', 'P08', { sql: 'SELECT MIN(x) AS min_len FROM t', first_row_assertions: { min_len_gte: 50 }, expect_rowcount_min: 1 }).inputs, { sql: 'SELECT MIN(x) AS min_len FROM t', expected_result: { min_len: '>=50' }, row_count: '>=1' });
    assert.deepEqual(one('hhrdixum', 'P08', { sql: "UPDATE t SET a = 1", expect_rowcount_min: 1 }).inputs, { sql: 'UPDATE t SET a = 1', affected_rows: '>=1' });
  });
  test('P11 column + is_unique; P03 type_filter directory', () => {
    assert.deepEqual(one('iyjruvfz', 'P11', { table: 'Booking', column: 'uid', is_unique: true }).inputs, { table: 'Booking', expected_indexes: [{ columns: ['uid'], unique: true }] });
    assert.deepEqual(one('iyjruvfz', 'P03', { glob: '*', base_dir: '/x', min_expected: 36, type_filter: 'directory' }).inputs, { glob: '*/', base_dir: '/x', min_expected: 36 });
  });
});
