import { z } from 'zod';
import { JsonSchema, type Json } from '../model/json';
import { deepEqual, show } from './compare';
import { LAST_VARS_LOCAL } from './auth/request';
import { queryJsonPath } from './jsonpath';
import { historyDeliveries } from './p27-receiver';
import { definePrimitive, type PrimitiveContext } from './types';
import { CaptureMap, captureFrom, fillTokens, Method, RequestSchema, sendRequest, SqlCheckSchema, sqlCheck, Status } from './workflow-http';

const Expect = z
  .object({ path: z.string().min(1), equals: JsonSchema.optional(), present: z.literal(true).optional() })
  .strict()
  .refine((e) => (e.equals !== undefined) !== (e.present !== undefined), { message: 'give equals or present: true' });

const StepSchema = RequestSchema.omit({ expected_status: true })
  .partial({ path: true })
  .extend({
    name: z.string().min(1),
    method: Method.default('GET'),
    /** statuses this step may answer (default: any below 400) */
    expect_status: z.array(Status).min(1).optional(),
    /** values the JSON answer must have */
    expect: z.array(Expect).min(1).optional(),
    /** the answer's body must equal that of an earlier step / must differ from it */
    same_body_as: z.string().min(1).optional(),
    differs_from: z.string().min(1).optional(),
    capture: CaptureMap.optional(),
    /** a pause instead of a request */
    wait_seconds: z.number().min(0).max(120).optional(),
  })
  .strict()
  .refine((s) => (s.path === undefined) !== (s.wait_seconds === undefined), { message: 'a step is a request (path) or a wait (wait_seconds)' });

const FinalSchema = z.union([
  SqlCheckSchema,
  z
    .object({
      /** GET this URL (a stack service's record of deliveries) */
      history_url: z.string().min(1),
      min_deliveries: z.number().int().min(0).default(1),
      /** a regex that some header of each counted delivery must match */
      header_regex: z.string().min(1).optional(),
    })
    .strict(),
]);

export const P29Schema = z
  .object({
    /** the request that creates the entity the steps work on */
    setup: RequestSchema.extend({ capture: CaptureMap.optional() }).optional(),
    /** values for the steps' `{name}` tokens */
    vars: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), JsonSchema).optional(),
    steps: z.array(StepSchema).default([]),
    final_verify: FinalSchema.optional(),
    timeout: z.number().positive().max(600).default(15),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (!v.setup && !v.steps.length && !v.final_verify) ctx.addIssue({ code: 'custom', path: ['steps'], message: 'a workflow needs a setup, steps or a final_verify' });
    const names = new Set<string>();
    v.steps.forEach((s, i) => {
      if (names.has(s.name)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'name'], message: `duplicate step name "${s.name}"` });
      for (const k of ['same_body_as', 'differs_from'] as const) {
        const ref = s[k];
        if (ref !== undefined && !names.has(ref)) ctx.addIssue({ code: 'custom', path: ['steps', i, k], message: `"${ref}" names no earlier step` });
      }
      names.add(s.name);
    });
  });

type Input = z.infer<typeof P29Schema>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * P29: a workflow — an optional setup request (its captures become `{name}` tokens), then steps in
 * order (each a request with status/value/body expectations, or a wait), then an optional final
 * check (a SQL row or pattern, or a receiver service's record). Stops at the first failing step;
 * passes when every step and the final check hold.
 */
export const P29 = definePrimitive({
  id: 'P29',
  name: 'multi_step_workflow',
  schema: P29Schema,
  produces: () => ({ exported: [], local: LAST_VARS_LOCAL }),
  async run(input: Input, ctx) {
    const vars: Record<string, Json> = { ...(input.vars ?? {}) };
    const declared = new Set<string>([...Object.keys(vars), ...Object.keys(input.setup?.capture ?? {}), ...input.steps.flatMap((s) => Object.keys(s.capture ?? {}))]);
    const lines: string[] = [];
    const bodies = new Map<string, unknown>();
    const fail = (msg: string) => ({ passed: false, message: `${lines.length ? `${lines.join('; ')}; ` : ''}${msg}`, data: { steps: lines, vars } });
    const fill = <T>(v: T, what: string): T | string => {
      const f = fillTokens(v, vars, declared);
      return f.missing.length ? `${what}: {${f.missing.join('}, {')}} not captured by this workflow` : f.value;
    };

    if (input.setup) {
      const { capture, ...req } = input.setup;
      const r = fill(req, 'setup');
      if (typeof r === 'string') return fail(r);
      const out = await sendRequest(ctx, r, input.timeout, 'setup');
      lines.push(out.line);
      if (out.problem) return fail(out.problem);
      const got = captureFrom(out.res!.body, capture, vars);
      if (got.length) lines.push(`captured ${got.join(', ')}`);
    }
    for (const step of input.steps) {
      if (step.wait_seconds !== undefined) {
        await sleep(step.wait_seconds * 1000);
        lines.push(`${step.name}: waited ${step.wait_seconds}s`);
        continue;
      }
      const r = fill({ method: step.method, path: step.path!, body: step.body, headers: step.headers, role: step.role, expected_status: step.expect_status }, step.name);
      if (typeof r === 'string') return fail(r);
      const out = await sendRequest(ctx, r, input.timeout, step.name);
      lines.push(out.line);
      if (out.problem) return fail(out.problem);
      const body = out.res!.body;
      const problem = expectations(step, body, bodies);
      if (problem) return fail(`${step.name}: ${problem}`);
      bodies.set(step.name, body);
      captureFrom(body, step.capture, vars);
    }
    if (input.final_verify) {
      const f = fill(input.final_verify, 'final_verify');
      if (typeof f === 'string') return fail(f);
      const problem = 'sql' in f ? await sqlCheck(ctx, f) : await historyCheck(ctx, f, input.timeout);
      if (problem) return fail(`final_verify: ${problem}`);
      lines.push('final_verify holds');
    }
    return { passed: true, message: lines.join('; '), data: { steps: lines, vars } };
  },
});

function expectations(step: z.infer<typeof StepSchema>, body: unknown, bodies: Map<string, unknown>): string {
  for (const e of step.expect ?? []) {
    const hits = queryJsonPath(body, e.path);
    if (hits.length === 0) return `nothing at ${e.path} in ${show(body, 200)}`;
    if (e.equals !== undefined && !deepEqual(hits[0], e.equals)) return `${e.path} is ${show(hits[0])}, expected ${show(e.equals)}`;
  }
  if (step.same_body_as && !deepEqual(body, bodies.get(step.same_body_as))) return `the answer differs from ${step.same_body_as}'s`;
  if (step.differs_from && deepEqual(body, bodies.get(step.differs_from))) return `the answer is the same as ${step.differs_from}'s`;
  return '';
}

async function historyCheck(ctx: PrimitiveContext, f: { history_url: string; min_deliveries: number; header_regex?: string }, timeout: number): Promise<string> {
  const out = await sendRequest(ctx, { method: 'GET', path: f.history_url, headers: {}, expected_status: [200] }, timeout, 'history');
  if (out.problem) return out.problem;
  const all = historyDeliveries(out.res!.body);
  const re = f.header_regex ? new RegExp(f.header_regex) : undefined;
  const counted = re ? all.filter((d) => Object.values(d.headers).some((v) => re.test(v))) : all;
  return counted.length >= f.min_deliveries ? '' : `${counted.length} recorded deliver${counted.length === 1 ? 'y' : 'ies'}${re ? ` with a header matching /${f.header_regex}/` : ''}, need ${f.min_deliveries}`;
}
