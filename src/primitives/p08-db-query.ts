import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { asNumeric, compareNum, parseNumericCondition, show, sqlEqual, toJson } from './compare';
import { dbEqual, RowCheckSchema, runCheck, type CheckSubject } from './db-checks';
import { queryJsonPath } from './jsonpath';
import { MongoOpSchema } from './mongo-op';
import { VarName } from './p04-http-request';
import { P12, P12Schema } from './p12-docker-exec';
import { bindNamed, dbKindOf, runMongoRequest, runSql } from './sql';
import { definePrimitive, type DbOptions, type PrimitiveContext } from './types';

const CountCondition = z.string().refine((s) => parseNumericCondition(s) !== undefined, {
  message: 'a count condition like ">=1", "==0", "<5" or "3"',
});

export const P08Schema = z
  .object({
    sql: z.string().trim().min(1).optional(),
    /** values of `:name` parameters in sql, bound as literals of the engine */
    params: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), JsonSchema).optional(),
    /** a MongoDB read instead of SQL (src/primitives/mongo-op.ts) */
    mongo: MongoOpSchema.optional(),
    /** a name of environment.databases; default the primary database */
    database: z.string().min(1).optional(),
    /** other credentials / database name on the same server */
    connection: z.object({ user: z.string().min(1).optional(), password: z.string().optional(), name: z.string().min(1).optional(), port: z.number().int().positive().optional() }).strict().optional(),
    expected_result: z.union([z.boolean(), z.number().int().min(0), CountCondition, z.record(z.string(), JsonSchema)]).optional(),
    /** condition on the number of rows */
    row_count: CountCondition.optional(),
    /** condition on the rows an INSERT/UPDATE/DELETE changed */
    affected_rows: CountCondition.optional(),
    /** every check must pass */
    assertions: z.array(RowCheckSchema).min(1).optional(),
    /** at least one check must pass */
    any_of: z.array(RowCheckSchema).min(1).optional(),
    /** each object must match (column subset) some row */
    rows_contain: z.array(z.record(z.string(), JsonSchema)).min(1).optional(),
    /** the result is exactly these rows, in order (same columns, equal values) */
    rows_equal: z.array(z.record(z.string(), JsonSchema)).optional(),
    /** the result has exactly this many rows and row i has object i's columns with equal values (other columns not compared) */
    rows_match: z.array(z.record(z.string(), JsonSchema)).optional(),
    /** the first row must equal the row stored earlier in this variable (every stored column) */
    equals_var: VarName.optional(),
    /** store the first row (an object) */
    store_as: VarName.optional(),
    /** store one value of the first row: value_field, default the first column */
    store_value_as: VarName.optional(),
    value_field: z.string().min(1).optional(),
    /** variable → JSONPath into the result body: the first match is stored */
    capture: z.record(VarName, z.string().min(1)).optional(),
    /** stored instead when the query returns no rows (for store_as a scalar fills every result column) */
    store_fallback: JsonSchema.optional(),
    /** when the checks fail, this command (P12 inputs) decides instead */
    fallback_exec: P12Schema.optional(),
    /** re-run the query until the checks pass or timeout_s has passed */
    retry: z.object({ timeout_s: z.number().positive().max(600), interval_s: z.number().positive().max(60).default(1) }).strict().optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if ((v.sql === undefined) === (v.mongo === undefined)) ctx.addIssue({ code: 'custom', path: ['sql'], message: 'give sql or mongo (exactly one)' });
    if (v.mongo && (v.affected_rows !== undefined || v.connection || v.params)) ctx.addIssue({ code: 'custom', path: ['mongo'], message: 'affected_rows, connection and params apply to SQL' });
    if (v.value_field && !v.store_value_as) ctx.addIssue({ code: 'custom', path: ['value_field'], message: 'value_field needs store_value_as' });
    if (v.store_fallback !== undefined && !v.store_as && !v.store_value_as) ctx.addIssue({ code: 'custom', path: ['store_fallback'], message: 'store_fallback needs store_as or store_value_as' });
  });
type Input = z.infer<typeof P08Schema>;

/** A value of expected_result's object form against one column of the first row. */
function cellMatches(actual: unknown, expected: Json): { ok: boolean; why?: string } {
  if (typeof expected === 'string') {
    if (expected === 'NOT NULL') return { ok: actual !== null };
    if (expected === 'NULL') return { ok: actual === null };
    const cond = /^\s*(>=|<=|==|!=|>|<)/.test(expected) ? parseNumericCondition(expected) : undefined;
    if (cond) {
      const a = asNumeric(actual);
      if (a === undefined) return { ok: false, why: `not a number` };
      return { ok: compareNum(a, cond.op, cond.n) };
    }
  }
  return { ok: typeof expected === 'boolean' ? dbEqual(actual, expected) : sqlEqual(actual, expected) };
}

function countOk(n: number, cond: string): boolean {
  const c = parseNumericCondition(cond)!;
  return compareNum(n, c.op, c.n);
}

interface Result extends CheckSubject {
  affected?: number;
  elapsedMs: number;
}

