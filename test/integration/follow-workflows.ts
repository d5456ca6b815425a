/** Workflow for test/integration/follow-restart.test.ts: a long nap, so the server can restart under it. */
import { sleep } from '@temporalio/workflow';

export async function napWorkflow(ms: number): Promise<string> {
  await sleep(ms);
  return 'awake';
}
