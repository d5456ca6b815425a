import type { DialectContext } from './types';

/**
 * Where a published P07 path points. The forks addressed more than the JSON body with the same
 * `path` key: response headers (`$.headers.Location`, `headers.Token`, `$._headers.content-type`),
 * the raw text (`$.body_text`, `$._body_first_line`), the status (`$.status_code`, only where that
 * fork's response object had one), a saved response (`via_bills.$.data`, `$.first.id`), a command's
 * result after P12 (`$.exit_code`, `$.stdout`), and the first SQL row after P08 (`$.cnt`, where that
 * fork exposed rows that way). Each becomes an explicit canonical target.
 */
export interface Target {
  path: string;
  source?: 'status' | 'headers' | 'text' | 'first_line' | 'media_type' | 'envelope' | 'elapsed_ms' | 'size';
  /** a `{{name}}` placeholder of a saved response the path reads instead of the subject */
  body?: string;
  or_paths?: string[];
  as_number?: boolean;
}

/** How the step's subject was decided (json-assert.ts): the last response, or a command's result. */
export type SubjectKind = 'response' | 'sql' | 'exec' | 'exec_stdout';

/** Forks whose response object had a `status_code` field next to the body (gmdnohlg: utils.http_request). */
const STATUS_FIELD_TASKS = new Set(['gmdnohlg', 'uybznoms']);
/** Forks whose check after a SQL step read the first row's columns at the root (`$.cnt`, `$[0].version`). */
const FIRST_ROW_TASKS = new Set(['gmdnohlg', 'ychlukjm']);
/** Names of a command result's fields (ychlukjm, mjobbzsi) and where our `previous` keeps them. */
export const EXEC_ROOTS: Record<string, { path: string; as_number?: boolean; note?: string }> = {
  stdout: { path: '$.stdout' },
  exit_code: { path: '$.exit_code' },
  output: { path: '$.output' },
  stderr: { path: '$.output', note: 'stderr is read in the combined output (stdout then stderr): P12 keeps no separate stderr' },
  output_int: { path: '$.stdout', as_number: true, note: 'output_int is the trimmed stdout read as a number' },
};

/** `$.a.b` / `a.b` / `$['a'].b` → root segment and the rest (a JSONPath suffix starting with `.` or `[`). */
export function splitRoot(path: string): { root: string; rest: string } | undefined {
  const p = path.trim().startsWith('$') ? path.trim().slice(1) : `.${path.trim()}`;
  const dot = /^\.([A-Za-z_][A-Za-z0-9_-]*)(.*)$/.exec(p);
  if (dot) return { root: dot[1], rest: dot[2] };
  const br = /^\[['"]([^'"]+)['"]\](.*)$/.exec(p);
  return br ? { root: br[1], rest: br[2] } : undefined;
}

/** The header a `headers…` suffix names (`.OC-ETag`, `['www-authenticate']`), lower-cased; '' = all headers. */
function headerName(rest: string): string | undefined {
  if (rest === '') return '';
  const dot = /^\.([^.[\]]+)$/.exec(rest);
  if (dot) return dot[1].toLowerCase();
  const br = /^\[['"]([^'"]+)['"]\]$/.exec(rest);
  return br ? br[1].toLowerCase() : undefined;
}

/** Computed fields of egsszeqg and iyjruvfz (their evaluators derived them from the response, not from the body). */
const META: Record<string, { source: 'media_type' | 'envelope' | 'status' | 'elapsed_ms'; meaning: string }> = {
  '$.__meta.content_type': { source: 'media_type', meaning: 'the Content-Type without parameters' },
  '$.__meta.response_wrapper': { source: 'envelope', meaning: 'the top-level shape of the body (data, data[], root, root[], root:string)' },
  '$.__status': { source: 'status', meaning: 'the response status' },
  // iyjruvfz
  '$._response_time_ms': { source: 'elapsed_ms', meaning: 'the response time in milliseconds' },
};

/** egsszeqg's `key[?field=value]` element filter → the JSONPath filter `key[?(@.field=='value')]` (loose ==, as it compared text). */
function jsonPathFilters(path: string): string {
  return path.replace(/\[\?([A-Za-z_][A-Za-z0-9_]*)=([^\]()]*)\]/g, (_m, f: string, v: string) => `[?(@.${f}=='${v.replace(/'/g, "\\'")}')]`);
}

