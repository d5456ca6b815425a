import { existsSync, readFileSync } from 'node:fs';
import type { Json } from '../model/json';
import { sessionRequest } from './auth/request';
import { RENDER_DOM, RenderDomSchema } from './browser-render-dom';
import { SCREENSHOT, ScreenshotSchema } from './browser-screenshot';
import { HttpTransportError } from '../http/request';
import { queryJsonPath } from './jsonpath';
import { CODE, isSkipped, sampleFiles, splitEntries, type SampleOptions } from './judge-sampling';
import { bodyText, readPrereqResponses, toLogged, type LoggedResponse } from './response-log';
import type { PrimitiveContext } from './types';

/** Evidence spellings the canonical schema accepts, and the source each one names. */
export const EVIDENCE = {
  codebase: 'codebase',
  code_files: 'codebase',
  last_response: 'last_response',
  response_headers: 'response_headers',
  last_body: 'last_response',
  http_response_body: 'last_response',
  http_response_html: 'last_response',
  chain_responses: 'chain_responses',
  prereq_responses: 'prereq_responses',
  sql_result: 'sql_result',
  command_output: 'command_output',
  log_tail: 'log_tail',
  http_get: 'http_get',
  directory_listing: 'directory_listing',
  screenshot: 'screenshot',
  rendered_dom: 'rendered_dom',
} as const;
export type EvidenceKind = (typeof EVIDENCE)[keyof typeof EVIDENCE];
type EvidenceName = keyof typeof EVIDENCE;

export interface EvidenceInput extends SampleOptions {
  evidence_type?: EvidenceName | EvidenceName[];
  evidence_source?: EvidenceName;
  max_chars_per_file?: number;
  max_lines_per_file?: number;
  max_evidence_chars?: number;
  pages?: string[];
  http_get?: string[];
  path_filters?: string[];
  response_paths?: string[];
  listing_root?: string;
  listing_depth?: number;
}

/** The sources a step names, in order (default: the codebase). */
export function kindsOf(v: Pick<EvidenceInput, 'evidence_type' | 'evidence_source'>): EvidenceKind[] {
  const t = v.evidence_type ?? v.evidence_source ?? 'codebase';
  return (Array.isArray(t) ? t : [t]).map((k) => EVIDENCE[k]);
}

export interface Evidence {
  text: string;
  images?: { mediaType: string; base64: string }[];
  /** the workspace files shown (codebase), for the step record */
  sampled?: string[];
}
type Section = Evidence | { missing: string };

const MAX_FILE_CHARS = 10_000;
const MAX_LISTING = 500;
const MAX_EVIDENCE_CHARS = 120_000;
const MAX_IMAGES = 3;
const MAX_RESPONSE_CHARS = 8_000;

/** Every named source; any missing one means no verdict is asked for (the caller scores 0). */
export async function collectEvidence(kinds: EvidenceKind[], input: EvidenceInput, rubric: string, ctx: PrimitiveContext): Promise<Evidence | { missing: string }> {
  const sections: Evidence[] = [];
  for (const kind of kinds) {
    const s = await section(kind, input, rubric, ctx);
    if ('missing' in s) return { missing: kinds.length > 1 ? `${kind}: ${s.missing}` : s.missing };
    sections.push(kinds.length > 1 ? { ...s, text: `=== Evidence: ${kind} ===\n${s.text}` } : s);
  }
  const images = sections.flatMap((s) => s.images ?? []);
  const sampled = sections.flatMap((s) => s.sampled ?? []);
  return {
    text: sections.map((s) => s.text).join('\n\n').slice(0, input.max_evidence_chars ?? MAX_EVIDENCE_CHARS),
    ...(images.length ? { images } : {}),
    ...(sampled.length ? { sampled } : {}),
  };
}

