import { z } from 'zod';
import { show } from './compare';
import { VarName } from './p04-http-request';
import { definePrimitive, type PrimitiveEnv } from './types';

const Seconds = z.number().positive().max(3600);
const ExitCode = z.number().int().min(0).max(255);
const Texts = z.array(z.string().min(1)).min(1);
const Regex = z.string().min(1).refine((s) => {
  try {
    new RegExp(s, 'm');
    return true;
  } catch {
    return false;
  }
}, 'not a valid regular expression');

export const P12Schema = z
  .object({
    command: z.string().min(1),
    container: z.string().min(1).optional(),
    service: z.string().min(1).optional(),
    timeout: Seconds.optional(),
    timeout_seconds: Seconds.optional(),
    expect_exit_code: ExitCode.nullable().optional(),
    /** the exit code must be one of these */
    expect_exit_codes: z.array(ExitCode).min(1).optional(),
    expect_success: z.boolean().optional(),
    expect_output_contains: z.string().min(1).optional(),
    /** every one of these substrings must appear in the output */
    expect_output_contains_all: Texts.optional(),
    /** at least one of these substrings must appear */
    expect_output_contains_any: Texts.optional(),
    /** each group: at least one of its substrings must appear */
    expect_output_contains_groups: z.array(Texts).min(1).optional(),
    /** none of these substrings may appear */
    expect_output_not_contains: Texts.optional(),
    /** the output must match this regular expression (multiline) */
    expect_output_regex: Regex.optional(),
    /** none of these regular expressions may match the output */
    forbid_output_regex: z.array(Regex).min(1).optional(),
    /** at least this many non-empty output lines */
    expect_output_min_lines: z.number().int().min(1).optional(),
    /** stdout alone (not stderr): contains this / one of these / has this many non-empty lines / is an integer ≥ n */
    expect_stdout_contains: z.string().min(1).optional(),
    expect_stdout_contains_any: Texts.optional(),
    expect_stdout_min_lines: z.number().int().min(1).optional(),
    expect_stdout_int_min: z.number().optional(),
    /** a teardown step (it resets data): never run during an evaluation; the step passes saying so */
    teardown_only: z.literal(true).optional(),
    capture_stdout_as: VarName.optional(),
    /** variable → regular expression on stdout: its first group (else the whole match) is stored */
    capture: z.record(VarName, Regex).optional(),
  })
  .strict()
  .refine((v) => v.timeout === undefined || v.timeout_seconds === undefined, { message: 'give timeout or timeout_seconds, not both', path: ['timeout_seconds'] })
  .refine((v) => [v.expect_exit_code, v.expect_success, v.expect_exit_codes].filter((x) => x !== undefined).length <= 1, { message: 'give one of expect_exit_code, expect_exit_codes, expect_success', path: ['expect_success'] });

export const DEFAULT_EXEC_TIMEOUT_S = 300;

/**
 * Which compose service a published `container` name means. Published DAGs name containers of
 * their own compose projects (`task_aoiwqoiq-app`, `lago-smoke-db`); ours are per-rollout, so the
 * name is mapped onto a service of this stack:
 *  1. the name is itself a service name → that service;
 *  2. it ends with `-<service>` or `_<service>` for a known service → that service (longest wins);
 *  3. otherwise → the app service.
 * Without a service list (env.services unset) only rule 1 against the app service and rule 3 apply.
 */
export function serviceForContainer(container: string, services: readonly string[] | undefined, appService: string): string {
  const known = services && services.length ? services : [appService];
  if (known.includes(container)) return container;
  const suffixed = known.filter((s) => container.endsWith(`-${s}`) || container.endsWith(`_${s}`)).sort((a, b) => b.length - a.length);
  return suffixed[0] ?? appService;
}

function targetService(input: { container?: string; service?: string }, env: PrimitiveEnv): { service: string; error?: string } {
  if (input.service !== undefined) {
    if (env.services && !env.services.includes(input.service)) {
      return { service: input.service, error: `unknown service "${input.service}" (services: ${env.services.join(', ')})` };
    }
    if (input.container !== undefined) {
      const mapped = serviceForContainer(input.container, env.services, env.appService);
      if (mapped !== input.service) return { service: input.service, error: `container "${input.container}" maps to service "${mapped}", but service is "${input.service}"` };
    }
    return { service: input.service };
  }
  if (input.container !== undefined) return { service: serviceForContainer(input.container, env.services, env.appService) };
  return { service: env.appService };
}

