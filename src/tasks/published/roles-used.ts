import type { Dag } from '../../model/dag';

/** Step types whose `role` input names a role the task must declare (HTTP steps may act as one per request). */
const ROLE_TYPES = new Set(['P13', 'AUTH_LOGIN', 'P14', 'PERMISSION_CHECK', 'P04', 'HTTP_REQUEST', 'P26', 'SEARCH_QUERY']);

const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** The roles a DAG logs in as (sorted): every `role` of an auth, permission or HTTP step, and of the requests inside workflow steps. */
export function rolesUsed(dag: Dag): string[] {
  const out = new Set<string>();
  const add = (role: unknown) => {
    if (typeof role === 'string' && !role.includes('{{')) out.add(role);
  };
  for (const n of dag.nodes) {
    for (const s of n.chain) {
      if (ROLE_TYPES.has(s.type.toUpperCase())) add(s.inputs.role);
      // P24/P28 trigger, P29 setup and steps
      add(obj(s.inputs.trigger)?.role);
      add(obj(s.inputs.setup)?.role);
      if (Array.isArray(s.inputs.steps)) for (const st of s.inputs.steps) add(obj(st)?.role);
    }
  }
  return [...out].sort();
}
