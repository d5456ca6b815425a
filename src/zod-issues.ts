import type { z } from 'zod';
import { jsonPath } from './model/json';
import type { InputIssue } from './errors';

/**
 * The one way zod failures become text (issue 11): every layer that validates with zod reports
 * through here, so a user sees the same wording for the same mistake whichever file it is in.
 * An unknown key gets its own path (not its parent's) and "unknown key"; a missing one says
 * "required" rather than "expected string, received undefined"; a failed union says what it
 * accepts, or points into the one alternative whose type matched.
 */

type Issue = z.core.$ZodIssue;

/** Each zod issue as a JSON path (below `prefix`) and a sentence. */
export function zodIssuePaths(err: z.ZodError, prefix = ''): { path: string; message: string }[] {
  return err.issues.flatMap((raw) => {
    const { issue: i, segs } = deepest(raw, []);
    // zod's default sentence ("Unrecognized key: …") becomes ours; a schema's own sentence (e.g.
    // compose's "not supported by saasbench (supported: …)") is kept
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => ({ path: jsonPath([...segs, k], prefix), message: /^Unrecognized keys?\b/.test(i.message) ? `unknown key "${k}"` : i.message }));
    return [{ path: jsonPath(segs, prefix), message: messageOf(i) }];
  });
}

/** zod issues as input issues of `file` (and of a DAG node). */
export function zodInputIssues(err: z.ZodError, file: string, prefix = '', nodeId?: string): InputIssue[] {
  return zodIssuePaths(err, prefix).map((i) => (nodeId === undefined ? { file, ...i } : { file, ...i, nodeId }));
}

/**
 * zod issues on one line, `a.b[0]: message; c: message` (a root-level issue is `(root)`), for
 * errors that carry one sentence. `max` issues are spelled out, the rest counted.
 */
export function zodIssueText(err: z.ZodError, o: { prefix?: string; max?: number; root?: string } = {}): string {
  const all = zodIssuePaths(err, o.prefix);
  const shown = all.slice(0, o.max ?? all.length).map((i) => `${i.path || (o.root ?? '(root)')}: ${i.message}`);
  const more = all.length - shown.length;
  return shown.join('; ') + (more > 0 ? ` (and ${more} more problem${more > 1 ? 's' : ''})` : '');
}

/** The first issue's path and sentence (for errors that point at one key). */
export function firstZodIssue(err: z.ZodError, prefix = ''): { path: string; message: string; more: number } {
  const all = zodIssuePaths(err, prefix);
  return { ...all[0], more: all.length - 1 };
}

function messageOf(i: Issue): string {
  if (i.code === 'invalid_type' && /received undefined$/.test(i.message)) return `required (${i.expected === 'object' ? 'an object' : `a ${i.expected}`})`;
  if (i.code === 'invalid_union' && i.message === 'Invalid input') {
    const expected = i.errors.flatMap((b) => b.filter((x) => x.path.length === 0 && x.code === 'invalid_type').map((x) => (x as { expected: string }).expected));
    const received = /received (\w+)/.exec(i.errors.flat().find((x) => x.code === 'invalid_type')?.message ?? '')?.[1];
    if (expected.length === i.errors.length) return `invalid input: expected ${[...new Set(expected)].join(' or ')}${received ? `, received ${received}` : ''}`;
  }
  return i.message;
}

/**
 * A union failure is reported against the alternative whose type matched (the one that got
 * furthest), so `depends_on: {db: {condition: bogus}}` points at `.condition`, not `depends_on`.
 */
function deepest(issue: Issue, base: PropertyKey[]): { issue: Issue; segs: PropertyKey[] } {
  const segs = [...base, ...issue.path];
  if (issue.code !== 'invalid_union') return { issue, segs };
  const matched = issue.errors.filter((b) => !b.every((x) => x.code === 'invalid_type' && x.path.length === 0));
  if (matched.length !== 1 || matched[0].length === 0) return { issue, segs };
  return deepest(matched[0][0], segs);
}
