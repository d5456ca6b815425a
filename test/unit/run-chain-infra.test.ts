import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runNode } from '../../src/primitives/run-chain';
import { checkDag } from '../../src/tasks/validate-dag';
import { SandboxInfraError } from '../../src/sandbox/errors';
import { httpEnv } from '../fixtures/primitives/harness';

const dag = checkDag({ nodes: [{ id: 'A', prereqs: [], primitive_chain: [{ type: 'P01', inputs: { path: 'README.md' } }], scoring: { category: 'API', subcategory: 'X', method: 'binary', maxScore: 1 } }] }, 'dag.json').dag;

test('host trouble escaping a chain is re-thrown (the activity retries it); an exception of the check itself is the node ERROR', async () => {
  const docker = httpEnv('http://127.0.0.1:9', {
    statPath: async () => {
      throw new SandboxInfraError('docker exec: connect ECONNRESET /var/run/docker.sock');
    },
  });
  await assert.rejects(runNode(dag.nodes[0], docker, { judgeEnabled: false, vars: {} }), (e: Error) => e.name === 'SandboxInfraError');

  const broken = httpEnv('http://127.0.0.1:9', {
    statPath: async () => {
      throw new TypeError('cannot read properties of undefined');
    },
  });
  const run = await runNode(dag.nodes[0], broken, { judgeEnabled: false, vars: {} });
  assert.equal(run.status, 'ERROR');
  assert.match(run.message, /TypeError: cannot read properties of undefined/);
});
