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
