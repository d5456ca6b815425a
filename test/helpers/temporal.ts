import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporalBin, temporalTestServerBin } from '../../src/temporal/tools';
import { SA } from '../../src/workflows/search-attributes';
import type { WorkflowBundle } from '@temporalio/worker';
import { testWorkflowBundle } from './workflow-bundle';

/** A real Temporal dev server (the `temporal` CLI), private to one test file. */
export async function devServer(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: temporalBin() },
      searchAttributes: Object.values(SA),
      log: { format: 'json', level: 'warn' },
    },
  });
}


/**
 * The time-skipping test server (no Docker, timers skip): for workflow tests with stubbed
 * activities. Uses the binary scripts/setup.sh installs; never downloads one.
 */
export async function timeSkipping(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: temporalTestServerBin() } },
  });
  // the workflows upsert our search attributes; the test server rejects undefined ones
  const indexed: Record<string, number> = { KEYWORD: 2, DOUBLE: 4 }; // temporal.api.enums.v1.IndexedValueType
  const searchAttributes = Object.fromEntries(Object.values(SA).map((k) => [k.name, indexed[k.type]]));
  await env.connection.operatorService.addSearchAttributes({ namespace: 'default', searchAttributes });
  return env;
}

/** The time-skipping server and the shared workflow bundle: what every workflow test file starts with. */
export async function timeSkippingWithBundle(): Promise<{ env: TestWorkflowEnvironment; bundle: WorkflowBundle }> {
  const [env, bundle] = await Promise.all([timeSkipping(), testWorkflowBundle()]);
  return { env, bundle };
}