function section(kind: EvidenceKind, input: EvidenceInput, rubric: string, ctx: PrimitiveContext): Promise<Section> | Section {
  const vars = ctx.state.vars;
  switch (kind) {
    case 'codebase':
      return codebaseEvidence(input, rubric, ctx);
    case 'last_response': {
      const last = ctx.state.last;
      if (!last) return { missing: 'no response earlier in this chain' };
      if (input.response_paths) {
        const values = input.response_paths.map((p) => `${p}: ${JSON.stringify(queryJsonPath(last.body, p)).slice(0, 10_000)}`);
        return { text: `${last.method} ${last.path} → ${last.status}; values at ${input.response_paths.join(', ')} (every match, as a list):\n${values.join('\n')}` };
      }
      return { text: `${last.method} ${last.path} → ${last.status}\n\n${bodyText(last.body).slice(0, 30_000)}` };
    }
    case 'response_headers': {
      const last = ctx.state.last;
      if (!last || last.method === 'SQL') return { missing: 'no HTTP response earlier in this chain' };
      return { text: `${last.method} ${last.path} → ${last.status}\nResponse headers (cookie values redacted):\n${Object.entries(last.headers).map(([k, v]) => `${k}: ${k.toLowerCase() === 'set-cookie' ? redactCookies(v) : v}`).join('\n')}` };
    }
    case 'chain_responses': {
      const all = ctx.state.responses ?? (ctx.state.last ? [ctx.state.last] : []);
      if (all.length === 0) return { missing: 'no response earlier in this chain' };
      return { text: responsesText(`All ${all.length} response(s) recorded in this chain, oldest first:`, all.map(toLogged)) };
    }
    case 'prereq_responses':
      return prereqEvidence(input, ctx);
    case 'sql_result': {
      const sql = [...(ctx.state.responses ?? []), ...(ctx.state.last ? [ctx.state.last] : [])].reverse().find((r) => r.method === 'SQL');
      if (!sql) return { missing: 'no SQL query earlier in this chain' };
      return { text: `SQL: ${sql.path}\n\nResult:\n${bodyText(sql.body).slice(0, 30_000)}` };
    }
    case 'command_output': {
      const p = vars.previous as Record<string, Json> | undefined;
      if (!p || typeof p !== 'object' || Array.isArray(p) || !('exit_code' in p)) return { missing: 'no command (P12) ran earlier in this chain' };
      return { text: `Command output (exit code ${String(p.exit_code)}):\n${String(p.output ?? p.stdout ?? '').slice(-30_000) || '(empty)'}` };
    }
    case 'log_tail': {
      const t = vars.last_log_tail;
      if (typeof t !== 'string') return { missing: 'no log tail was kept earlier in this chain (P21 without a pattern keeps one)' };
      return { text: `Log tail:\n${t.slice(-30_000) || '(the log is empty)'}` };
    }
    case 'http_get':
      return httpGetEvidence(input.http_get ?? [], ctx);
    case 'directory_listing':
      return listingEvidence(input, ctx);
    case 'screenshot':
      return screenshotEvidence(input.pages ?? [], ctx);
    case 'rendered_dom':
      return domEvidence(input.pages ?? [], ctx);
  }
}

/** Set-Cookie lines keep their names and attributes (Secure, HttpOnly, SameSite…) but never their values: those are session secrets. */
export function redactCookies(v: string | string[]): string {
  const lines = Array.isArray(v) ? v : v.split(/,(?=\s*[^;,=\s]+=)/);
  return lines.map((c) => c.trim().replace(/^([^=;]+)=[^;]*/, '$1=<redacted>')).join(' | ');
}

function responsesText(head: string, rs: LoggedResponse[]): string {
  const per = Math.max(1000, Math.min(MAX_RESPONSE_CHARS, Math.floor(60_000 / Math.max(1, rs.length))));
  return [head, ...rs.map((r, i) => `\n#${i + 1} ${r.method} ${r.path} → ${r.status}\n${r.body.slice(0, per) || '(empty body)'}`)].join('\n');
}

function prereqEvidence(input: EvidenceInput, ctx: PrimitiveContext): Section {
  const ids = ctx.prereqs ?? [];
  if (ids.length === 0) return { missing: 'the node has no prerequisites whose responses could be shown' };
  const found: LoggedResponse[] = [];
  for (const id of ids) found.push(...(readPrereqResponses(ctx.env.artifactsDir, id) ?? []));
  const keep = input.path_filters ? found.filter((r) => input.path_filters!.some((f) => r.path.includes(f))) : found;
  if (keep.length === 0) return { missing: `the prerequisites (${ids.join(', ')}) recorded ${found.length} response(s), none${input.path_filters ? ` under ${input.path_filters.join(', ')}` : ''}` };
  return { text: responsesText(`${keep.length} response(s) recorded by the prerequisites ${ids.join(', ')}${input.path_filters ? ` (paths containing ${input.path_filters.join(', ')})` : ''}:`, keep) };
}

async function httpGetEvidence(paths: string[], ctx: PrimitiveContext): Promise<Section> {
  const parts: string[] = [];
  for (const path of paths) {
    try {
      const r = await sessionRequest(ctx, { method: 'GET', path, timeoutMs: 30_000, record: false });
      parts.push(`GET ${path} → ${r.status}\n${bodyText(r.body).slice(0, 30_000) || '(empty body)'}`);
    } catch (e) {
      if (!(e instanceof HttpTransportError)) throw e;
      parts.push(`GET ${path} → no response (${e.message})`);
    }
  }
  return { text: parts.join('\n\n') };
}

