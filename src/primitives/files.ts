import path from 'node:path';
import { z } from 'zod';
import type { PrimitiveEnv } from './types';

/** Relative paths are under the workspace; absolute paths are kept. POSIX semantics (container paths). */
export function inWorkspace(env: PrimitiveEnv, p: string): string {
  return path.posix.isAbsolute(p) ? path.posix.normalize(p) : path.posix.join(env.workspace, p);
}

export const PathList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/** `path` first, then `path_any_of` in order, duplicates removed. */
export function candidatePaths(one: string | undefined, anyOf: string | string[] | undefined): string[] {
  const list = [...(one !== undefined ? [one] : []), ...(anyOf === undefined ? [] : Array.isArray(anyOf) ? anyOf : [anyOf])];
  return [...new Set(list)];
}
