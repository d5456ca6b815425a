/**
 * Record the sweepWorkflow history replayed by test/unit/replay.test.ts (sweep-fake.json): the real
 * sweep workflow over stand-in rollouts (test/integration/sweep-fake-workflows.ts), so the sweep's
 * own command sequence is pinned without Docker. Run after a deliberate, versioned change to the
 * sweep workflow: `node dist/test/tools/record-sweep-history.js`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { NativeConnection, Worker } from '@temporalio/worker';
import { sweepLookupRollouts, sweepResolveTasks, sweepWriteReport } from '../../src/activities';
import { repoRoot } from '../../src/paths';
import { sweepWorkflowId, type SweepInputRaw } from '../../src/model/sweep';
import { devServer } from '../helpers/temporal';
import { sweepWorkflow } from '../../src/workflows/sweep';

const QUEUE = 'record-sweep';

async function main(): Promise<void> {
  process.env.SAASBENCH_RUNS_DIR = mkdtempSync(join(tmpdir(), 'record-sweep-'));
  const env = await devServer();
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address: env.address }),
    taskQueue: QUEUE,
    workflowsPath: require.resolve('../integration/sweep-fake-workflows'),
    activities: { sweepResolveTasks, sweepLookupRollouts, sweepWriteReport },
  });
  const running = worker.run();
  try {
    const input: SweepInputRaw = {
      name: 'replay-fixture',
      tasks: ['test/fixtures/tasks/tiny', 'test/fixtures/tasks/tiny2'],
      agents: ['oracle', 'noop'],
      repeats: 2,
      concurrency: 3,
      continueAsNewEvery: 100,
      taskQueue: QUEUE,
      evaluation: { parallelism: 1, judge: { enabled: false, model: 'none' } },
    };
    const id = sweepWorkflowId(input.name);
    await env.client.workflow.execute(sweepWorkflow, { workflowId: id, taskQueue: QUEUE, args: [input] });
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    writeFileSync(join(repoRoot(), 'test', 'fixtures', 'histories', 'sweep-fake.json'), historyToJSON(history));
    console.log(`recorded sweep-fake: ${history.events?.length} events`);
  } finally {
    worker.shutdown();
    await running;
    await env.teardown();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