/** The output checks, in the order they are documented. */
function outputProblems(input: z.infer<typeof P12Schema>, output: string, stdout: string): string[] {
  const problems: string[] = [];
  const q = (t: string) => JSON.stringify(t);
  if (input.expect_output_contains !== undefined && !output.includes(input.expect_output_contains)) problems.push(`output does not contain ${q(input.expect_output_contains)}`);
  const missing = (input.expect_output_contains_all ?? []).filter((t) => !output.includes(t));
  if (missing.length) problems.push(`output lacks ${missing.map(q).join(', ')}`);
  if (input.expect_output_contains_any && !input.expect_output_contains_any.some((t) => output.includes(t))) problems.push(`output contains none of ${input.expect_output_contains_any.map(q).join(', ')}`);
  for (const g of input.expect_output_contains_groups ?? []) if (!g.some((t) => output.includes(t))) problems.push(`output contains none of ${g.map(q).join(', ')}`);
  const present = (input.expect_output_not_contains ?? []).filter((t) => output.includes(t));
  if (present.length) problems.push(`output contains ${present.map(q).join(', ')}`);
  if (input.expect_output_regex !== undefined && !new RegExp(input.expect_output_regex, 'm').test(output)) problems.push(`output does not match /${input.expect_output_regex}/`);
  for (const re of input.forbid_output_regex ?? []) {
    const m = new RegExp(re, 'm').exec(output);
    if (m) problems.push(`output matches forbidden /${re}/ (${q(m[0].slice(0, 80))})`);
  }
  const lines = output.split(/\r?\n/).filter((l) => l.trim()).length;
  if (input.expect_output_min_lines !== undefined && lines < input.expect_output_min_lines) problems.push(`${lines} output line(s), expected at least ${input.expect_output_min_lines}`);
  if (input.expect_stdout_contains !== undefined && !stdout.includes(input.expect_stdout_contains)) problems.push(`stdout does not contain ${q(input.expect_stdout_contains)}`);
  if (input.expect_stdout_contains_any && !input.expect_stdout_contains_any.some((t) => stdout.includes(t))) problems.push(`stdout contains none of ${input.expect_stdout_contains_any.map(q).join(', ')}`);
  const outLines = stdout.split(/\r?\n/).filter((l) => l.trim()).length;
  if (input.expect_stdout_min_lines !== undefined && outLines < input.expect_stdout_min_lines) problems.push(`${outLines} stdout line(s), expected at least ${input.expect_stdout_min_lines}`);
  if (input.expect_stdout_int_min !== undefined) {
    const t = stdout.trim();
    if (!/^[-+]?\d+$/.test(t)) problems.push(`stdout ${q(t.slice(0, 40))} is not an integer`);
    else if (Number(t) < input.expect_stdout_int_min) problems.push(`stdout ${t} < ${input.expect_stdout_int_min}`);
  }
  return problems;
}

/**
 * P12: `bash -c <command>` in a service container (default: the app). Passes when the exit code is
 * as expected (expect_exit_code, default 0, null = any; expect_success true ≡ 0, false ≡ non-zero)
 * and stdout+stderr contains expect_output_contains. capture_stdout_as stores the last non-empty
 * stdout line, trimmed. Also sets the chain-local `previous` = {stdout, output, exit_code}.
 */
export const P12 = definePrimitive({
  id: 'P12',
  name: 'docker_exec',
  schema: P12Schema,
  produces: (i) => ({
    exported: [...(typeof i.capture_stdout_as === 'string' ? [i.capture_stdout_as] : []), ...(i.capture && typeof i.capture === 'object' ? Object.keys(i.capture) : [])],
    local: ['previous'],
  }),
  async run(input, ctx) {
    const { env } = ctx;
    if (input.teardown_only) return { passed: true, message: 'a teardown-only step: not run during an evaluation', data: { skipped: 'teardown_only' } };
    const target = targetService(input, env);
    if (target.error) return { passed: false, message: target.error };
    const timeoutS = input.timeout_seconds ?? input.timeout ?? DEFAULT_EXEC_TIMEOUT_S;
    const r = await env.exec(target.service, input.command, { timeoutMs: timeoutS * 1000 });
    const output = r.stdout + (r.stdout && r.stderr && !r.stdout.endsWith('\n') ? '\n' : '') + r.stderr;
    const data: Record<string, unknown> = {
      service: target.service,
      exit_code: r.exitCode,
      timed_out: r.timedOut,
      stdout_tail: r.stdout.slice(-2000),
      stderr_tail: r.stderr.slice(-2000),
    };
    if (r.timedOut) return { passed: false, message: `command timed out after ${timeoutS}s in ${target.service}`, data };
    ctx.state.vars.previous = { stdout: r.stdout.trim(), output: output.trim(), exit_code: r.exitCode };
    const problems: string[] = [];
    if (input.expect_exit_codes) {
      if (!input.expect_exit_codes.includes(r.exitCode)) problems.push(`exit code ${r.exitCode}, expected one of ${input.expect_exit_codes.join(', ')}`);
    } else if (input.expect_success !== undefined) {
      if (input.expect_success !== (r.exitCode === 0)) problems.push(`exit code ${r.exitCode}, expected ${input.expect_success ? '0' : 'non-zero'}`);
    } else if (input.expect_exit_code !== null) {
      const want = input.expect_exit_code ?? 0;
      if (r.exitCode !== want) problems.push(`exit code ${r.exitCode}, expected ${want}`);
    }
    problems.push(...outputProblems(input, output, r.stdout));
    if (input.capture_stdout_as) {
      const line = r.stdout.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).pop();
      if (line === undefined) problems.push(`capture_stdout_as ${input.capture_stdout_as}: stdout is empty`);
      else {
        data.captured = { [input.capture_stdout_as]: line };
        if (problems.length === 0) ctx.setVar(input.capture_stdout_as, line);
      }
    }
    for (const [name, re] of Object.entries(input.capture ?? {})) {
      const m = new RegExp(re, 'm').exec(r.stdout);
      if (!m) problems.push(`capture ${name}: /${re}/ does not match stdout`);
      else {
        const value = m[1] ?? m[0];
        data.captured = { ...((data.captured as object) ?? {}), [name]: value.length > 12 ? `${value.slice(0, 4)}…(${value.length} chars)` : value };
        if (problems.length === 0) ctx.setVar(name, value);
      }
    }
    const passed = problems.length === 0;
    const tail = passed ? '' : `; stderr ${show(r.stderr.trim().slice(-300))}`;
    return {
      passed,
      message: `${target.service}: exit ${r.exitCode}${problems.length ? `; ${problems.join('; ')}` : ''}${tail}`,
      data,
    };
  },
});
