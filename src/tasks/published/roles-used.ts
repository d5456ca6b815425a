import type { Dag } from '../dag-schema';

/** Step types whose `role` input names a role the task must declare. */
const ROLE_TYPES = new Set(['P13', 'AUTH_LOGIN', 'P14', 'PERMISSION_CHECK']);

/** The roles a DAG logs in as (sorted): every `role` of an auth or permission step. */
export function rolesUsed(dag: Dag): string[] {
  const out = new Set<string>();
  for (const n of dag.nodes) {
    for (const s of n.chain) {
      const role = s.inputs.role;
      if (ROLE_TYPES.has(s.type.toUpperCase()) && typeof role === 'string' && !role.includes('{{')) out.add(role);
    }
  }
  return [...out].sort();
}
