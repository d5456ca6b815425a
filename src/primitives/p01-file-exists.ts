import { z } from 'zod';
import { candidatePaths, inWorkspace, PathList } from './files';
import { definePrimitive } from './types';

export const P01Schema = z
  .object({
    path: z.string().min(1).optional(),
    path_any_of: PathList.optional(),
    type: z.enum(['file', 'dir', 'directory', 'any']).default('file'),
  })
  .strict()
  .refine((v) => v.path !== undefined || v.path_any_of !== undefined, { message: 'give path or path_any_of' });

/** P01: some candidate (path, then path_any_of) exists in the app container with the right kind (`any`: file or directory). */
export const P01 = definePrimitive({
  id: 'P01',
  name: 'file_exists',
  schema: P01Schema,
  async run(input, { env }) {
    const want = input.type === 'file' ? 'file' : input.type === 'any' ? 'any' : 'dir';
    const probed: { path: string; kind: 'file' | 'dir' | null }[] = [];
    for (const c of candidatePaths(input.path, input.path_any_of)) {
      const abs = inWorkspace(env, c);
      const kind = await env.statPath(abs);
      probed.push({ path: abs, kind });
      if (kind !== null && (kind === want || want === 'any')) {
        return { passed: true, message: `${kind} ${abs} exists`, data: { type: want, matched: abs, probed } };
      }
    }
    const wrongKind = probed.filter((p) => p.kind !== null);
    const noun = want === 'any' ? 'file or directory' : want;
    const detail = wrongKind.length ? ` (${wrongKind.map((p) => `${p.path} is a ${p.kind}`).join(', ')})` : '';
    return {
      passed: false,
      message: `no ${noun} at ${probed.map((p) => p.path).join(', ')}${detail}`,
      data: { type: want, matched: null, probed },
    };
  },
});
