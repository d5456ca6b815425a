import { unwrapDockerExec } from './shell-words';
import type { StepDialect } from './types';
import { copy, isObject, rename } from './util';

/**
 * Elixir/Mix failure markers that orghjavi's `forbid_elixir_errors` forbids in a command's output
 * (read from that task's evaluator, check/task_orghjavi_e/evaluate/primitives.py, P12).
 */
export const ELIXIR_ERROR_PATTERNS = [
  '\\*\\* \\(Mix\\)',
  '\\*\\* \\(CompileError',
  '\\*\\* \\(UndefinedFunctionError',
  '\\*\\* \\(KeyError',
  '\\*\\* \\(ArgumentError',
  '\\*\\* \\(MatchError',
  '\\*\\* \\(RuntimeError',
  '\\*\\* \\(FunctionClauseError',
  'could not compile dependency',
  'undefined function .* of module \\w',
  '\\(Mix\\) The task .* could not be found',
];

/** `{{app_container}}` and friends name the app container, which is P12's default target. */
const APP_CONTAINER_PLACEHOLDER = /^\{\{\s*(app_container|APP_CONTAINER)\s*\}\}$/;

/**
 * P12 (docker_exec) spellings. orghjavi writes host commands `docker exec <container> sh -c '…'`
 * (its evaluator ran them on the host): they are read as the inner command in that container.
 */
