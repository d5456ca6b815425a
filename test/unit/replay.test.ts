import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { testWorkflowBundle } from '../helpers/workflow-bundle';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { repoRoot } from '../../src/paths';
import { sweepWorkflowId } from '../../src/model/sweep';

const dir = join(repoRoot(), 'test', 'fixtures', 'histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

test('replay fixtures exist (recorded from real runs)', () => {
  assert.ok(files.length >= 3, `found ${files.join(', ')}`);
});

// The sweep checks that it runs under the id its name implies; replay must use the recorded id.
const workflowIds: Record<string, string> = { 'sweep-fake.json': sweepWorkflowId('replay-fixture') };

// One bundle for every history: bundling is most of a replay's cost.
let bundle: WorkflowBundle;
before(async () => {
  bundle = await testWorkflowBundle();
});

// A change to workflow code that is not replay-safe (new activity order, removed timer…) fails here.
for (const f of files) {
  test(`workflow history ${f} replays deterministically on the current workflow code`, async () => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(dir, f), 'utf8')));
    assert.ok((history.events?.length ?? 0) > 10);
    await Worker.runReplayHistory({ workflowBundle: bundle, replayName: f }, history, workflowIds[f]);
  });
}

// A rollout recorded before metering, whose agent result now carries a gateway cost: the cost
// rides in the score's upsert (one command), so the recorded history still replays.
test('a history recorded before metering replays when the agent result carries a cost (SaasbenchCostUsd upsert)', async () => {
  const raw = JSON.parse(readFileSync(join(dir, 'tiny-noop.json'), 'utf8')) as { events: Record<string, any>[] };
  const sched = new Map(raw.events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes.activityType.name as string]));
  let patched = 0;
  for (const e of raw.events) {
    const a = e.activityTaskCompletedEventAttributes;
    if (!a || sched.get(String(a.scheduledEventId)) !== 'runAgent') continue;
    const p = a.result.payloads[0];
    const run = JSON.parse(Buffer.from(p.data, 'base64').toString('utf8'));
    run.gateway = { usage: { requests: 1, input: 10, cachedInput: 0, output: 1, reasoning: 0 }, costUsd: 0.25, costReason: null, price: null, settings: null };
    p.data = Buffer.from(JSON.stringify(run)).toString('base64');
    patched++;
  }
  assert.equal(patched, 1);
  await Worker.runReplayHistory({ workflowBundle: bundle, replayName: 'tiny-noop+cost' }, historyFromJSON(raw));
});

// The input check's local activity may end the first workflow task (a query or a slow worker can
// do that): a workflow task boundary then follows its marker. The SDK knows a task's patches from
// that task's own events, so every patch of the first task is asked for before the local activity
// (src/workflows/rollout.ts); this history, split there, must still replay.
test('a rollout whose first workflow task ended at the input check replays (patches asked for before the local activity)', async () => {
  const raw = JSON.parse(readFileSync(join(dir, 'tiny-noop-validate-in-activity.json'), 'utf8')) as { events: Record<string, any>[] };
  const ev = raw.events;
  const at = ev.findIndex((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
  assert.ok(at > 0, 'the fixture has the local activity marker');
  const base = Number(ev[at].eventId);
  const firstDone = String(ev.find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED')!.eventId);
  const renumber = (o: Record<string, any>): void => {
    for (const [k, v] of Object.entries(o)) {
      if (/EventId$/.test(k) && typeof v === 'string' && Number(v) > base) o[k] = String(Number(v) + 3);
      else if (v && typeof v === 'object') renumber(v);
    }
  };
  for (const e of ev.slice(at + 1)) {
    e.eventId = String(Number(e.eventId) + 3);
    renumber(e);
  }
  const id = (k: number) => String(base + k);
  const t = ev[at].eventTime;
  const boundary = [
    { eventId: id(1), eventTime: t, eventType: 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED', workflowTaskScheduledEventAttributes: { ...ev[1].workflowTaskScheduledEventAttributes } },
    { eventId: id(2), eventTime: t, eventType: 'EVENT_TYPE_WORKFLOW_TASK_STARTED', workflowTaskStartedEventAttributes: { scheduledEventId: id(1), identity: 'split', requestId: 'split' } },
    { eventId: id(3), eventTime: t, eventType: 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED', workflowTaskCompletedEventAttributes: { scheduledEventId: id(1), startedEventId: id(2), identity: 'split' } },
  ];
  // the commands after the boundary are the new task's
  for (const e of ev.slice(at + 1)) {
    const a = Object.values(e).find((x): x is Record<string, string> => !!x && typeof x === 'object' && 'workflowTaskCompletedEventId' in x);
    if (!a || a.workflowTaskCompletedEventId !== firstDone) break;
    a.workflowTaskCompletedEventId = id(3);
  }
  ev.splice(at + 1, 0, ...boundary);
  await Worker.runReplayHistory({ workflowBundle: bundle, replayName: 'validate-in-activity+split' }, historyFromJSON(raw));
});
