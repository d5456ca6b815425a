import type { DialectContext } from './types';
import { isObject, type Inputs } from './util';

/**
 * Pieces shared by the HTTP dialects (P04, P05, P14, P16, P23, P24, P26, P27, P28, P29).
 */

/**
 * jzssnoqp's evaluator expands these `${NAME}` path prefixes when it builds a URL (its utils.py
 * `_PATH_PREFIX_DEFAULTS`, overridable by the evaluator's own environment, which is not part of the
 * task): the defaults are the values the published runs used.
 */
const JZSSNOQP_PREFIXES: Record<string, string> = {
  API_V1_PREFIX: '/api/v1',
  API_V2_PREFIX: '/api/v2',
  PLATFORM_API_PREFIX: '/platform/api/v1',
  PUBLIC_API_PREFIX: '/public/api/v1',
  WIDGET_API_PREFIX: '/api/v1/widget',
};

const SHELL_VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expand `${NAME}` / `${NAME:-default}` in every string of a step's inputs, as the task's evaluator
 * did before sending: xayqujrv's harness expands `${NAME:-default}` over the whole DAG from the
 * evaluator's environment (unset in a run, so the default); jzssnoqp expands its API prefixes.
 * A `${…}` with no known value is left for the canonical schema to reject (a path must start with /).
 */
export function expandShellVars(v: unknown, ctx: DialectContext, at = 'inputs'): unknown {
  if (typeof v === 'string') {
    if (!v.includes('${')) return v;
    return v.replace(SHELL_VAR, (m, name: string, dflt: string | undefined) => {
      if (dflt !== undefined) {
        ctx.spelling('${NAME:-default}', 'the default', 'a shell-style variable the evaluator expanded from its own environment (unset in a run): the default is the value');
        return dflt;
      }
      if (ctx.task === 'iyjruvfz') {
        // iyjruvfz's evaluator renders ${NAME} from its run context (captured ids, config constants)
        ctx.spelling('${NAME} (iyjruvfz)', '{{NAME}}', 'a variable of the run (captured earlier or a task constant)');
        return `{{${name}}}`;
      }
      if (ctx.task === 'jzssnoqp' && name in JZSSNOQP_PREFIXES) {
        ctx.spelling('${API_PREFIX}', 'the prefix', 'an API path prefix the evaluator expanded (its defaults: /api/v1, /api/v2, /platform/api/v1, /public/api/v1, /api/v1/widget)');
        return JZSSNOQP_PREFIXES[name];
      }
      ctx.issue(at, `"${m}" has no known value in task ${ctx.task}`);
      return m;
    });
  }
  if (Array.isArray(v)) return v.map((x, i) => expandShellVars(x, ctx, `${at}[${i}]`));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expandShellVars(x, ctx, `${at}.${k}`)]));
  return v;
}

/**
 * `{{a[0].b}}` → `{{a.0.b}}`: published placeholders index arrays with brackets; the canonical
 * template reads numeric segments after a dot.
 */
export function bracketPlaceholders(v: unknown, ctx: DialectContext): unknown {
  if (typeof v === 'string') {
    if (!/\{\{[^}]*\[\d+\][^}]*\}\}/.test(v)) return v;
    ctx.spelling('{{name[0]}}', '{{name.0}}', 'an array index inside a placeholder');
    return v.replace(/\{\{([^}]*)\}\}/g, (_m, inner: string) => `{{${inner.replace(/\[(\d+)\]/g, '.$1')}}}`);
  }
  if (Array.isArray(v)) return v.map((x) => bracketPlaceholders(x, ctx));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, bracketPlaceholders(x, ctx)]));
  return v;
}

/** Take a key out of the inputs (undefined when absent). */
export function take(i: Inputs, k: string): unknown {
  const v = i[k];
  delete i[k];
  return v;
}

/** Set a canonical key unless it is already given with another value (then an issue). */
export function put(i: Inputs, k: string, v: unknown, ctx: DialectContext, from: string): void {
  if (k in i && JSON.stringify(i[k]) !== JSON.stringify(v)) {
    ctx.issue(`inputs.${from}`, `"${from}" and "${k}" are both given with different meanings`);
    return;
  }
  i[k] = v;
}

/** Merge a header into the inputs' headers (the step's own header of that name wins). */
export function addHeader(i: Inputs, name: string, value: string): void {
  const h = isObject(i.headers) ? i.headers : {};
  if (!Object.keys(h).some((k) => k.toLowerCase() === name.toLowerCase())) h[name] = value;
  i.headers = h;
}

export const hasHeaderKey = (i: Inputs, name: string): boolean => isObject(i.headers) && Object.keys(i.headers).some((k) => k.toLowerCase() === name.toLowerCase());

/** A published boolean switch: true/false, else an issue (and undefined). */
export function flag(v: unknown, ctx: DialectContext, key: string): boolean | undefined {
  if (typeof v === 'boolean') return v;
  ctx.issue(`inputs.${key}`, 'must be true or false');
  return undefined;
}

/** The Content-Type a text body declares by its shape: JSON text, a url-encoded form, or plain text. */
export function sniffContentType(text: string): string {
  const t = text.trim();
  if (t.startsWith('{') || t.startsWith('[')) return 'application/json';
  if (/^[\w.%[\]-]+=[^&]*(&[\w.%[\]-]+=[^&]*)*$/.test(t)) return 'application/x-www-form-urlencoded';
  return 'text/plain; charset=utf-8';
}

/** Common preparation of every HTTP step: `${…}` expansion and bracket placeholders. */
export function prepare(inputs: Inputs, ctx: DialectContext): Inputs {
  return bracketPlaceholders(expandShellVars(inputs, ctx), ctx) as Inputs;
}
