import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ActivityFailure, ApplicationFailure, CancelledFailure, ChildWorkflowFailure, RetryState } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { AgentConfigError, ERROR_TYPES, NON_RETRYABLE, SaasbenchError, describeFailure, failureType, rootCause } from '../../src/errors';
import { repoRoot } from '../../src/paths';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** every `export class X extends Y` of src/, with the module that defines it */
function declaredClasses(): { name: string; file: string }[] {
  const src = join(repoRoot(), 'src');
  const out: { name: string; file: string }[] = [];
  for (const f of sources(src)) {
    for (const m of readFileSync(f, 'utf8').matchAll(/^export (?:abstract )?class (\w+) extends (\w+)/gm)) out.push({ name: m[1], file: relative(src, f).replace(/\.ts$/, '') });
  }
  return out;
}

test('every exported error class of src/ extends SaasbenchError and is listed in ERROR_TYPES with its own nonRetryable', () => {
  const found = new Set<string>();
  for (const { name, file } of declaredClasses()) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const cls = require(join('../../src', file))[name] as (abstract new (...a: never[]) => unknown) & { nonRetryable?: boolean };
    if (typeof cls !== 'function' || !(cls.prototype instanceof Error) || cls === SaasbenchError) continue;
    assert.ok(cls.prototype instanceof SaasbenchError, `${file}: ${name} must extend SaasbenchError (src/errors.ts)`);
    if (name === 'SandboxError') continue; // abstract base of the sandbox's classes
    found.add(name);
    assert.ok(name in ERROR_TYPES, `${file}: ${name} is missing from ERROR_TYPES (src/errors.ts)`);
    assert.equal(ERROR_TYPES[name as keyof typeof ERROR_TYPES], cls.nonRetryable, `${name}: ERROR_TYPES says ${ERROR_TYPES[name as keyof typeof ERROR_TYPES]}, the class says ${cls.nonRetryable}`);
  }
  for (const name of ['InvalidInputError', 'TaskChangedError', 'InfraError', 'AgentConfigError']) found.add(name);
  assert.deepEqual(Object.keys(ERROR_TYPES).filter((n) => !found.has(n)), [], 'ERROR_TYPES lists classes that no longer exist');
  assert.ok(found.size >= 20, `found ${found.size} classes`);
});

test('NON_RETRYABLE is derived from the classes: SandboxInputError (SAASBENCH_FIREWALL=required without iptables) is not retried', () => {
  assert.ok(NON_RETRYABLE.includes('SandboxInputError'));
  assert.ok(NON_RETRYABLE.includes('AgentConfigError'));
  assert.ok(!NON_RETRYABLE.includes('SandboxInfraError'));
  assert.ok(!NON_RETRYABLE.includes('InfraError'));
  assert.deepEqual(NON_RETRYABLE, Object.entries(ERROR_TYPES).filter(([, v]) => v).map(([k]) => k));
  assert.equal(new AgentConfigError('x').nonRetryable, true);
  assert.equal(new AgentConfigError('x').name, 'AgentConfigError');
});

/** what a workflow client sees when a child rollout failed because an activity threw AgentConfigError */
function acrossTemporal(type: string, message: string): WorkflowFailedError {
  const app = ApplicationFailure.create({ message, type, nonRetryable: false });
  const act = new ActivityFailure('Activity task failed', 'runAgent', '7', RetryState.NON_RETRYABLE_FAILURE, 'worker', app);
  const child = new ChildWorkflowFailure('default', { workflowId: 'rollout/x', runId: 'r' }, 'rolloutWorkflow', RetryState.NON_RETRYABLE_FAILURE, act);
  return new WorkflowFailedError('Workflow execution failed', child, RetryState.NON_RETRYABLE_FAILURE);
}

test('failureType and rootCause see through Activity/ChildWorkflow/WorkflowFailed wrappers to the class that was thrown', () => {
  const err = acrossTemporal('AgentConfigError', 'codex needs OPENAI_API_KEY on the worker');
  assert.equal(failureType(err), 'AgentConfigError');
  assert.equal((rootCause(err) as Error).message, 'codex needs OPENAI_API_KEY on the worker');
  assert.equal(describeFailure(err), 'AgentConfigError: codex needs OPENAI_API_KEY on the worker');
  assert.ok(!describeFailure(err).includes('Workflow execution failed'));
  // a local error and a cancellation keep their own names
  assert.equal(failureType(new AgentConfigError('k')), 'AgentConfigError');
  assert.equal(failureType(new ActivityFailure('x', 'a', '1', RetryState.CANCEL_REQUESTED, 'w', new CancelledFailure('cancelled'))), 'CancelledFailure');
  assert.equal(failureType('boom'), 'Error');
});
