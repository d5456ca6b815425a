import type { z } from 'zod';
import { jsonPath } from '../model/json';
import type { InputIssue } from '../errors';

type Issue = z.core.$ZodIssue;

/**
 * zod issues as input issues that point at the offending key: an unknown key gets its own path
 * (not its parent's) and "unknown key"; a missing one says "required" rather than "expected string,
 * received undefined"; a failed union says what it accepts, or points into the one alternative
 * whose type matched.
 */
export function zodInputIssues(err: z.ZodError, file: string, prefix = '', nodeId?: string): InputIssue[] {
  const withNode = (i: Omit<InputIssue, 'file'>): InputIssue => (nodeId === undefined ? { file, ...i } : { file, ...i, nodeId });
  return err.issues.flatMap((raw) => {
    const { issue: i, segs } = deepest(raw, []);
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => withNode({ path: jsonPath([...segs, k], prefix), message: `unknown key "${k}"` }));
    return [withNode({ path: jsonPath(segs, prefix), message: messageOf(i) })];
  });
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

/** A union failure is reported against the alternative whose type matched (the one that got furthest). */
function deepest(issue: Issue, base: PropertyKey[]): { issue: Issue; segs: PropertyKey[] } {
  const segs = [...base, ...issue.path];
  if (issue.code !== 'invalid_union') return { issue, segs };
  const matched = issue.errors.filter((b) => !b.every((x) => x.code === 'invalid_type' && x.path.length === 0));
  if (matched.length !== 1 || matched[0].length === 0) return { issue, segs };
  return deepest(matched[0][0], segs);
}
