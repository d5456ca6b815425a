import { labelledContainers, LABEL } from '../sandbox';

/**
 * rollout key -> workflow id, read from the labels provision put on each container, for the stacks
 * of one Temporal cluster only: another cluster's workflows are not ours to declare dead.
 */
export async function listLabelledWorkflows(clusterId?: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const labels of await labelledContainers()) {
    const key = labels[LABEL.rollout];
    const wf = labels['saasbench.workflow'];
    if (clusterId !== undefined && (labels['saasbench.cluster'] ?? 'default') !== clusterId) continue;
    if (key && wf) out.set(key, wf);
  }
  return out;
}
