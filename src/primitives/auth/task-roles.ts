import type { Task } from '../../model/task';
import type { RolesDecl } from '../../model/roles';

/** Why a published task has no roles, as P13 reports it. */
export const PUBLISHED_NO_ROLES =
  'published SaaSBench tasks declare no roles (their evaluator minted credentials through backdoors, which saasbench does not do); ' +
  'the benchmark pack (benchmarks/saasbench/tasks/<id>.yaml) declares how each role logs in, or import the task with `saasbench tasks import <dir> --out <dir> --roles roles.yaml` — see docs/compatibility.md#auth';

export interface ManifestExtras {
  roles: RolesDecl;
  publishedIdCapture: boolean;
}

/** What the evaluator needs from a task beyond its DAG: the declared roles and the id-capture switch. */
export function manifestExtras(task: Task): ManifestExtras {
  return { roles: task.roles, publishedIdCapture: task.publishedIdCapture };
}
