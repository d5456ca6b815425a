import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { NativeConnection, Worker } from '@temporalio/worker';
import { connectClient, type ConnectedClient } from '../../src/temporal/connection';
import { ensureDevServer, stopDevServer, type DevServerOptions } from '../../src/temporal/dev-server';
import { resultRidingRestarts } from '../../src/cli/follow';
import { napWorkflow } from './follow-workflows';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

let server: DevServerOptions;
let conn: ConnectedClient;
let worker: Worker;
let running: Promise<void>;

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'saasbench-follow-'));
  server = { port: await freePort(), uiPort: await freePort(), dbFile: join(dir, 'dev.db'), logFile: join(dir, 'temporal.log'), pidFile: join(dir, 'dev.pid'), ignoreTemporalAddress: true };
  const h = await ensureDevServer(server);
  conn = await connectClient(h);
  worker = await Worker.create({ connection: await NativeConnection.connect({ address: h.address }), taskQueue: 'follow', workflowsPath: require.resolve('./follow-workflows') });
  running = worker.run();
});

after(async () => {
  worker?.shutdown();
  await running?.catch(() => undefined);
  await conn?.connection.close().catch(() => undefined);
  await stopDevServer(server).catch(() => undefined);
});

test('a CLI following a workflow rides through a Temporal server restart: one "unreachable" line, then the result', async () => {
  const h = await conn.client.workflow.start(napWorkflow, { taskQueue: 'follow', workflowId: `nap-${Date.now()}`, args: [40_000] });
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  const followed = resultRidingRestarts<string>(h, { out, initialDelayMs: 500, maxDelayMs: 2000 });
  await new Promise((r) => setTimeout(r, 1500));
  await stopDevServer(server);
  // longer than the client's own gRPC retries (about 15 s), which ride through a short outage
  await new Promise((r) => setTimeout(r, 25_000));
  await ensureDevServer(server);
  assert.equal(await followed, 'awake');
  const lines = text.trim().split('\n');
  assert.match(lines[0], /^saasbench: Temporal server unreachable/);
  assert.equal(lines.filter((l) => /unreachable/.test(l)).length, 1, text);
});
