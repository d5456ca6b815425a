import type { TaskScore } from '../model/scores';
import { backboneOf } from './backbone';
import { cellOf, cellsBy, round } from './aggregate';
import type { NodeOutcome, NodeStatus, ScoreCell } from '../model/scores';


export function scoreTask(outcomes: readonly NodeOutcome[], trajectories: Record<string, string[]>): TaskScore {
  const byId = new Map(outcomes.map((o) => [o.nodeId, o]));
  const statusCounts: Partial<Record<NodeStatus, number>> = {};
  for (const o of outcomes) statusCounts[o.status] = (statusCounts[o.status] ?? 0) + 1;
  const dropped = outcomes.filter((o) => o.status === 'SKIPPED_LLM').reduce((a, o) => a + o.maxScore, 0);
  return {
    overall: cellOf(outcomes),
    nonLlm: cellOf(outcomes.filter((o) => o.method !== 'llm-judge')),
    judgeDroppedMaxScore: round(dropped, 3),
    byCategory: cellsBy(outcomes, (o) => o.category),
    byBackbone: cellsBy(outcomes, (o) => backboneOf(o.category)),
    byTrajectory: Object.fromEntries(
      Object.entries(trajectories).map(([name, ids]) => [
        name,
        cellOf(ids.map((id) => byId.get(id)).filter((o): o is NodeOutcome => !!o)),
      ]),
    ),
    statusCounts,
  };
}
