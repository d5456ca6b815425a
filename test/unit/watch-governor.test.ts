/**
 * `run --watch` shows the rate governor's waits: live during the agent phase (from the runAgent
 * activity's heartbeat, SupervisionState.unbilledMs) and, once the phase has ended, the agent
 * summary's count and seconds. A stand-in handle answers the query and the describe.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { watchRollout } from '../../src/cli/watch-rollout';
import type { RolloutProgress } from '../../src/model/rollout';

const base: RolloutProgress = { phase: 'agent', nodesTotal: 0, nodesDone: 0, nodesRunning: [], statusCounts: {}, scorePct: null, startedAt: Date.now(), phaseStartedAt: Date.now() };

async function watchOnce(progress: RolloutProgress, beat: unknown): Promise<string> {
  const handle = {
    query: async () => progress,
    describe: async () => ({ raw: { pendingActivities: [{ activityType: { name: 'runAgent' }, heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload(beat)] } }] } }),
  } as unknown as WorkflowHandle;
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  await watchRollout(handle, new Promise((r) => setTimeout(r, 300)), out);
  return text;
}

test('watch: governor waits live from the agent heartbeat, then from the agent summary', async () => {
  assert.match(await watchOnce(base, { attempt: 1, unbilledMs: 12_000 }), /agent · governor waits 12s so far \(not billed to the agent\)/);
  assert.doesNotMatch(await watchOnce(base, { attempt: 1 }), /governor/);
  assert.match(await watchOnce({ ...base, phase: 'evaluating', governor: { waits: 3, waitSeconds: 7.5 } }, undefined), /governor waits 3 \(7\.5s, not billed to the agent\)/);
});

test('sweep watch: a running rollout past its agent phase shows its governor waits', async () => {
  const { rolloutLine } = await import('../../src/cli/watch');
  const r = { workflowId: 'w', taskId: 't1', agent: 'codex', model: 'm', repeat: 0, state: 'running' as const, startedAt: Date.now() };
  assert.match(rolloutLine(r, { ...base, phase: 'evaluating', governor: { waits: 4, waitSeconds: 61 } }, Date.now()), /evaluating · governor waits 4 \(1m01s\)/);
  assert.doesNotMatch(rolloutLine(r, { ...base, phase: 'evaluating', governor: { waits: 0, waitSeconds: 0 } }, Date.now()), /governor/);
  assert.doesNotMatch(rolloutLine(r, base, Date.now()), /governor/);
});
