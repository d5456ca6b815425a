/**
 * The governor without a Temporal target: the gate's construction fails at once with a typed,
 * non-retryable error (the workflows' retry policy stops on it) instead of each model request
 * waiting a minute for a lease that cannot come.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { GovernorConfigError, providerGovernor } from '../../src/governor/client';
import { NON_RETRYABLE, failureType, notRunReason } from '../../src/errors';

test('providerGovernor with no configureGovernor: GovernorConfigError, not retried, reported as "not run"', () => {
  // this file never calls configureGovernor, and node --test runs each file in its own process
  let thrown: unknown;
  assert.throws(() => providerGovernor('anthropic', { concurrent: 1 }), (e) => ((thrown = e), e instanceof GovernorConfigError));
  const err = thrown as GovernorConfigError;
  assert.equal(err.name, 'GovernorConfigError');
  assert.equal(err.nonRetryable, true);
  assert.match(err.message, /no Temporal target is configured/);
  assert.ok(NON_RETRYABLE.includes('GovernorConfigError'));
  // what the workflow sees when the activity threw it
  const across = ApplicationFailure.create({ message: err.message, type: err.name });
  assert.equal(failureType(across), 'GovernorConfigError');
  assert.match(notRunReason(across) ?? '', /^GovernorConfigError: rate governor/);
});