export function mapTarget(raw: string, ctx: DialectContext, subject: SubjectKind, saved: ReadonlySet<string>, label: string): Target {
  const said = (spelling: string, canonical: string, meaning: string) => ctx.spelling(`${label} ${spelling}`, canonical, meaning);
  let path = raw.trim();
  const meta = META[path];
  if (meta) {
    said(`"${path}"`, `source ${meta.source}`, meta.meaning);
    return { path: '$', source: meta.source };
  }
  if (/\[\?[A-Za-z_]/.test(path)) {
    path = jsonPathFilters(path);
    said('"key[?field=value]"', "JSONPath filter key[?(@.field=='value')]", 'the element whose field equals the value');
  }
  // `via_bills.$.meta.total` (rjhcjrst): a JSONPath into a response saved earlier in the chain
  const varForm = /^([A-Za-z_][A-Za-z0-9_]*)\.(\$.*)$/.exec(path);
  if (varForm) {
    said('"<saved>.$…"', 'body: "{{<saved>}}" + path', 'JSONPath into a response saved earlier in the chain');
    return { path: varForm[2], body: `{{${varForm[1]}}}` };
  }
  const row = mapIndexedRow(path, ctx, subject, label);
  if (row) return { path: row };
  const split = splitRoot(path);
  if (!split) return { path };
  const { root, rest } = split;
  if (subject === 'exec' && EXEC_ROOTS[root]) {
    const e = EXEC_ROOTS[root];
    said(`"$.${root}" after P12`, `body "{{previous}}" path ${e.path}${e.as_number ? ' as_number' : ''}`, e.note ?? `the command's ${root}`);
    return { path: `${e.path}${rest}`, ...(e.as_number ? { as_number: true } : {}) };
  }
  if (saved.has(root)) {
    said('"$.<saved>…"', 'body: "{{<saved>}}" + path', 'the first segment names a response saved earlier in the chain');
    return { path: `$${rest}`, body: `{{${root}}}` };
  }
  if (root === 'headers' || root === '_headers') {
    const h = headerName(rest);
    if (h !== undefined) {
      said(`"${root}.<Name>"`, "source headers, path $['<name>']", 'a response header (names are case-insensitive)');
      return { path: h === '' ? '$' : `$['${h}']`, source: 'headers' };
    }
  }
  if (root === 'body_text' && rest === '') {
    said('"$.body_text"', 'source text', 'the response body as text');
    return { path: '$', source: 'text' };
  }
  if (root === '_body_first_line' && rest === '') {
    said('"$._body_first_line"', 'source first_line', 'the first line of the response body');
    return { path: '$', source: 'first_line' };
  }
  if (root === 'status_code' && rest === '' && STATUS_FIELD_TASKS.has(ctx.task)) {
    said('"$.status_code"', 'source status', "the response status (this fork's response object carried it beside the body)");
    return { path: '$', source: 'status' };
  }
  if (ctx.task === 'gmdnohlg' && root === 'body' && rest === '') {
    said('"$.body"', 'path $', "the whole response body (gmdnohlg's response object field)");
    return { path: '$' };
  }
  if (ctx.task === 'gavmyneb' && root === 'body' && rest !== '') {
    said('"$.body.…"', 'path $.…', "the response body (gavmyneb's response object field)");
    return { path: `$${rest}` };
  }
  if (ctx.task === 'gmdnohlg' && root === 'api') {
    said('"$.api.…"', 'path $.api.… or_paths [$.ocs.…]', 'the OCS envelope under "api", or under "ocs" when the app kept that name (the fork tried both)');
    return { path: `$.api${rest}`, or_paths: [`$.ocs${rest}`] };
  }
  if (subject === 'sql' && FIRST_ROW_TASKS.has(ctx.task) && root !== 'rows' && root !== 'row_count') {
    said('"$.<column>" after P08', 'path $.rows[0].<column>', "a column of the query's first row");
    return { path: `$.rows[0].${root}${rest}` };
  }
  return { path };
}

/** `$[0].version` after P08 in a first-row fork → `$.rows[0].version`. */
function mapIndexedRow(path: string, ctx: DialectContext, subject: SubjectKind, label: string): string | undefined {
  if (subject !== 'sql' || !FIRST_ROW_TASKS.has(ctx.task)) return undefined;
  const m = /^\$(\[\d+\].*)$/.exec(path.trim());
  if (!m) return undefined;
  ctx.spelling(`${label} "$[N]…" after P08`, 'path $.rows[N]…', 'a row of the query result');
  return `$.rows${m[1]}`;
}
