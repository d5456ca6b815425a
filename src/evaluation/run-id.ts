/** A short, stable id per rollout for data a DAG creates ({{run_id}}), so repeated evaluations don't collide. */
export function runIdOf(rolloutKey: string): string {
  let h = 0;
  for (const c of rolloutKey) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h.toString(36);
}