async function query(input: Input, ctx: PrimitiveContext, opts: DbOptions): Promise<{ ok: true; r: Result } | { ok: false; error: string }> {
  if (input.mongo) {
    const ran = await runMongoRequest(ctx.env, input.mongo, opts);
    if (!ran.ok) return ran;
    const rows = toJson(ran.result.rows) as Record<string, Json>[];
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const value = toJson(ran.result.value);
    return { ok: true, r: { rows, columns, body: { rows, row_count: rows.length, value }, elapsedMs: ran.elapsedMs } };
  }
  let text = input.sql as string;
  if (input.params) {
    const k = dbKindOf(ctx.env, opts);
    if (!k.ok) return k;
    const b = bindNamed(text, input.params, k.kind);
    if ('error' in b) return { ok: false, error: b.error };
    text = b.text;
  }
  const ran = await runSql(ctx.env, text, opts);
  if (!ran.ok) return ran;
  const rows = toJson(ran.result.rows) as Record<string, Json>[];
  const affected = ran.result.affectedRows;
  const body: Record<string, Json> = { rows, row_count: rows.length, ...(affected !== undefined ? { affected_rows: affected } : {}) };
  return { ok: true, r: { rows, columns: ran.result.columns, body, affected, elapsedMs: ran.elapsedMs } };
}

/** Every check of the step against one result; [] = all passed. */
function failuresOf(input: Input, r: Result, vars: Record<string, Json>): string[] {
  const failures: string[] = [];
  const { rows, columns } = r;
  const first = rows[0];
  const er = input.expected_result;
  if (typeof er === 'boolean') {
    if (rows.length > 0 !== er) failures.push(`expected ${er ? 'at least one row' : 'no rows'}, got ${rows.length}`);
  } else if (typeof er === 'number') {
    if (rows.length !== er) failures.push(`expected ${er} row(s), got ${rows.length}`);
  } else if (typeof er === 'string') {
    const single = rows.length === 1 && columns.length === 1 ? asNumeric(first[columns[0]]) : undefined;
    const value = single ?? rows.length;
    if (!countOk(value, er)) failures.push(`${single !== undefined ? `${columns[0]} = ${value}` : `row count ${value}`}, expected ${er}`);
  } else if (er !== undefined && Object.keys(er).length > 0) {
    if (!first) failures.push(`no rows; expected ${show(er)}`);
    else for (const [col, want] of Object.entries(er)) {
      if (!Object.prototype.hasOwnProperty.call(first, col)) {
        failures.push(`column ${col} not in the result (columns: ${columns.join(', ')})`);
        continue;
      }
      const m = cellMatches(first[col], want);
      if (!m.ok) failures.push(`${col} = ${show(first[col])}${m.why ? ` (${m.why})` : ''}, expected ${show(want)}`);
    }
  }
  if (input.row_count !== undefined && !countOk(rows.length, input.row_count)) failures.push(`row count ${rows.length}, expected ${input.row_count}`);
  if (input.affected_rows !== undefined) {
    if (r.affected === undefined) failures.push('the statement reported no affected rows (it returned a result set)');
    else if (!countOk(r.affected, input.affected_rows)) failures.push(`${r.affected} row(s) affected, expected ${input.affected_rows}`);
  }
  for (const c of input.assertions ?? []) {
    const f = runCheck(c, r);
    if (f) failures.push(f);
  }
  if (input.any_of) {
    const fs = input.any_of.map((c) => runCheck(c, r));
    if (fs.every((f) => f !== undefined)) failures.push(`none of ${fs.length} alternative check(s) passed: ${fs.join('; ')}`);
  }
  for (const want of input.rows_contain ?? []) {
    if (!rows.some((row) => Object.entries(want).every(([k, v]) => Object.prototype.hasOwnProperty.call(row, k) && dbEqual(row[k], v)))) failures.push(`no row matches ${show(want)}`);
  }
  if (input.rows_equal) {
    const want = input.rows_equal;
    if (rows.length !== want.length) failures.push(`${rows.length} row(s), expected exactly ${want.length}`);
    else want.forEach((w, i) => {
      const keys = Object.keys(rows[i]);
      const same = keys.length === Object.keys(w).length && keys.every((k) => Object.prototype.hasOwnProperty.call(w, k) && dbEqual(rows[i][k], w[k]));
      if (!same) failures.push(`row ${i + 1} is ${show(rows[i])}, expected ${show(w)}`);
    });
  }
  if (input.rows_match) {
    const want = input.rows_match;
    if (rows.length !== want.length) failures.push(`${rows.length} row(s), expected ${want.length}`);
    else want.forEach((w, i) => {
      const bad = Object.entries(w).filter(([k, v]) => !Object.prototype.hasOwnProperty.call(rows[i], k) || !dbEqual(rows[i][k], v));
      if (bad.length) failures.push(`row ${i + 1}: ${bad.map(([k, v]) => `${k} = ${show(rows[i][k])}, expected ${show(v)}`).join(', ')}`);
    });
  }
  if (input.equals_var) {
    const saved = vars[input.equals_var];
    if (saved === undefined || saved === null || typeof saved !== 'object' || Array.isArray(saved)) failures.push(`equals_var: ${input.equals_var} holds no stored row`);
    else if (!first) failures.push(`equals_var: no rows to compare with ${input.equals_var}`);
    else for (const [k, v] of Object.entries(saved)) if (!dbEqual(first[k], v)) failures.push(`${k} = ${show(first[k])}, was ${show(v)} (${input.equals_var})`);
  }
  return failures;
}

