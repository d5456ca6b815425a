import { readChecks } from './db-query-checks';
import { execDialect } from './exec';
import { parseMongoShell } from './mongo-shell';
import type { DialectContext, StepDialect } from './types';
import { copy, isObject, rename, takeNotes, type Inputs } from './util';

/**
 * P08 (db_query) spellings, onto src/primitives/p08-db-query.ts. Facts from the tasks'
 * evaluators: sgdoserd's `store_as`/`store_field_as` store the first column of the first row
 * (jzssnoqp's DAG uses its `store_as` the same way); aoiwqoiq's `store_as` stores the row;
 * mnmtxiwb's `save_id` stores the first column; rjhcjrst's `save_first_row_as` stores the row;
 * orghjavi's `db: "clickhouse"` runs the query on its ClickHouse service; ygamciur's `command`
 * is a mongo-shell read and `collection` + `query` a find.
 */
const VALUE_STORE_TASKS = ['sgdoserd', 'jzssnoqp'];

function mongoRequest(inputs: Inputs, ctx: DialectContext): Inputs | undefined {
  let fromCommand: Inputs | undefined;
  if (typeof inputs.command === 'string') {
    const parsed = parseMongoShell(inputs.command);
    if ('error' in parsed) ctx.issue('inputs.command', `cannot read the mongo-shell command: ${parsed.error}`);
    else fromCommand = { ...parsed.read };
    ctx.spelling('P08 command "db.<collection>.<op>(…)"', 'mongo {collection, operation, filter, …}', 'a MongoDB read written in mongo-shell syntax (read into data at load time, never evaluated)');
    delete inputs.command;
  }
  let fromFields: Inputs | undefined;
  if (typeof inputs.collection === 'string') {
    const filter = inputs.query;
    if (filter !== undefined && !isObject(filter)) ctx.issue('inputs.query', 'a MongoDB filter must be an object');
    const countOnly = inputs.count_only;
    if (countOnly !== undefined && typeof countOnly !== 'boolean') ctx.issue('inputs.count_only', 'must be true or false');
    fromFields = { collection: inputs.collection, operation: countOnly === true ? 'countDocuments' : 'find', ...(isObject(filter) ? { filter } : {}) };
    ctx.spelling('P08 collection + query (+ count_only)', 'mongo {collection, operation: find|countDocuments, filter}', 'a MongoDB find (or count) with this filter');
    delete inputs.collection;
    delete inputs.query;
    delete inputs.count_only;
  } else if ('count_only' in inputs) {
    ctx.issue('inputs.count_only', 'count_only needs collection');
    delete inputs.count_only;
  }
  if (fromCommand && fromFields) {
    // both spellings of one read: they must name the same collection and filter; count_only picks the count
    const sameColl = fromCommand.collection === fromFields.collection;
    const sameFilter = JSON.stringify(fromCommand.filter ?? {}) === JSON.stringify(fromFields.filter ?? {});
    if (!sameColl || !sameFilter) ctx.issue('inputs.collection', 'collection/query disagree with the command');
    return fromFields.operation === 'countDocuments' ? { collection: fromCommand.collection, operation: 'countDocuments', ...(fromCommand.filter ? { filter: fromCommand.filter } : {}) } : fromCommand;
  }
  return fromCommand ?? fromFields;
}

function retry(inputs: Inputs, ctx: DialectContext) {
  if ('retry_ms' in inputs) {
    const ms = inputs.retry_ms;
    delete inputs.retry_ms;
    if (typeof ms !== 'number' || ms <= 0) ctx.issue('inputs.retry_ms', 'must be a positive number of milliseconds');
    else inputs.retry = { timeout_s: ms / 1000, interval_s: Math.min(1, ms / 1000) };
    ctx.spelling('retry_ms', 'retry.timeout_s', 're-run the query until its checks pass, for up to this long (an asynchronous write may land late)');
  }
  if ('poll_attempts' in inputs || 'poll_interval_ms' in inputs) {
    const n = inputs.poll_attempts;
    const ms = inputs.poll_interval_ms ?? 1000;
    delete inputs.poll_attempts;
    delete inputs.poll_interval_ms;
    if (typeof n !== 'number' || n < 1 || typeof ms !== 'number' || ms <= 0) ctx.issue('inputs.poll_attempts', 'poll_attempts (≥ 1) and poll_interval_ms (> 0) must be numbers');
    else inputs.retry = { timeout_s: ((n - 1) * ms) / 1000 || ms / 1000, interval_s: ms / 1000 };
    ctx.spelling('poll_attempts + poll_interval_ms', 'retry', 're-run the query up to n times, this far apart, until its checks pass');
  }
  if ('poll_seconds' in inputs) {
    const s = inputs.poll_seconds;
    delete inputs.poll_seconds;
    if (typeof s !== 'number' || s <= 0) ctx.issue('inputs.poll_seconds', 'must be a positive number of seconds');
    else if (inputs.retry) ctx.issue('inputs.poll_seconds', 'poll_seconds and retry_ms are both given');
    else inputs.retry = { timeout_s: s, interval_s: 1 };
    ctx.spelling('poll_seconds', 'retry.timeout_s', 're-run the query until its checks pass, for up to this long');
  }
}

