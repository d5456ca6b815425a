import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { RoleError } from './auth/provider';
import { requestFailure, sessionRequest, type SessionResponse } from './auth/request';
import { ensureRoleSession } from './auth/session';
import { asNumeric, deepEqual, show, sqlEqual, toJson } from './compare';
import { HTTP_METHODS, PathSchema, RoleName } from './p04-http-request';
import { queryJsonPath } from './jsonpath';
import { runSql } from './sql';
import type { PrimitiveContext } from './types';

/**
 * Pieces shared by the multi-request primitives (P24, P26, P28, P29): one request as a schema and
 * a runner, `{name}` tokens for values a workflow captured itself, and a row check.
 */

export const Status = z.number().int().min(100).max(599);
export const Method = z.string().transform((m) => m.toUpperCase()).pipe(z.enum(HTTP_METHODS));
const Headers = z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()]));

export const RequestSchema = z
  .object({
    method: Method.default('POST'),
    /** a path of the app, or an absolute URL of a stack service */
    path: z.union([PathSchema, z.string().regex(/^https?:\/\//, 'an absolute http(s) URL')]),
    body: JsonSchema.optional(),
    headers: Headers.default({}),
    /** act as this role ('anonymous': no credentials); default the chain's current role */
    role: RoleName.optional(),
    /** statuses the request may answer (default: any below 400) */
    expected_status: z.array(Status).min(1).optional(),
  })
  .strict();
export type RequestInput = z.infer<typeof RequestSchema>;

/** A capture: variable ← a JSONPath, or a list of paths tried in order. */
export const CaptureMap = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]));

/**
 * `{name}` in strings → the workflow's own captures (single braces; `{{…}}` are chain placeholders,
 * resolved before the step runs). Only names the workflow declares as captures are tokens, so a
 * literal `{x}` in a body (a GraphQL query) is left alone; a declared one not captured is missing.
 */
export function fillTokens<T>(value: T, vars: Record<string, Json>, declared: ReadonlySet<string>): { value: T; missing: string[] } {
  const missing = new Set<string>();
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      // a string that is exactly one token keeps the value's JSON type (ids stay numbers)
      const whole = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(v);
      if (whole && declared.has(whole[1])) {
        if (vars[whole[1]] === undefined) missing.add(whole[1]);
        return vars[whole[1]] ?? v;
      }
      return v.replace(/(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})/g, (m, name: string) => {
        if (!declared.has(name)) return m;
        const hit = vars[name];
        if (hit === undefined) {
          missing.add(name);
          return m;
        }
        return typeof hit === 'string' ? hit : JSON.stringify(hit);
      });
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { value: walk(value) as T, missing: [...missing] };
}

/** Send one request of a workflow; a failure (transport, role, status) comes back as a sentence. */
export async function sendRequest(ctx: PrimitiveContext, r: RequestInput, timeoutSec: number, what: string): Promise<{ res?: SessionResponse; problem?: string; line: string }> {
  const label = `${what} ${r.method} ${r.path}`;
  if (r.role) {
    try {
      await ensureRoleSession(ctx, r.role);
    } catch (e) {
      if (e instanceof RoleError) return { problem: `${label}: cannot act as role ${r.role}: ${e.message}`, line: label };
      throw e;
    }
  }
  const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
  try {
    const res = await sessionRequest(ctx, { method: r.method, path: r.path, headers, json: r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body, role: r.role, timeoutMs: timeoutSec * 1000 });
    const ok = r.expected_status ? r.expected_status.includes(res.status) : res.status < 400;
    const line = `${label} → ${res.status}`;
    return { res, line, problem: ok ? undefined : `${line}, expected ${r.expected_status ? r.expected_status.join('/') : '< 400'}; body ${show(res.body, 200)}` };
  } catch (e) {
    return { problem: requestFailure(e, label), line: label };
  }
}

/** Captures from a body; absent paths leave the variable unset (its later use fails naming it). */
export function captureFrom(body: unknown, map: Record<string, string | string[]> | undefined, into: Record<string, Json>): string[] {
  const got: string[] = [];
  for (const [name, spec] of Object.entries(map ?? {})) {
    for (const p of Array.isArray(spec) ? spec : [spec]) {
      const hit = queryJsonPath(body, p)[0];
      if (hit !== undefined && hit !== null) {
        into[name] = toJson(hit);
        got.push(name);
        break;
      }
    }
  }
  return got;
}

/** A SQL check: the first row has these values (numbers and numeric strings compare as numbers), its first cell matches a pattern, or enough rows. */
export const SqlCheckSchema = z
  .object({
    sql: z.string().trim().min(1),
    expect_row: z.record(z.string().min(1), JsonSchema).optional(),
    /** a regex the first row's first cell must match */
    expect_pattern: z.string().min(1).optional(),
    min_rows: z.number().int().min(0).optional(),
  })
  .strict()
  .refine((c) => c.expect_row || c.expect_pattern || c.min_rows !== undefined, { message: 'give expect_row, expect_pattern or min_rows' });
export type SqlCheck = z.infer<typeof SqlCheckSchema>;

/** Run a SQL check once: '' when it holds, else why not. */
export async function sqlCheck(ctx: PrimitiveContext, c: SqlCheck): Promise<string> {
  const ran = await runSql(ctx.env, c.sql);
  if (!ran.ok) return ran.error;
  const { rows } = ran.result;
  if (c.min_rows !== undefined && rows.length < c.min_rows) return `${rows.length} row(s), need ${c.min_rows}`;
  if (c.expect_row || c.expect_pattern) {
    if (!rows.length) return 'no rows';
    const row = rows[0];
    for (const [k, want] of Object.entries(c.expect_row ?? {})) {
      if (!(k in row)) return `no column ${k} (columns: ${ran.result.columns.join(', ')})`;
      const ok = typeof want === 'number' || asNumeric(row[k]) !== undefined ? sqlEqual(row[k], want) : deepEqual(row[k], want);
      if (!ok) return `${k} is ${show(row[k])}, expected ${show(want)}`;
    }
    if (c.expect_pattern) {
      const cell = row[ran.result.columns[0]];
      if (!new RegExp(c.expect_pattern).test(String(cell ?? ''))) return `${ran.result.columns[0]} ${show(cell)} does not match /${c.expect_pattern}/`;
    }
  }
  return '';
}
