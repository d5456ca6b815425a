/**
 * Workflows for test/integration/sweep-scale.test.ts: the real sweepWorkflow, and a stand-in
 * `rolloutWorkflow` that sleeps a little and returns a synthetic result — so a sweep of a hundred
 * rollouts, its continue-as-new and its re-submission can be exercised in seconds.
 */
import { sleep } from '@temporalio/workflow';
import type { RolloutInput, RolloutResult } from '../../src/model/rollout';
import type { ScoreCell } from '../../src/model/scores';

export { sweepWorkflow, sweepProgressQuery, stopSweepSignal } from '../../src/workflows/sweep';

export function fakePoints(i: Pick<RolloutInput, 'taskId' | 'agent' | 'repeat'>): number {
  if (i.agent === 'noop') return 0;
  if (i.taskId === 'tiny') return i.repeat % 2 === 0 ? 8 : 6; // mean over repeats 70 %
  return 4; // 40 %
}

function cell(score: number, maxScore: number): ScoreCell {
  return { score, maxScore, pct: maxScore > 0 ? Math.round((1000 * score) / maxScore) / 10 : null, nodes: 1, passed: score > 0 ? 1 : 0, failed: score > 0 ? 0 : 1, skippedDependency: 0, skippedLlm: 0, error: 0 };
}

export async function rolloutWorkflow(input: RolloutInput): Promise<RolloutResult> {
  await sleep(300 + (input.repeat % 4) * 150);
  const s = fakePoints(input);
  const c = cell(s, 10);
  const key = [input.sweep, input.taskId, input.agent, input.model, String(input.repeat)].join('.');
  return {
    workflowId: `rollout/${input.sweep}/${input.taskId}/${input.agent}/${input.model}/${input.repeat}`,
    rolloutKey: key,
    taskId: input.taskId,
    agent: input.agent,
    model: input.model,
    repeat: input.repeat,
    sweep: input.sweep,
    runDir: `/nonexistent/${key}`,
    host: 'fake',
    agentRun: { agent: input.agent, model: input.model, exitReason: 'completed', exitCode: 0, attempts: 1, agentSeconds: 0, message: 'fake', history: [] },
    score: { overall: c, nonLlm: c, judgeDroppedMaxScore: 0, byCategory: { Deployment: c }, byBackbone: { Deploy: c }, byTrajectory: {}, statusCounts: { [s > 0 ? 'PASSED' : 'FAILED']: 1 } },
    outcomes: [],
    timings: { provisionMs: 0, agentMs: 0, evaluationMs: 0, totalMs: 300 },
  } as RolloutResult;
}
