import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonIfExists, writeAtomic, writeJson } from '../runs/files';
import type { RolloutLock } from '../evaluation/rollout-lock';
import { renderSummaryMarkdown } from '../report/summary-md';
import { writeRolloutHtml } from '../report/html/write';
import { linkChildToParent } from '../snapshots/fork-links';
import type { RolloutInput, RolloutRef, RolloutResult } from '../model/rollout';

/** Write report.json, node_results.json and a Markdown summary for one rollout. Idempotent. */
export async function persistResults(i: { ref: RolloutRef; result: RolloutResult; input: RolloutInput }): Promise<{ runDir: string }> {
  const { ref, result } = i;
  const dir = ref.runDir;
  const nodesDir = join(dir, 'nodes');
  const records = new Map<string, unknown>();
  if (existsSync(nodesDir)) {
    for (const f of readdirSync(nodesDir).filter((f) => f.endsWith('.json'))) {
      const r = JSON.parse(readFileSync(join(nodesDir, f), 'utf8')) as { nodeId: string };
      records.set(r.nodeId, r);
    }
  }
  // Nodes that never ran (skipped) have no record on disk; their outcome is the record.
  const nodeResults = result.outcomes.map((o) => records.get(o.nodeId) ?? { ...o, steps: [] });
  writeJson(join(dir, 'node_results.json'), nodeResults);
  const integrity = result.agentRun.integrity;
  const previous = readJsonIfExists<{ children?: unknown[] }>(join(dir, 'report.json'));
  const report = {
    workflowId: result.workflowId,
    rolloutKey: result.rolloutKey,
    task: result.taskId,
    agent: result.agent,
    model: result.model,
    repeat: result.repeat,
    sweep: result.sweep,
    host: result.host,
    input: { budgetSeconds: i.input.budgetSeconds, idleSeconds: i.input.idleSeconds, evaluation: i.input.evaluation },
    agentRun: { ...result.agentRun, trajectory: undefined, integrity: undefined },
    trajectory: result.agentRun.trajectory ?? null,
    integrity: integrity ?? null,
    // the gateway-metered cost of the model calls (agentRun.gateway has tokens, price and the settings it applied)
    costUsd: result.agentRun.gateway?.costUsd ?? null,
    // what of the registry's settings nothing could apply, not even the gateway (agent/model-settings.json)
    modelSettingsNotApplied: readJsonIfExists<{ notApplied?: string[] }>(join(dir, 'agent', 'model-settings.json'))?.notApplied ?? null,
    // voided by the workflow when the transcript audit found evaluator access (scores are then 0)
    status: result.voided ? 'VOIDED_BY_LEAK' : 'SCORED',
    ...(result.voided ? { voided: { reason: `${result.voided.reason}; see integrity.samples`, originalOverall: result.voided.original } } : {}),
    overall: result.score.overall,
    nonLlm: result.score.nonLlm,
    judgeDroppedMaxScore: result.score.judgeDroppedMaxScore,
    byCategory: result.score.byCategory,
    byBackbone: result.score.byBackbone,
    byTrajectory: result.score.byTrajectory,
    statusCounts: result.score.statusCounts,
    timings: result.timings,
    // snapshots, host moves and fork links (docs/operations.md "Snapshots, host loss and forks")
    moves: result.moves ?? [],
    parent: result.parent ?? null,
    ...(previous?.children ? { children: previous.children } : {}),
    finishedAt: new Date().toISOString(),
  };
  const lock = readJsonIfExists<RolloutLock>(join(dir, 'lock.json'));
  if (lock) writeJson(join(dir, 'lock.json'), { ...lock, agent: { name: result.agent, cliVersion: result.agentRun.cliVersion ?? null, model: result.model }, judge: i.input.evaluation.judge });
  writeJson(join(dir, 'report.json'), report);
  // the parent's page lists its forks: re-render it when this fork was added to its report.json
  const linked = result.parent ? linkChildToParent(result.parent, { workflowId: result.workflowId, rolloutKey: result.rolloutKey, agent: result.agent, model: result.model, snapshot: result.parent.snapshot, runDir: dir }) : false;
  if (linked && result.parent?.runDir) await writeRolloutHtml(result.parent.runDir).catch(() => undefined);
  writeAtomic(join(dir, 'summary.md'), renderSummaryMarkdown(result));
  // A page a person can look at: scores, charts and every node's evidence.
  await writeRolloutHtml(dir).catch(() => undefined);
  return { runDir: dir };
}
