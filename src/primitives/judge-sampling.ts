import { createHash } from 'node:crypto';
import picomatch from 'picomatch';

/**
 * Which workspace files P17's `codebase` evidence shows the judge. Pure functions over a listing of
 * the workspace (paths relative to it, directories suffixed with `/`), so the choice is testable
 * and the same for the same tree, rubric and inputs (verdicts are cached by evidence).
 */

export const SKIP_DIRS = ['node_modules', '.git', 'dist', 'build', 'coverage', 'vendor', 'tmp', '__pycache__', '.next', '.cache', 'log', 'logs'];
export const CODE = /\.(js|mjs|cjs|ts|tsx|jsx|py|rb|go|rs|java|kt|php|ex|exs|cs|vue|svelte|sql|ya?ml|json|html|erb|hbs|md|sh|toml|gradle|xml)$/;
export const DEFAULT_SAMPLE_LIMIT = 12;

export type SampleStrategy = 'first' | 'head' | 'tail' | 'ranked' | 'random';

export interface SampleOptions {
  /** files, directories or globs under the workspace */
  files_to_sample?: string[];
  /** sampled before files_to_sample */
  focus_paths?: string[];
  /** sampled only when focus_paths and files_to_sample yield no file */
  fallback_files?: string[];
  /** file endings that count when a directory (or the whole workspace) is walked; default: code files */
  extensions?: string[];
  /** every entry is a glob pattern (directories are not walked) */
  glob_mode?: boolean;
  sample_limit?: number;
  sample_strategy?: SampleStrategy;
  /** words that move a path forward (case-insensitive substrings of the path) */
  prefer_keywords?: string[];
  /** at most this many sampled files share a parent directory */
  max_files_per_dir?: number;
}