/** Captures after a passing check; a missing row without store_fallback fails the capture. */
function capture(input: Input, r: Result, ctx: PrimitiveContext, failures: string[]): Record<string, Json> {
  const stored: Record<string, Json> = {};
  const first = r.rows[0];
  const fb = input.store_fallback;
  if (input.store_as) {
    if (first) stored[input.store_as] = first;
    else if (fb !== undefined) stored[input.store_as] = fb !== null && typeof fb === 'object' ? fb : Object.fromEntries(r.columns.map((c) => [c, fb]));
    else failures.push(`store_as ${input.store_as}: no rows`);
  }
  if (input.store_value_as) {
    const col = input.value_field ?? r.columns[0];
    if (first && col !== undefined && Object.prototype.hasOwnProperty.call(first, col)) stored[input.store_value_as] = first[col];
    else if (fb !== undefined) stored[input.store_value_as] = fb;
    else failures.push(`store_value_as ${input.store_value_as}: ${first ? `no column ${col}` : 'no rows'}`);
  }
  for (const [name, p] of Object.entries(input.capture ?? {})) {
    const m = queryJsonPath(r.body, p);
    if (m.length === 0 || m[0] === null || m[0] === undefined) failures.push(`capture ${name}: ${p} matched nothing`);
    else stored[name] = m[0] as Json;
  }
  if (failures.length === 0) for (const [k, v] of Object.entries(stored)) ctx.setVar(k, v);
  return stored;
}

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

/**
 * P08: run the SQL (or MongoDB read) on the task's database — or the named one — then every check
 * (expected_result, row_count, affected_rows, assertions, any_of, rows_contain, equals_var), with
 * `retry` re-running until they pass; a failing step may be rescued by `fallback_exec`. Captures
 * happen only when the checks pass. The result becomes the chain's last response
 * {status 200, body {rows, row_count, affected_rows?, value?}} so a P07 can follow.
 */
export const P08 = definePrimitive({
  id: 'P08',
  name: 'db_query',
  schema: P08Schema,
  produces: (i) => ({
    exported: [i.store_as, i.store_value_as, ...(i.capture && typeof i.capture === 'object' ? Object.keys(i.capture) : [])].filter((x): x is string => typeof x === 'string' && x.length > 0),
    local: ['previous', 'last_status', 'last_body', 'last_headers'],
  }),
  async run(input, ctx) {
    const opts: DbOptions = { database: input.database, connection: input.connection };
    const what = input.sql ?? `mongo ${input.mongo!.operation} ${input.mongo!.collection}`;
    const deadline = Date.now() + (input.retry?.timeout_s ?? 0) * 1000;
    let attempts = 0;
    let ran: Awaited<ReturnType<typeof query>>;
    let failures: string[];
    for (;;) {
      attempts++;
      ran = await query(input, ctx, opts);
      failures = ran.ok ? failuresOf(input, ran.r, ctx.state.vars) : [ran.error];
      if (failures.length === 0 || !input.retry || Date.now() + input.retry.interval_s * 1000 > deadline) break;
      await sleep(input.retry.interval_s * 1000);
    }
    const data: Record<string, unknown> = { query: what, attempts, ...(input.database ? { database: input.database } : {}) };
    if (ran.ok) {
      const r = ran.r;
      ctx.state.last = { method: input.mongo ? 'MONGO' : 'SQL', path: what.slice(0, 200), status: 200, headers: {}, body: r.body, elapsedMs: r.elapsedMs };
      Object.assign(data, { row_count: r.rows.length, columns: r.columns, rows: r.rows.slice(0, 20), ...(r.affected !== undefined ? { affected_rows: r.affected } : {}) });
    }
    if (failures.length && input.fallback_exec) {
      const fb = await P12.run(input.fallback_exec, ctx);
      data.fallback = { passed: fb.passed, message: fb.message };
      if (fb.passed) return { passed: true, message: `query checks failed (${failures.join('; ')}); fallback command passed: ${fb.message}`, data };
      failures.push(`fallback command failed: ${fb.message}`);
    }
    if (!ran.ok) return { passed: false, message: failures.join('; '), data };
    if (failures.length === 0) {
      const stored = capture(input, ran.r, ctx, failures);
      if (Object.keys(stored).length) data.stored = Object.keys(stored);
    }
    const n = ran.r.rows.length;
    const passed = failures.length === 0;
    const rowsText = `${input.mongo ? 'request' : 'query'} returned ${n} row(s)${ran.r.affected !== undefined ? `, ${ran.r.affected} affected` : ''}${attempts > 1 ? ` after ${attempts} attempts` : ''}`;
    return { passed, message: passed ? `${rowsText}${data.stored ? `; stored ${(data.stored as string[]).join(', ')}` : ''}` : `${rowsText}; ${failures.join('; ')}`, data };
  },
});
