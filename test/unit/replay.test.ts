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