const pageKey = (u: string, base: string) => {
  try {
    const x = new URL(u, base);
    return `${x.pathname}${x.search}`;
  } catch {
    return u;
  }
};

const PAGE_VARS = ['rendered_dom', 'rendered_dom_url', 'rendered_dom_length', 'last_page_title', 'last_screenshot'];

/**
 * Capture `pages` with SCREENSHOT or RENDER_DOM, skipping the page the chain captured last. The
 * chain's own page variables are restored afterwards (the captures are this step's evidence only);
 * screenshots taken are appended to `screenshots` like any SCREENSHOT's.
 */
async function capturePages(pages: string[], kind: 'screenshot' | 'dom', ctx: PrimitiveContext): Promise<{ url: string; dom: string; note: string }[]> {
  const vars = ctx.state.vars;
  const last = typeof vars.rendered_dom_url === 'string' ? pageKey(vars.rendered_dom_url, ctx.env.baseUrl) : undefined;
  const saved = PAGE_VARS.map((k) => [k, vars[k]] as const);
  const out: { url: string; dom: string; note: string }[] = [];
  try {
    for (const [i, url] of pages.entries()) {
      if (last !== undefined && pageKey(url, ctx.env.baseUrl) === last) continue;
      delete vars.rendered_dom;
      const r = kind === 'screenshot'
        ? await SCREENSHOT.run(ScreenshotSchema.parse({ url, name: `judge-page-${i + 1}` }), ctx)
        : await RENDER_DOM.run(RenderDomSchema.parse({ url, name: `judge-page-${i + 1}`, min_chars: 0 }), ctx);
      out.push({ url, dom: typeof vars.rendered_dom === 'string' ? vars.rendered_dom : '', note: r.message });
    }
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete vars[k];
      else vars[k] = v;
    }
  }
  return out;
}

async function screenshotEvidence(pages: string[], ctx: PrimitiveContext): Promise<Section> {
  const vars = ctx.state.vars;
  const shotsOf = () => (Array.isArray(vars.screenshots) ? (vars.screenshots as unknown[]).filter((s): s is string => typeof s === 'string' && existsSync(s)) : []);
  const chainShots = shotsOf().slice(-MAX_IMAGES);
  const chainDom = typeof vars.rendered_dom === 'string' ? vars.rendered_dom : '';
  const chainUrl = String(vars.rendered_dom_url ?? 'the app');
  const before = shotsOf().length;
  const captured = await capturePages(pages, 'screenshot', ctx);
  const own = shotsOf().slice(before);
  const shots = [...chainShots, ...own];
  if (shots.length === 0) return { missing: pages.length ? `no screenshot could be taken (${captured.map((c) => c.note).join('; ')})` : 'no screenshot was captured earlier in this chain' };
  const images = shots.map((f) => ({ mediaType: f.endsWith('.png') ? 'image/png' : 'image/jpeg', base64: readFileSync(f).toString('base64') }));
  const title = typeof vars.last_page_title === 'string' && !captured.length ? vars.last_page_title : '';
  const doms = [...(chainShots.length ? [{ url: chainUrl, dom: chainDom, note: '' }] : []), ...captured];
  const per = Math.floor(30_000 / Math.max(1, doms.length));
  const text = [`${images.length} screenshot(s) of ${doms.map((d) => d.url).join(', ')}${title ? ` (title ${JSON.stringify(title)})` : ''} are attached, in that order.`, ...doms.map((d) => `\nRendered HTML (sanitized) of ${d.url}${d.note ? ` [${d.note}]` : ''}:\n${d.dom.slice(0, per) || '(none)'}`)];
  return { text: text.join('\n'), images };
}

async function domEvidence(pages: string[], ctx: PrimitiveContext): Promise<Section> {
  const vars = ctx.state.vars;
  const chain = typeof vars.rendered_dom === 'string' && vars.rendered_dom ? [{ url: String(vars.rendered_dom_url ?? '?'), dom: vars.rendered_dom, note: '' }] : [];
  const captured = await capturePages(pages, 'dom', ctx);
  const doms = [...chain, ...captured.filter((c) => c.dom)];
  if (doms.length === 0) return { missing: pages.length ? `no page could be rendered (${captured.map((c) => c.note).join('; ')})` : 'no RENDER_DOM or SCREENSHOT earlier in this chain produced a DOM' };
  const per = Math.floor(60_000 / doms.length);
  return { text: doms.map((d) => `Rendered HTML of ${d.url}${d.note ? ` [${d.note}]` : ''}:\n${d.dom.slice(0, per)}`).join('\n\n') };
}

