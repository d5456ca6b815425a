import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { ServiceError, WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, RetryState } from '@temporalio/common';
import { exitCodeOf, formatCliError, isServerUnreachable, resultRidingRestarts } from '../../src/cli/follow';
import { InvalidInputError } from '../../src/errors';

function capture(): { out: PassThrough; text: () => string } {
  const out = new PassThrough();
  let buf = '';
  out.on('data', (c: Buffer) => (buf += c.toString()));
  return { out, text: () => buf };
}

const unavailable = () => new ServiceError('Failed to get Workflow execution history', { cause: Object.assign(new Error('14 UNAVAILABLE: Connection refused'), { code: 14 }) });

test('following a run rides through a Temporal restart: one line that the server is unreachable, backoff, then the result', async () => {
  let calls = 0;
  const handle = {
    async result() {
      calls++;
      if (calls <= 3) throw unavailable();
      return { score: 42 };
    },
  };
  const waits: number[] = [];
  const { out, text } = capture();
  const r = await resultRidingRestarts<{ score: number }>(handle, { out, initialDelayMs: 100, maxDelayMs: 300, sleep: async (ms) => void waits.push(ms) });
  assert.deepEqual(r, { score: 42 });
  assert.equal(calls, 4);
  assert.deepEqual(waits, [100, 200, 300], 'exponential backoff, capped');
  const lines = text().trim().split('\n');
  assert.equal(lines.length, 2, text());
  assert.match(lines[0], /^saasbench: Temporal server unreachable \(ServiceError: Failed to get Workflow execution history\)/);
  assert.equal(lines[1], 'saasbench: Temporal server is back');
});

test('a failed workflow is not retried by the follower: its failure is thrown at once', async () => {
  const failed = new WorkflowFailedError('Workflow execution failed', ApplicationFailure.create({ message: 'bad', type: 'InvalidInputError' }), RetryState.NON_RETRYABLE_FAILURE);
  let calls = 0;
  await assert.rejects(
    resultRidingRestarts({
      async result() {
        calls++;
        throw failed;
      },
    }, { sleep: async () => undefined }),
    (e) => e === failed,
  );
  assert.equal(calls, 1);
  assert.ok(!isServerUnreachable(new ServiceError('x', { cause: Object.assign(new Error('3 INVALID_ARGUMENT'), { code: 3 }) })));
  assert.ok(isServerUnreachable(unavailable()));
});

test('CLI error line: `saasbench: <type>: <root message>` — a Codex rollout on a worker without the OpenAI key', () => {
  const app = ApplicationFailure.create({ message: 'provider openai: no API key in the worker environment (set OPENAI_API_KEY)', type: 'AgentConfigError', nonRetryable: true });
  const err = new WorkflowFailedError('Workflow execution failed', app, RetryState.NON_RETRYABLE_FAILURE);
  assert.equal(formatCliError(err), 'saasbench: AgentConfigError: provider openai: no API key in the worker environment (set OPENAI_API_KEY)\n');
  assert.equal(exitCodeOf(err), 1);
  // the same from a sweep's child, wrapped once more
  const act = new ActivityFailure('Activity task failed', 'runAgent', '3', RetryState.NON_RETRYABLE_FAILURE, 'w', app);
  const child = new ChildWorkflowFailure('default', { workflowId: 'rollout/x', runId: 'r' }, 'rolloutWorkflow', RetryState.NON_RETRYABLE_FAILURE, act);
  assert.equal(formatCliError(new WorkflowFailedError('Workflow execution failed', child, RetryState.NON_RETRYABLE_FAILURE)).split('\n').length, 2);
  assert.ok(!formatCliError(err).includes('WorkflowFailedError'));
  // input errors: one line per issue, exit 2 (also when the workflow rejected the input)
  assert.equal(formatCliError(InvalidInputError.one('sweep.json', 'agents[0]', 'unknown agent')), 'sweep.json: agents[0]: unknown agent\n');
  assert.equal(exitCodeOf(new WorkflowFailedError('Workflow execution failed', ApplicationFailure.create({ message: 'sweep input: name: bad', type: 'InvalidInputError' }), RetryState.NON_RETRYABLE_FAILURE)), 2);
  assert.equal(formatCliError(unavailable()), 'saasbench: ServiceError: Failed to get Workflow execution history\n');
});