function captures(inputs: Inputs, ctx: DialectContext) {
  rename(inputs, 'save_first_row_as', 'store_as', ctx, 'store the first row (an object)');
  if (VALUE_STORE_TASKS.includes(ctx.task) && 'store_as' in inputs) {
    rename(inputs, 'store_as', 'store_value_as', ctx, 'store the first column of the first row (this task\'s store_as)', 'inputs', `store_as (${ctx.task})`);
  }
  if ('store_field_as' in inputs) {
    rename(inputs, 'store_field_as', 'store_value_as', ctx, 'store one value of the first row (default the first column)');
  }
  if ('save_id' in inputs) rename(inputs, 'save_id', 'store_value_as', ctx, 'store the first column of the first row (an id)');
  if ('capture_only' in inputs) {
    const v = inputs.capture_only;
    delete inputs.capture_only;
    if (v !== true) ctx.issue('inputs.capture_only', 'must be true');
    else if (!inputs.store_value_as && !inputs.store_as) ctx.issue('inputs.capture_only', 'capture_only without a capture');
    ctx.spelling('capture_only: true', '(a step without checks)', 'the step only captures; it passes when the value can be stored');
  }
  rename(inputs, 'fallback_value', 'store_fallback', ctx, 'stored when the query returns no rows');
  if ('fallback_check' in inputs) {
    const f = inputs.fallback_check;
    delete inputs.fallback_check;
    if (!isObject(f) || String(f.type).toUpperCase() !== 'P12') ctx.issue('inputs.fallback_check', 'expected a P12 step {type: "P12", command, …}');
    else {
      const p12 = copy(f);
      delete p12.type;
      takeNotes(p12);
      inputs.fallback_exec = execDialect.normalize('P12', p12, ctx).inputs;
      ctx.spelling('fallback_check {type: P12, …}', 'fallback_exec', 'when the query\'s checks fail, this command decides the step');
    }
  }
}

export const dbQueryDialect: StepDialect = {
  types: ['P08'],
  normalize(type, raw, ctx) {
    const inputs = copy(raw);
    if (typeof inputs.query === 'string') rename(inputs, 'query', 'sql', ctx, 'the SQL statement');
    const mongo = mongoRequest(inputs, ctx);
    if (mongo) inputs.mongo = mongo;
    if ('db' in inputs) rename(inputs, 'db', 'database', ctx, 'which of the task\'s databases the query runs on');
    const conn: Inputs = {};
    for (const [k, c] of [['db_name', 'name'], ['db_user', 'user'], ['db_password', 'password'], ['db_port', 'port']] as const) {
      if (!(k in inputs)) continue;
      conn[c] = inputs[k];
      delete inputs[k];
      ctx.spelling(k, `connection.${c}`, 'the connection the query uses (same server; checked against the declared database at run time)');
    }
    if (Object.keys(conn).length) inputs.connection = conn;
    retry(inputs, ctx);
    captures(inputs, ctx);
    const checks = readChecks(inputs, { task: ctx.task, sql: typeof inputs.sql === 'string' ? inputs.sql : '', mongo: mongo !== undefined }, ctx);
    if (Object.keys(checks.expected).length) {
      if (isObject(inputs.expected_result)) ctx.issue('inputs.expected_result', 'expected_result and expected_first_row are both given');
      else if (inputs.expected_result !== undefined) ctx.issue('inputs.expected_result', 'a count condition beside column values');
      inputs.expected_result = checks.expected;
    } else if (isObject(inputs.expected_result) && Object.keys(inputs.expected_result).length === 0) {
      delete inputs.expected_result;
    }
    const counts = [...new Set(checks.rowCount)];
    if (counts.length > 1) ctx.issue('inputs', `several row-count conditions: ${counts.join(', ')}`);
    if (counts.length) inputs.row_count = counts[0];
    if (checks.affected) inputs.affected_rows = checks.affected;
    if (checks.assertions.length) inputs.assertions = checks.assertions;
    if (checks.anyOf.length) inputs.any_of = checks.anyOf;
    if (Object.keys(checks.capture).length) inputs.capture = checks.capture;
    if (checks.rowsEqual) inputs.rows_equal = checks.rowsEqual;
    if (checks.rowsMatch) inputs.rows_match = checks.rowsMatch;
    return { type, inputs };
  },
};