/** The tree under `listing_root` (default the workspace; relative = under it), `listing_depth` levels deep. */
async function listingEvidence(input: EvidenceInput, ctx: PrimitiveContext): Promise<Section> {
  const ws = ctx.env.workspace.replace(/\/$/, '') || '/';
  const r = input.listing_root ?? ws;
  const root = r.startsWith('/') ? r.replace(/\/+$/, '') || '/' : `${ws === '/' ? '' : ws}/${r.replace(/^\.\//, '').replace(/\/+$/, '')}`;
  if ((await ctx.env.statPath(root)) !== 'dir') return { missing: `${root} is not a directory in the app container` };
  const depth = input.listing_depth;
  const tree = ((await ctx.env.listTree(root)) ?? []).filter((p) => !isSkipped(p.replace(/\/$/, '')) && (depth === undefined || p.replace(/\/$/, '').split('/').length <= depth));
  const max = MAX_LISTING * 4;
  return { text: [`Directory listing of ${root}${depth !== undefined ? ` (${depth} level(s) deep)` : ''}: ${tree.length} entries${tree.length > max ? `, first ${max}` : ''}`, ...tree.slice(0, max)].join('\n') };
}

async function readSample(ctx: PrimitiveContext, path: string, input: EvidenceInput): Promise<string | null> {
  const max = input.max_chars_per_file ?? MAX_FILE_CHARS;
  const buf = await ctx.env.readFile(path, max * 4);
  if (!buf) return null;
  let text = buf.toString('utf8');
  if (input.max_lines_per_file) text = text.split('\n').slice(0, input.max_lines_per_file).join('\n');
  return text.slice(0, max);
}

async function codebaseEvidence(input: EvidenceInput, rubric: string, ctx: PrimitiveContext): Promise<Section> {
  const ws = ctx.env.workspace.replace(/\/$/, '') || '/';
  const tree = (await ctx.env.listTree(ws)) ?? [];
  const visible = tree.filter((p) => !isSkipped(p.replace(/\/$/, '')));
  const sample = sampleFiles(visible, input, rubric, ws);
  const entries = [...(input.focus_paths ?? []), ...(input.files_to_sample ?? []), ...(sample.length ? [] : input.fallback_files ?? [])];
  const outside = await outsideFiles(splitEntries(entries, ws).outside, input, ctx);
  const named = [...(input.focus_paths ?? []), ...(input.files_to_sample ?? []), ...(input.fallback_files ?? [])];
  if (named.length && sample.length === 0 && outside.length === 0) return { missing: `none of ${named.join(', ')} exists in ${ws}` };
  if (visible.length === 0 && outside.length === 0) return { missing: `the workspace ${ws} is empty` };
  const parts = [`File listing of ${ws} (${visible.length} entries${visible.length > MAX_LISTING ? `, first ${MAX_LISTING}` : ''}):`, ...visible.slice(0, MAX_LISTING)];
  const shown: string[] = [];
  for (const f of sample) {
    const text = await readSample(ctx, `${ws === '/' ? '' : ws}/${f}`, input);
    if (text !== null) {
      parts.push(`\n--- File: ${f} ---\n${text}`);
      shown.push(f);
    }
  }
  for (const o of outside) {
    parts.push(`\n--- File: ${o.path} ---\n${o.text}`);
    shown.push(o.path);
  }
  return { text: parts.join('\n'), sampled: shown };
}

/** Absolute entries outside the workspace: a file as it is, a directory's code files (≤ 10, or max_files_per_dir). */
async function outsideFiles(paths: string[], input: EvidenceInput, ctx: PrimitiveContext): Promise<{ path: string; text: string }[]> {
  const out: { path: string; text: string }[] = [];
  for (const p of paths) {
    const kind = await ctx.env.statPath(p);
    const files = kind === 'file' ? [p] : kind === 'dir' ? ((await ctx.env.listTree(p)) ?? []).filter((f) => !f.endsWith('/') && !isSkipped(f) && CODE.test(f)).sort().slice(0, input.max_files_per_dir ?? 10).map((f) => `${p}/${f}`) : [];
    for (const f of files) {
      const text = await readSample(ctx, f, input);
      if (text !== null) out.push({ path: f, text });
    }
  }
  return out;
}