export const isSkipped = (p: string) => p.split('/').some((seg) => SKIP_DIRS.includes(seg));
const norm = (p: string) => p.replace(/^\.\//, '').replace(/^\/+/, '').replace(/\/+$/, '');
const isGlob = (e: string) => /[*?{[]/.test(e);

/**
 * Entries as workspace-relative paths, and the absolute ones outside the workspace (read from the
 * app container as they are: e.g. a PHP ini under /usr/local/etc). `/app/src` with workspace `/app`
 * is `src`.
 */
export function splitEntries(entries: readonly string[], workspace: string): { inside: string[]; outside: string[] } {
  const ws = workspace.replace(/\/+$/, '');
  const inside: string[] = [];
  const outside: string[] = [];
  for (const e of entries) {
    if (!e.startsWith('/')) inside.push(norm(e));
    else if (e === ws || e === `${ws}/` || e.startsWith(`${ws}/`)) inside.push(norm(e.slice(ws.length)));
    else outside.push(e.replace(/\/+$/, '') || '/');
  }
  return { inside, outside };
}

function wanted(o: SampleOptions): (f: string) => boolean {
  if (!o.extensions?.length) return (f) => CODE.test(f);
  const exts = o.extensions.map((x) => (x.startsWith('.') ? x : `.${x}`).toLowerCase());
  return (f) => exts.some((x) => f.toLowerCase().endsWith(x));
}

const keywordHits = (p: string, words: readonly string[]) => words.filter((w) => p.toLowerCase().includes(w.toLowerCase())).length;

/** Explicit files and glob hits of the entries (in order), and each directory's files. */
function resolveEntries(entries: readonly string[], files: string[], dirs: Set<string>, o: SampleOptions): { explicit: string[]; dirLists: string[][] } {
  const ok = wanted(o);
  const explicit: string[] = [];
  const dirLists: string[][] = [];
  for (const e of entries) {
    if (o.glob_mode || isGlob(e)) {
      const m = picomatch(e, { dot: false });
      explicit.push(...files.filter((f) => m(f)).sort());
    } else if (files.includes(e)) explicit.push(e);
    else if (e === '' || dirs.has(e)) {
      const list = files.filter((f) => (e === '' || f.startsWith(`${e}/`)) && ok(f)).sort();
      if (o.prefer_keywords?.length) list.sort((a, b) => keywordHits(b, o.prefer_keywords!) - keywordHits(a, o.prefer_keywords!) || a.localeCompare(b));
      dirLists.push(list);
    }
  }
  return { explicit, dirLists };
}

function roundRobin(lists: string[][]): string[] {
  const out: string[] = [];
  for (let i = 0; lists.some((l) => i < l.length); i++) for (const l of lists) if (i < l.length) out.push(l[i]);
  return out;
}

/**
 * The sampled files, in the order the judge sees them:
 *  - candidates: `focus_paths`, then `files_to_sample` — explicit files and glob hits first, then the
 *    files of the listed directories taken round-robin; `fallback_files` only when that is empty;
 *    without entries, every file of the workspace (shallowest first);
 *  - `sample_strategy` first/head (default) keeps the first `sample_limit` (12), tail the last,
 *    ranked orders by relevance to the rubric (rankByRubric), random takes a pseudo-random sample
 *    seeded by the rubric and the entries (the same every time);
 *  - `max_files_per_dir` caps how many files one directory contributes.
 */
export function sampleFiles(tree: string[], o: SampleOptions, rubric = '', workspace = '/'): string[] {
  const files = tree.filter((p) => !p.endsWith('/') && !isSkipped(p));
  const dirs = new Set(tree.filter((p) => p.endsWith('/')).map((p) => p.slice(0, -1)));
  const limit = o.sample_limit ?? DEFAULT_SAMPLE_LIMIT;
  const focus = resolveEntries(splitEntries(o.focus_paths ?? [], workspace).inside, files, dirs, o);
  const main = resolveEntries(splitEntries(o.files_to_sample ?? [], workspace).inside, files, dirs, o);
  let pinned = [...focus.explicit, ...main.explicit];
  let order = [...pinned, ...roundRobin(focus.dirLists), ...roundRobin(main.dirLists)];
  if (order.length === 0 && o.fallback_files?.length) {
    const fb = resolveEntries(splitEntries(o.fallback_files, workspace).inside, files, dirs, o);
    pinned = fb.explicit;
    order = [...fb.explicit, ...roundRobin(fb.dirLists)];
  }
  if (!o.files_to_sample?.length && !o.focus_paths?.length && order.length === 0 && !o.fallback_files?.length) {
    const ok = wanted(o);
    order = files.filter(ok).sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
    if (o.prefer_keywords?.length) order.sort((a, b) => keywordHits(b, o.prefer_keywords!) - keywordHits(a, o.prefer_keywords!));
  }
  order = [...new Set(order)];
  const strategy = o.sample_strategy ?? 'first';
  if (strategy === 'ranked') order = rankByRubric(order, new Set(pinned), rubric, o.prefer_keywords ?? []);
  if (strategy === 'random') order = seededShuffle(order, `${rubric}\u0000${JSON.stringify([o.focus_paths, o.files_to_sample, o.fallback_files])}`);
  if (o.max_files_per_dir) order = capPerDir(order, o.max_files_per_dir);
  return strategy === 'tail' ? order.slice(-limit) : order.slice(0, limit);
}

function capPerDir(files: string[], max: number): string[] {
  const seen = new Map<string, number>();
  return files.filter((f) => {
    const dir = f.includes('/') ? f.slice(0, f.lastIndexOf('/')) : '';
    const n = (seen.get(dir) ?? 0) + 1;
    seen.set(dir, n);
    return n <= max;
  });
}

// Words of a rubric that say nothing about which file to read.
const STOP = new Set(
  ('the a an and or of to in for with on at by from is are be this that goal evidence score range integer criteria judge quality design ' +
    'equivalent does implementation uses use using used must should each any all its their code codebase source helpers logic definitions ' +
    'handling whether well overall not has have can per into other only one two three points point file files key structure').split(' '),
);

/**
 * Order candidates by relevance to the rubric: a file the rubric names (+50), path words of paths
 * the rubric quotes (+6 each), `prefer_keywords` (+6 each), other rubric words in the path (+3
 * each), code files (+2), tests (−4). Explicit files stay first; the rest is taken round-robin
 * across areas (the first two path segments) so one big folder does not fill the sample.
 */
export function rankByRubric(candidates: string[], pinned: ReadonlySet<string>, rubric: string, prefer: readonly string[]): string[] {
  const text = rubric.toLowerCase();
  const named = new Set((text.match(/[\w./*-]+\.\w{1,5}/g) ?? []).map((m) => m.split('/').pop()!));
  const pathWords = new Set<string>();
  for (const p of text.match(/[\w-]+\/[\w./*-]+/g) ?? []) for (const seg of p.split(/[/.*]/)) if (seg.length >= 4) pathWords.add(seg);
  for (const k of prefer) pathWords.add(k.toLowerCase());
  const words = new Set((text.match(/[a-z_]{3,}/g) ?? []).filter((w) => !STOP.has(w)));
  const score = (rel: string): number => {
    const low = rel.toLowerCase();
    const base = low.split('/').pop()!;
    let s = 0;
    for (const n of named) if (n === base || low.endsWith(n)) s += 50;
    for (const w of pathWords) if (low.includes(w)) s += 6;
    for (const w of words) if (low.includes(w)) s += 3;
    s += CODE.test(low) ? 2 : 0.5;
    if (base.includes('test')) s -= 4;
    return s;
  };
  const rest = candidates.filter((c) => !pinned.has(c)).map((rel) => ({ rel, s: score(rel) }));
  rest.sort((a, b) => b.s - a.s || a.rel.localeCompare(b.rel));
  const groups = new Map<string, string[]>();
  for (const { rel } of rest) {
    const area = rel.split('/').slice(0, 2).join('/');
    groups.set(area, [...(groups.get(area) ?? []), rel]);
  }
  return [...candidates.filter((c) => pinned.has(c)), ...roundRobin([...groups.values()])];
}

/** A Fisher–Yates shuffle driven by a PRNG seeded from `seed` (mulberry32): deterministic per seed. */
export function seededShuffle<T>(items: readonly T[], seed: string): T[] {
  let a = createHash('sha256').update(seed).digest().readUInt32LE(0);
  const rand = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
