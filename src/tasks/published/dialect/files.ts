import type { DialectContext, StepDialect } from './types';
import { copy, rename, type Inputs } from './util';

/**
 * Published spellings of the file primitives P01–P03 (canonical: src/primitives/p01–p03).
 * Facts: rjhcjrst's evaluator reads `any_of` as the candidate list and defaults `type` to "any"
 * (file or directory); sgdoserd's P02 `output_var: "stdout"` matches the previous P12's stdout;
 * cvyocaao's P02 without a path matches the previous HTTP response.
 */
const INLINE_I = /^\(\?i\)/;

function p01(inputs: Inputs, ctx: DialectContext): Inputs {
  rename(inputs, 'any_of', 'path_any_of', ctx, 'candidate paths: any one existing passes');
  if (Array.isArray(inputs.path)) {
    // egsszeqg's DEPLOY_REQUIRED_DIRECTORIES lists the layouts a monorepo may take (turbo.json,
    // nx.json, …; packages/cli, apps/api, …): one of them is expected
    rename(inputs, 'path', 'path_any_of', ctx, 'candidate paths: any one existing passes', 'inputs', 'path: [list]');
  }
  if (ctx.task === 'rjhcjrst' && inputs.type === undefined) {
    inputs.type = 'any';
    ctx.spelling('P01 without type (rjhcjrst)', 'type: any', 'the task\'s evaluator accepts a file or a directory when no type is given');
  }
  return inputs;
}

function p02(inputs: Inputs, ctx: DialectContext): Inputs {
  if ('output_var' in inputs) {
    const v = inputs.output_var;
    delete inputs.output_var;
    if (v !== 'stdout') ctx.issue('inputs.output_var', `unsupported output_var ${JSON.stringify(v)} (known: "stdout")`);
    else {
      inputs.from_variable = 'previous.stdout';
      ctx.spelling('output_var: "stdout"', 'from_variable: previous.stdout', 'match the previous P12 step\'s standard output instead of a file');
    }
  }
  if (inputs.path === undefined && inputs.path_any_of === undefined && inputs.from_variable === undefined && inputs.from_last_response === undefined) {
    inputs.from_last_response = true;
    ctx.spelling('P02 without path', 'from_last_response: true', 'match the body of the chain\'s last response (the page fetched just before)');
  }
  if (typeof inputs.pattern === 'string' && INLINE_I.test(inputs.pattern)) {
    inputs.pattern = inputs.pattern.replace(INLINE_I, '');
    inputs.ignore_case = true;
    ctx.spelling('pattern "(?i)…"', 'ignore_case: true', 'a Python inline flag for a case-insensitive regex (JavaScript has no inline flags)');
  }
  return inputs;
}

function p03(inputs: Inputs, ctx: DialectContext): Inputs {
  rename(inputs, 'pattern', 'glob', ctx, 'the glob of files to count, relative to the workspace');
  rename(inputs, 'min_count', 'min_expected', ctx, 'the least number of matching files');
  if ('type_filter' in inputs) {
    const t = inputs.type_filter;
    delete inputs.type_filter;
    if (t === 'directory' || t === 'dir') {
      inputs.glob = `${typeof inputs.glob === 'string' ? inputs.glob.replace(/\/+$/, '') : '**/*'}/`;
      ctx.spelling('type_filter: "directory"', 'glob ending with /', 'count directories only');
    } else if (t !== 'file') ctx.issue('inputs.type_filter', `unsupported type_filter ${JSON.stringify(t)} (known: "file", "directory")`);
    else ctx.spelling('type_filter: "file"', '(files are counted by default)', 'count files only');
  }
  return inputs;
}

export const filesDialect: StepDialect = {
  types: ['P01', 'P02', 'P03'],
  normalize(type, raw, ctx) {
    const inputs = copy(raw);
    const out = type === 'P01' ? p01(inputs, ctx) : type === 'P02' ? p02(inputs, ctx) : p03(inputs, ctx);
    return { type, inputs: out };
  },
};
