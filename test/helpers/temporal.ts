import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporalBin } from '../../src/temporal/tools';
import { SA } from '../../src/workflows/search-attributes';

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

