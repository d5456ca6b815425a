// The snapshot store contract, for the directory store and the S3 store (against moto's S3 server on
// 127.0.0.1, installed into .saasbench/venv by scripts/setup.sh), and the snapshot catalogue on top.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { repoRoot } from '../../src/paths';
import { DirSnapshotStore, type SnapshotStore } from '../../src/snapshots/store';
import { S3SnapshotStore } from '../../src/snapshots/s3-store';
import { snapshotKeep, snapshotStore } from '../../src/snapshots/factory';
import { listSnapshots, nextSeq, pruneSnapshots, readSnapshot, snapshotId } from '../../src/snapshots/rollout-snapshot';

const MOTO = join(repoRoot(), '.saasbench', 'venv', 'bin', 'moto_server');
let moto: ChildProcess | undefined;
let s3: S3SnapshotStore | undefined;
const creds = { accessKeyId: 'test', secretAccessKey: 'test' };

const freePort = () =>
  new Promise<number>((r) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => r(p));
    });
  });

before(async () => {
  if (!existsSync(MOTO)) return;
  const port = await freePort();
  moto = spawn(MOTO, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: creds });
  for (let i = 0; ; i++) {
    try {
      await client.send(new CreateBucketCommand({ Bucket: 'snaps' }));
      break;
    } catch (err) {
      if (i > 100) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  client.destroy();
  s3 = new S3SnapshotStore({ bucket: 'snaps', prefix: 'saasbench/', endpoint, credentials: creds });
});
after(() => {
  s3?.close();
  moto?.kill();
});

async function contract(store: SnapshotStore): Promise<void> {
  assert.equal(await store.get('k/0001/meta.json'), null);
  assert.deepEqual(await store.list('k/'), []);
  const big = Buffer.alloc(3 * 1024 * 1024, 7);
  await store.put('k/0001/workspace.tar.gz', big);
  await store.put('k/0002/meta.json', Buffer.from('{"seq":2}'));
  await store.put('k2/0001/meta.json', Buffer.from('{}'));
  assert.deepEqual((await store.get('k/0001/workspace.tar.gz'))?.equals(big), true);
  assert.deepEqual(await store.list('k/'), ['k/0001/workspace.tar.gz', 'k/0002/meta.json'], 'only the prefix, not k2/');
  // a snapshot is complete when its meta.json is there: 0001 has none
  const meta = (seq: number, final = false) => Buffer.from(JSON.stringify({ id: snapshotId('r', seq), rolloutKey: 'r', seq, takenAt: seq, host: 'h', agentSeconds: seq * 10, final, bytes: {}, agent: 'a', model: 'm', supervision: {}, sessionPaths: [], databases: [] }));
  await store.put('r/0001/workspace.tar.gz', Buffer.from('x'));
  for (const seq of [10, 2, 1]) await store.put(`r/${String(seq).padStart(4, '0')}/meta.json`, meta(seq, seq === 10));
  await store.put('r/0011/workspace.tar.gz', Buffer.from('incomplete'));
  assert.deepEqual((await listSnapshots(store, 'r')).map((s) => s.seq), [1, 2, 10], 'in order; 0011 without meta ignored');
  assert.equal((await readSnapshot(store, 'r', 'latest'))?.final, true);
  assert.equal((await readSnapshot(store, 'r', 2))?.agentSeconds, 20);
  assert.equal(await readSnapshot(store, 'r', 3), null);
  assert.equal(await nextSeq(store, 'r'), 11);
  assert.equal(await nextSeq(store, 'none'), 1);
  // retention: the newest two complete snapshots stay, with every part; nothing of another rollout goes
  await store.put('r/0002/workspace.tar.gz', Buffer.from('y'));
  assert.deepEqual(await pruneSnapshots(store, 'r', 2), [1]);
  assert.deepEqual((await listSnapshots(store, 'r')).map((s) => s.seq), [2, 10]);
  assert.deepEqual(await store.list('r/0001/'), [], 'every part of the pruned snapshot is gone');
  assert.deepEqual(await store.list('r/0002/'), ['r/0002/meta.json', 'r/0002/workspace.tar.gz']);
  assert.deepEqual(await store.list('r/0011/'), ['r/0011/workspace.tar.gz'], 'an incomplete snapshot is not counted or touched');
  assert.deepEqual(await pruneSnapshots(store, 'r', 2), [], 'nothing more to prune');
  assert.equal((await store.list('k2/')).length, 1);
  await store.remove(['k2/0001/meta.json', 'k2/0001/absent']);
  assert.deepEqual(await store.list('k2/'), [], 'removing a missing key is no error');
}

test('SAASBENCH_SNAPSHOT_KEEP: unset keeps all; a whole number ≥ 1; anything else one clear error', () => {
  assert.equal(snapshotKeep({}), null);
  assert.equal(snapshotKeep({ SAASBENCH_SNAPSHOT_KEEP: ' 3 ' }), 3);
  for (const bad of ['0', '-1', '2.5', 'all']) assert.throws(() => snapshotKeep({ SAASBENCH_SNAPSHOT_KEEP: bad }), /SAASBENCH_SNAPSHOT_KEEP.*not a whole number/);
});

test('directory store: put/get/list and the snapshot catalogue', async () => {
  await contract(new DirSnapshotStore(mkdtempSync(join(tmpdir(), 'saasbench-snapstore-'))));
});

test('directory store refuses keys that leave it', async () => {
  const store = new DirSnapshotStore(mkdtempSync(join(tmpdir(), 'saasbench-snapstore-')));
  await assert.rejects(store.put('../x', Buffer.from('')), /leaves the store/);
});

test('S3 store (moto on 127.0.0.1): the same contract', async (t) => {
  if (!s3) return t.skip(`needs ${MOTO} (bash scripts/setup.sh installs moto[server])`);
  await contract(s3);
});

test('factory: a bucket selects S3 (validated), else the directory under the runs dir or SAASBENCH_SNAPSHOT_DIR', () => {
  assert.equal(snapshotStore({ SAASBENCH_SNAPSHOT_S3_BUCKET: 'my-bucket', SAASBENCH_SNAPSHOT_S3_ENDPOINT: 'http://127.0.0.1:9' }).location, 's3://my-bucket/');
  assert.throws(() => snapshotStore({ SAASBENCH_SNAPSHOT_S3_BUCKET: 'Bad_Bucket' }), /SAASBENCH_SNAPSHOT_S3_BUCKET.*not a valid bucket name/);
  assert.equal(snapshotStore({ SAASBENCH_SNAPSHOT_DIR: '/x/y' }).location, '/x/y');
  assert.equal(snapshotStore({}).kind, 'dir');
});
