import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import type { Task } from '../../tasks/task';
import { RolesSchema, type RolesDecl } from './roles-schema';

/** Why a published task has no roles, as P13 reports it. */
export const PUBLISHED_NO_ROLES =
  'published SaaSBench tasks declare no roles (their evaluator minted API keys through a backdoor, which saasbench does not do); ' +
  'import the task with `saasbench tasks import <dir> --out <dir> --roles roles.yaml` and declare how each role logs in — see docs/compatibility.md#auth';

export interface ManifestExtras {
  roles: RolesDecl;
  publishedIdCapture: boolean;
}

const cache = new Map<string, ManifestExtras>();

/**
 * What the evaluator needs from a task manifest beyond the Task model: the declared roles
 * (task.yaml `roles:`) and the compatibility switches (`compat:`). Published-layout tasks have no
 * roles and always use the published id capture. The manifest was validated when the task was
 * loaded; an unreadable one yields no roles (P13 then fails clearly).
 */
export function manifestExtras(task: Task): ManifestExtras {
  if (task.layout !== 'native') return { roles: {}, publishedIdCapture: true };
  const key = `${task.manifestFile}|${task.hash}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let out: ManifestExtras = { roles: {}, publishedIdCapture: false };
  try {
    const raw = YAML.parse(readFileSync(task.manifestFile, 'utf8')) as { roles?: unknown; compat?: { published_id_capture?: unknown } } | null;
    const parsed = RolesSchema.safeParse(raw?.roles ?? {});
    out = { roles: parsed.success ? parsed.data : {}, publishedIdCapture: raw?.compat?.published_id_capture === true };
  } catch {
    // keep the defaults
  }
  cache.set(key, out);
  return out;
}
