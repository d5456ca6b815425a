import { z } from 'zod';
import { JsonSchema, type Json } from '../json';
import { asNumeric, compareNum, parseNumericCondition, show, sqlEqual, toJson } from './compare';
import { VarName } from './p04-http-request';
import { runSql } from './sql';
import { definePrimitive } from './types';

const ROW_OPS = ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_null', 'is_null'] as const;
type RowOp = (typeof ROW_OPS)[number];
const NULLARY: readonly RowOp[] = ['exists', 'not_null', 'is_null'];

const RowAssertion = z
  .object({ field: z.string().min(1), operator: z.enum(ROW_OPS), expected: JsonSchema.optional() })
  .strict()
  .superRefine((a, ctx) => {
    if (NULLARY.includes(a.operator)) {
      if (a.expected !== undefined) ctx.addIssue({ code: 'custom', path: ['expected'], message: `${a.operator} takes no expected value` });
    } else if (a.expected === undefined) {
      ctx.addIssue({ code: 'custom', path: ['expected'], message: `${a.operator} needs an expected value` });
    } else if (['gt', 'gte', 'lt', 'lte'].includes(a.operator) && asNumeric(a.expected) === undefined) {
      ctx.addIssue({ code: 'custom', path: ['expected'], message: `${a.operator} needs a number` });
    }
  });

const CountCondition = z.string().refine((s) => parseNumericCondition(s) !== undefined, {
  message: 'a string expected_result must be a count condition like ">=1", "==0", "<5" or "3"',
});

export const P08Schema = z
  .object({
    sql: z.string().trim().min(1),
    expected_result: z.union([z.boolean(), z.number().int().min(0), CountCondition, z.record(z.string(), JsonSchema)]).optional(),
    store_as: VarName.optional(),
    assertions: z.array(RowAssertion).min(1).optional(),
  })
  .strict();

const OP_OF: Record<string, '>' | '>=' | '<' | '<='> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

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
  return { ok: sqlEqual(actual, expected) };
}

function checkRowAssertion(row: Record<string, Json>, a: z.infer<typeof RowAssertion>): string | undefined {
  if (!Object.prototype.hasOwnProperty.call(row, a.field)) return `${a.field}: no such column`;
  const v = row[a.field];
  switch (a.operator) {
    case 'exists':
    case 'not_null': return v !== null ? undefined : `${a.field} is NULL`;
    case 'is_null': return v === null ? undefined : `${a.field} = ${show(v)} is not NULL`;
    case 'equals': return sqlEqual(v, a.expected) ? undefined : `${a.field} = ${show(v)}, expected ${show(a.expected)}`;
    case 'not_equals': return !sqlEqual(v, a.expected) ? undefined : `${a.field} = ${show(v)}, expected anything else`;
    default: {
      const x = asNumeric(v);
      if (x === undefined) return `${a.field} = ${show(v)} is not a number`;
      return compareNum(x, OP_OF[a.operator], asNumeric(a.expected) as number) ? undefined : `${a.field} = ${show(v)}, expected ${OP_OF[a.operator]} ${show(a.expected)}`;
    }
  }
}

/**
 * P08: run the SQL; then expected_result, assertions and store_as (see docs/primitives.md for every
 * expected_result form). Sets the chain's last response to {status: 200, body: {rows, row_count}}
 * so a following P07 can assert on `$.rows[0].col`.
 */
export const P08 = definePrimitive({
  id: 'P08',
  name: 'db_query',
  schema: P08Schema,
  async run(input, ctx) {
    const ran = await runSql(ctx.env, input.sql);
    if (!ran.ok) return { passed: false, message: ran.error, data: { sql: input.sql } };
    const rows = toJson(ran.result.rows) as Record<string, Json>[];
    const columns = ran.result.columns;
    ctx.state.last = { method: 'SQL', path: input.sql.slice(0, 200), status: 200, headers: {}, body: { rows, row_count: rows.length }, elapsedMs: ran.elapsedMs };
    const data: Record<string, unknown> = { sql: input.sql, row_count: rows.length, columns, rows: rows.slice(0, 20) };
    const failures: string[] = [];
    const first = rows[0];
    const er = input.expected_result;
    if (er === undefined) {
      // the query ran: that is the check
    } else if (typeof er === 'boolean') {
      if (rows.length > 0 !== er) failures.push(`expected ${er ? 'at least one row' : 'no rows'}, got ${rows.length}`);
    } else if (typeof er === 'number') {
      if (rows.length !== er) failures.push(`expected ${er} row(s), got ${rows.length}`);
    } else if (typeof er === 'string') {
      const cond = parseNumericCondition(er)!;
      const single = rows.length === 1 && columns.length === 1 ? asNumeric(first[columns[0]]) : undefined;
      const value = single ?? rows.length;
      const what = single !== undefined ? `${columns[0]} = ${value}` : `row count ${value}`;
      if (!compareNum(value, cond.op, cond.n)) failures.push(`${what}, expected ${er}`);
    } else if (!first) {
      failures.push(`no rows; expected ${show(er)}`);
    } else {
      for (const [col, want] of Object.entries(er)) {
        if (!Object.prototype.hasOwnProperty.call(first, col)) {
          failures.push(`column ${col} not in the result (columns: ${columns.join(', ')})`);
          continue;
        }
        const m = cellMatches(first[col], want);
        if (!m.ok) failures.push(`${col} = ${show(first[col])}${m.why ? ` (${m.why})` : ''}, expected ${show(want)}`);
      }
    }
    if (input.assertions) {
      if (!first) failures.push('no rows to assert on');
      else for (const a of input.assertions) {
        const f = checkRowAssertion(first, a);
        if (f) failures.push(f);
      }
    }
    if (input.store_as) {
      if (!first) failures.push(`store_as ${input.store_as}: no rows`);
      else if (failures.length === 0) ctx.setVar(input.store_as, first);
    }
    const passed = failures.length === 0;
    return {
      passed,
      message: passed
        ? `query returned ${rows.length} row(s)${er !== undefined || input.assertions ? '; checks passed' : ''}${input.store_as ? `; stored as ${input.store_as}` : ''}`
        : `query returned ${rows.length} row(s); ${failures.join('; ')}`,
      data,
    };
  },
});
