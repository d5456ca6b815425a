/**
 * Real `temporal server start-dev` on free non-default ports with a temp db file: search attributes
 * are registered, the server is reused while it runs, stop really stops it, and a workflow started
 * before a restart is still there afterwards (state persisted in the db file).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import { connectClient } from '../../src/temporal/connection';
import { SA } from '../../src/workflows/search-attributes';
import { isAlive } from '../../src/temporal/dev-server-process';
import {
  DevServerOptions,
  ensureDevServer,
  ensureSearchAttributes,
  loadDevServerConfig,
  probeTemporal,
  stopDevServer,
  tcpProbe,
} from '../../src/temporal/dev-server';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  assert.fail(`${what} did not happen within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'saasbench-devserver-'));
let opts: DevServerOptions;

after(async () => {
  if (opts) await stopDevServer(opts).catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('dev server: search attributes, reuse, stop, restart keeps state', { timeout: 180_000 }, async () => {
  const [port, uiPort] = [await freePort(), await freePort()];
  assert.notEqual(port, 7233);
  opts = {
    port,
    uiPort,
    dbFile: path.join(dir, 'dev.db'),
    logFile: path.join(dir, 'temporal.log'),
    pidFile: path.join(dir, 'dev.pid'),
    ignoreTemporalAddress: true,
  };

  // --- first start
  const first = await ensureDevServer(opts);
  assert.equal(first.started, true);
  assert.equal(first.external, false);
  assert.equal(first.address, `127.0.0.1:${port}`);
  assert.equal(first.uiUrl, `http://127.0.0.1:${uiPort}`);
  assert.ok(first.pid && first.pid > 1);
  assert.equal(fs.readFileSync(opts.pidFile!, 'utf8').trim(), String(first.pid));
  assert.ok(fs.existsSync(opts.dbFile!), 'db file created');

  // reuse while running: no second process
  const again = await ensureDevServer(opts);
  assert.equal(again.started, false);
  assert.equal(again.pid, first.pid);

  const wanted = loadDevServerConfig().searchAttributes;
  let { client, connection } = await connectClient(first);
  const workflowId = `saasbench-devserver-test-${process.pid}-${Date.now()}`;
  const TASK = defineSearchAttributeKey('SaasbenchTask', SearchAttributeType.KEYWORD);
  const SCORE = defineSearchAttributeKey('SaasbenchScore', SearchAttributeType.DOUBLE);
  try {
    // every configured attribute is registered with the right type
    const listed = await connection.operatorService.listSearchAttributes({ namespace: first.namespace });
    const custom = listed.customAttributes ?? {};
    const typeIds: Record<string, number> = { Keyword: 2, Double: 4 };
    // the config registers exactly the attributes the workflows set
    assert.deepEqual(Object.keys(wanted).sort(), Object.values(SA).map((k) => k.name).sort());
    for (const [name, type] of Object.entries(wanted)) {
      assert.equal(custom[name], typeIds[type], `search attribute ${name} should be registered as ${type}`);
    }

    // ensureSearchAttributes: nothing to add for the configured ones; adds a new one exactly once
    assert.deepEqual(await ensureSearchAttributes(connection, first.namespace), []);
    assert.deepEqual(await ensureSearchAttributes(connection, first.namespace, { SaasbenchTestExtra: 'Keyword' }), [
      'SaasbenchTestExtra',
    ]);
    await eventually('SaasbenchTestExtra visible', async () => {
      const l = await connection.operatorService.listSearchAttributes({ namespace: first.namespace });
      return l.customAttributes?.SaasbenchTestExtra === 2 ? true : undefined;
    });
    assert.deepEqual(await ensureSearchAttributes(connection, first.namespace, { SaasbenchTestExtra: 'Keyword' }), []);
    // a type conflict is reported, not ignored
    await assert.rejects(ensureSearchAttributes(connection, first.namespace, { SaasbenchScore: 'Keyword' }), /SaasbenchScore/);

    // a workflow nobody polls stays running
    await client.workflow.start('saasbenchNobodyPolls', {
      taskQueue: 'nobody',
      workflowId,
      typedSearchAttributes: new TypedSearchAttributes([
        { key: TASK, value: 'devserver-test' },
        { key: SCORE, value: 42.5 },
      ]),
    });
    await eventually('workflow visible before restart', async () => {
      for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) return wf;
      return undefined;
    });
  } finally {
    await connection.close();
  }

  // --- stop: process gone, port closed, pid file removed
  const stopped = await stopDevServer(opts);
  assert.deepEqual(stopped, { stopped: true, pid: first.pid });
  assert.equal(fs.existsSync(opts.pidFile!), false);
  assert.equal(await tcpProbe('127.0.0.1', port, 500), false, 'port closed after stop');
  assert.equal((await probeTemporal(first.address)).ok, false);
  // gone or a zombie awaiting its reaping by this process (it was our child): not running either way
  assert.equal(isAlive(first.pid!), false, 'process gone after stop');
  assert.deepEqual(await stopDevServer(opts), { stopped: false, reason: `no pid file at ${opts.pidFile}` });

  // --- restart on the same db file: the workflow is still there, still running, still searchable
  const second = await ensureDevServer(opts);
  assert.equal(second.started, true);
  assert.notEqual(second.pid, first.pid);
  ({ client, connection } = await connectClient(second));
  try {
    const desc = await client.workflow.getHandle(workflowId).describe();
    assert.equal(desc.status.name, 'RUNNING');
    assert.equal(desc.taskQueue, 'nobody');
    assert.equal(desc.typedSearchAttributes.get(TASK), 'devserver-test');
    const found = await eventually('workflow found by search attribute after restart', async () => {
      const ids: string[] = [];
      for await (const wf of client.workflow.list({ query: `SaasbenchTask = 'devserver-test' AND SaasbenchScore > 40` })) {
        ids.push(wf.workflowId);
      }
      return ids.includes(workflowId) ? ids : undefined;
    });
    assert.ok(found.includes(workflowId));
    // the extra attribute added at runtime survived too
    const listed = await connection.operatorService.listSearchAttributes({ namespace: second.namespace });
    assert.equal(listed.customAttributes?.SaasbenchTestExtra, 2);

    await client.workflow.getHandle(workflowId).terminate('test done');
    assert.equal((await client.workflow.getHandle(workflowId).describe()).status.name, 'TERMINATED');
  } finally {
    await connection.close();
  }
  assert.equal((await stopDevServer(opts)).stopped, true);
});
