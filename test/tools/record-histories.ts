/**
 * Re-record the workflow histories replayed by test/unit/replay.test.ts. Run after a deliberate,
 * versioned change to workflow code: `node dist/test/tools/record-histories.js [name ...]` (names:
 * only those cases; recordings of older workflow code stay as they are, to keep replaying).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { startWorker } from '../../src/worker/worker';
import { repoRoot } from '../../src/paths';
import { rolloutWorkflowId } from '../../src/model/rollout';
import { devServer } from '../helpers/temporal';
import { rolloutInput, runRolloutWorkflow } from '../helpers/rollout';

async function main(): Promise<void> {
  process.env.SAASBENCH_RUNS_DIR = mkdtempSync(join(tmpdir(), 'record-'));
  const env = await devServer();
  const worker = await startWorker({ address: env.address, namespace: 'default', hostId: 'recorder' });
  try {
    const cases = [
      ['tiny-oracle', join(repoRoot(), 'test', 'fixtures', 'tasks', 'tiny'), 'oracle'],
      ['tiny-noop', join(repoRoot(), 'test', 'fixtures', 'tasks', 'tiny'), 'noop'],
      ['helpdesk-oracle', join(repoRoot(), 'tasks', 'helpdesk'), 'oracle'],
      // the input checked by the validateRolloutInput local activity (VALIDATE_IN_ACTIVITY_PATCH)
      ['tiny-noop-validate-in-activity', join(repoRoot(), 'test', 'fixtures', 'tasks', 'tiny'), 'noop'],
    ] as const;
    const only = process.argv.slice(2);
    for (const [name, dir, agent] of cases) {
      if (only.length && !only.includes(name)) continue;
      const input = rolloutInput(dir, agent, { sweep: 'replay-fixture', evaluation: { parallelism: 8, judge: { enabled: false, model: 'x' } } });
      await runRolloutWorkflow(env, input);
      const history = await env.client.workflow.getHandle(rolloutWorkflowId(input)).fetchHistory();
      writeFileSync(join(repoRoot(), 'test', 'fixtures', 'histories', `${name}.json`), historyToJSON(history));
      console.log(`recorded ${name}: ${history.events?.length} events`);
    }
  } finally {
    await worker.shutdown();
    await env.teardown();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
