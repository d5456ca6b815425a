import { z } from 'zod';
import { show } from './compare';
import { VarName } from './p04-http-request';
import { definePrimitive, type PrimitiveEnv } from './types';

const Seconds = z.number().positive().max(3600);

export const P12Schema = z
  .object({
    command: z.string().min(1),
    container: z.string().min(1).optional(),
    service: z.string().min(1).optional(),
    timeout: Seconds.optional(),
    timeout_seconds: Seconds.optional(),
    expect_exit_code: z.number().int().min(0).max(255).nullable().optional(),
    expect_success: z.boolean().optional(),
    expect_output_contains: z.string().min(1).optional(),
    capture_stdout_as: VarName.optional(),
  })
  .strict()
  .refine((v) => v.timeout === undefined || v.timeout_seconds === undefined, { message: 'give timeout or timeout_seconds, not both', path: ['timeout_seconds'] })
  .refine((v) => v.expect_exit_code === undefined || v.expect_success === undefined, { message: 'give expect_exit_code or expect_success, not both', path: ['expect_success'] });

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
  async run(input, ctx) {
    const { env } = ctx;
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
    if (input.expect_success !== undefined) {
      if (input.expect_success !== (r.exitCode === 0)) problems.push(`exit code ${r.exitCode}, expected ${input.expect_success ? '0' : 'non-zero'}`);
    } else if (input.expect_exit_code !== null) {
      const want = input.expect_exit_code ?? 0;
      if (r.exitCode !== want) problems.push(`exit code ${r.exitCode}, expected ${want}`);
    }
    if (input.expect_output_contains !== undefined && !output.includes(input.expect_output_contains)) {
      problems.push(`output does not contain ${JSON.stringify(input.expect_output_contains)}`);
    }
    if (input.capture_stdout_as) {
      const line = r.stdout.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).pop();
      if (line === undefined) problems.push(`capture_stdout_as ${input.capture_stdout_as}: stdout is empty`);
      else {
        data.captured = { [input.capture_stdout_as]: line };
        if (problems.length === 0) ctx.setVar(input.capture_stdout_as, line);
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