export const execDialect: StepDialect = {
  types: ['P12'],
  normalize(type, raw, ctx) {
    const inputs = copy(raw);
    if (typeof inputs.command === 'string') {
      const w = unwrapDockerExec(inputs.command);
      if (w && 'error' in w) ctx.issue('inputs.command', `a host "docker exec" command that cannot be read: ${w.error}`);
      else if (w) {
        if (w.user !== undefined || w.workdir !== undefined) ctx.issue('inputs.command', 'docker exec -u / -w are not supported');
        inputs.command = w.inner;
        if (!w.containerIsVariable) {
          if (inputs.container !== undefined && inputs.container !== w.container) ctx.issue('inputs.container', `container ${JSON.stringify(inputs.container)} disagrees with the command's docker exec target ${w.container}`);
          inputs.container = w.container;
        }
        ctx.spelling('command "docker exec <container> …"', 'command + container', 'a host command that runs a command in a container: that command runs in that container, host redirections and pipes with it (a $VARIABLE container is the app)');
      }
    }
    if ('mode' in inputs) {
      const m = inputs.mode;
      delete inputs.mode;
      if (m !== 'host') ctx.issue('inputs.mode', `unsupported mode ${JSON.stringify(m)} (known: "host")`);
      else if (typeof inputs.command === 'string') {
        // $(docker exec <app container> cmd) inside a host command reads the app's environment: run cmd in place
        const cmd = inputs.command.replace(/\$\(docker exec ([A-Za-z0-9_.-]+) ([^()`$]*)\)/g, (all: string, c: string, inner: string) => (/(^|[-_])app$/.test(c) ? `$(${inner})` : all));
        inputs.command = cmd;
        if (/docker\s+(exec|compose|run)\b/.test(cmd)) ctx.issue('inputs.command', 'a host command that drives docker (other than reading the app container) cannot run in a container');
        ctx.spelling('mode: "host"', 'command in the app container', 'a command the published evaluator ran on its host: it runs in the app container (its $(docker exec app …) reads become plain commands; localhost is the app container)');
      }
    }
    if ('skip_in_normal_run' in inputs) {
      const v = inputs.skip_in_normal_run;
      delete inputs.skip_in_normal_run;
      if (v === true) {
        inputs.teardown_only = true;
        ctx.spelling('skip_in_normal_run: true', 'teardown_only: true', 'a teardown step (it resets data): not run during an evaluation');
      } else if (v !== false) ctx.issue('inputs.skip_in_normal_run', 'must be true or false');
    }
    if ('expected_stdout_contains' in inputs) {
      const v = inputs.expected_stdout_contains;
      delete inputs.expected_stdout_contains;
      if (Array.isArray(v)) inputs.expect_stdout_contains_any = v;
      else inputs.expect_stdout_contains = v;
      ctx.spelling(Array.isArray(v) ? 'expected_stdout_contains [..]' : 'expected_stdout_contains', Array.isArray(v) ? 'expect_stdout_contains_any' : 'expect_stdout_contains', Array.isArray(v) ? 'stdout contains one of these (alternative answers, e.g. 200 or 204)' : 'stdout contains this text');
    }
    if ('expected_stdout_not_empty' in inputs || 'expected_line_count_min' in inputs) {
      const ne = inputs.expected_stdout_not_empty;
      const min = inputs.expected_line_count_min;
      delete inputs.expected_stdout_not_empty;
      delete inputs.expected_line_count_min;
      if (ne !== undefined && typeof ne !== 'boolean') ctx.issue('inputs.expected_stdout_not_empty', 'must be true or false');
      if (min !== undefined && (typeof min !== 'number' || min < 1)) ctx.issue('inputs.expected_line_count_min', 'must be a positive number');
      const n = Math.max(ne === true ? 1 : 0, typeof min === 'number' ? min : 0);
      if (n > 0) inputs.expect_stdout_min_lines = n;
      ctx.spelling('expected_stdout_not_empty / expected_line_count_min', 'expect_stdout_min_lines', 'stdout has at least this many non-blank lines (not empty = 1)');
    }
    rename(inputs, 'expected_stdout_int_min', 'expect_stdout_int_min', ctx, 'stdout is an integer at least this large');
    rename(inputs, 'capture_stdout_var', 'capture_stdout_as', ctx, 'store stdout (its last non-empty line, trimmed) as a variable');
    if (typeof inputs.container === 'string' && APP_CONTAINER_PLACEHOLDER.test(inputs.container)) {
      delete inputs.container;
      ctx.spelling('container "{{app_container}}"', '(the app service)', 'the placeholder the evaluator set to the app container');
    }
    rename(inputs, 'exit_code', 'expect_exit_code', ctx, 'the exit code the command must end with');
    rename(inputs, 'expected_exit_code', 'expect_exit_code', ctx, 'the exit code the command must end with');
    rename(inputs, 'expected_acceptable_exit_codes', 'expect_exit_codes', ctx, 'the command must end with one of these exit codes');
    rename(inputs, 'expect_output_match_regex', 'expect_output_regex', ctx, 'the output must match this regular expression');
    rename(inputs, 'expect_output_contains_all_any_form', 'expect_output_contains_groups', ctx, 'for each group, one of its spellings must appear in the output');
    rename(inputs, 'expect_output_not_contains_any', 'expect_output_not_contains', ctx, 'none of these texts may appear in the output');
    // both given and equal (true ≡ 0): one decision; different: the explicit exit code is the stricter statement
    if (inputs.expect_success !== undefined && inputs.expect_exit_code !== undefined) {
      const same = (inputs.expect_success === true && inputs.expect_exit_code === 0) || (inputs.expect_success === false && inputs.expect_exit_code !== 0);
      if (!same) ctx.issue('inputs.expect_success', `expect_success ${JSON.stringify(inputs.expect_success)} contradicts the expected exit code ${JSON.stringify(inputs.expect_exit_code)}`);
      delete inputs.expect_success;
      ctx.spelling('expect_success beside expect_exit_code', 'expect_exit_code', 'the same requirement said twice (checked to agree)');
    }
    if (inputs.expect_output_contains === '') {
      delete inputs.expect_output_contains;
      ctx.spelling('expect_output_contains: ""', '(no output check)', 'the empty text is contained in every output');
    }
    if ('forbid_elixir_errors' in inputs) {
      const v = inputs.forbid_elixir_errors;
      delete inputs.forbid_elixir_errors;
      if (typeof v !== 'boolean') ctx.issue('inputs.forbid_elixir_errors', 'must be true or false');
      else if (v) {
        inputs.forbid_output_regex = [...(Array.isArray(inputs.forbid_output_regex) ? inputs.forbid_output_regex : []), ...ELIXIR_ERROR_PATTERNS];
        ctx.spelling('forbid_elixir_errors: true', 'forbid_output_regex', 'the output must not show an Elixir/Mix error (** (CompileError …, undefined function …)');
      } else ctx.spelling('forbid_elixir_errors: false', '(nothing forbidden)', 'no Elixir error check');
    }
    if ('capture_to_context' in inputs) {
      const c = inputs.capture_to_context;
      delete inputs.capture_to_context;
      if (!isObject(c) || typeof c.context_key !== 'string' || typeof c.regex !== 'string' || Object.keys(c).some((k) => !['context_key', 'regex'].includes(k))) {
        ctx.issue('inputs.capture_to_context', 'expected {regex, context_key}');
      } else {
        inputs.capture = { ...(isObject(inputs.capture) ? inputs.capture : {}), [c.context_key]: c.regex };
        ctx.spelling('capture_to_context {regex, context_key}', 'capture {var: regex}', 'store the regex\'s first group (else whole match) of stdout as a variable');
      }
    }
    return { type, inputs };
  },
};
