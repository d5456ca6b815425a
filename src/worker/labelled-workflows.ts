import { docker, LABEL } from '../sandbox';

/**
 * rollout key -> workflow id, read from the labels provision put on each container, for the stacks
 * of one Temporal cluster only: another cluster's workflows are not ours to declare dead.
 */
export async function listLabelledWorkflows(clusterId?: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const cs = await docker().listContainers({ all: true, filters: { label: [`${LABEL.rollout}`] } });
  for (const c of cs) {
    const key = c.Labels[LABEL.rollout];
    const wf = c.Labels['saasbench.workflow'];
    if (clusterId !== undefined && (c.Labels['saasbench.cluster'] ?? 'default') !== clusterId) continue;
    if (key && wf) out.set(key, wf);
  }
  return out;
}
