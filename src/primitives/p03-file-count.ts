import picomatch from 'picomatch';
import { z } from 'zod';
import { inWorkspace, PathList } from './files';
import { definePrimitive } from './types';

const count = z.number().int().min(0);

export const P03Schema = z
  .object({
    glob: z.string().min(1).default('**/*'),
    base_dir: z.string().min(1).optional(),
    base_dir_any_of: PathList.optional(),
    min_expected: count.default(1),
    max_expected: count.optional(),
  })
  .strict()
  .refine((v) => v.max_expected === undefined || v.max_expected >= v.min_expected, {
    message: 'max_expected is below min_expected',
    path: ['max_expected'],
  });

/**
 * P03: count the entries under each base dir (base_dir, then base_dir_any_of; default the
 * workspace) whose relative path matches `glob` (picomatch: braces, `**`, dotfiles only when the
 * pattern names them). Files only, unless the glob ends with `/` (then directories only). The best
 * count across base dirs must lie in [min_expected, max_expected].
 */
export const P03 = definePrimitive({
  id: 'P03',
  name: 'file_count',
  schema: P03Schema,
  async run(input, { env }) {
    const dirsOnly = input.glob.endsWith('/');
    const pattern = dirsOnly ? input.glob.replace(/\/+$/, '') : input.glob;
    const isMatch = picomatch(pattern.replace(/^\.\//, ''), { dot: false });
    const bases = [...new Set([...(input.base_dir !== undefined ? [input.base_dir] : []), ...(input.base_dir_any_of === undefined ? [] : [input.base_dir_any_of].flat())])];
    if (bases.length === 0) bases.push('.');
    const perDir: { dir: string; exists: boolean; count: number; sample: string[] }[] = [];
    for (const b of bases) {
      const dir = inWorkspace(env, b);
      const tree = await env.listTree(dir);
      if (tree === null) {
        perDir.push({ dir, exists: false, count: 0, sample: [] });
        continue;
      }
      const hits = tree.filter((e) => e.endsWith('/') === dirsOnly).map((e) => e.replace(/\/$/, '')).filter((e) => isMatch(e));
      perDir.push({ dir, exists: true, count: hits.length, sample: hits.slice(0, 10) });
    }
    const best = perDir.reduce((a, b) => (b.count > a.count ? b : a));
    const max = input.max_expected;
    const passed = best.count >= input.min_expected && (max === undefined || best.count <= max);
    const range = max === undefined ? `>= ${input.min_expected}` : `in [${input.min_expected}, ${max}]`;
    const what = dirsOnly ? 'directories' : 'files';
    return {
      passed,
      message: `${best.count} ${what} match ${JSON.stringify(input.glob)} under ${best.dir}${best.exists ? '' : ' (missing)'}; expected ${range}`,
      data: { glob: input.glob, count: best.count, best_dir: best.dir, per_dir: perDir },
    };
  },
});
