// The Docker backend's own operations (src/sandbox/docker-backend.ts) against the real engine:
// the sidecar OpenHands uses, host files streamed in, archives unpacked, logs, addresses, and
// down() removing what startSidecar created.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dockerBackend, docker } from '../../src/sandbox';
import { labelledFor } from '../helpers/docker';

const sb = dockerBackend();
const key = `sbseam-${Date.now().toString(36)}`;
const name = `${key}-sidecar`;
const tmp = mkdtempSync(join(tmpdir(), 'sb-seam-it-'));
after(async () => {
  await sb.down(key);
  rmSync(tmp, { recursive: true, force: true });
});

test('docker backend: sidecar, host-file writes, archives, logs, addresses, down', async () => {
  const spec = { name, rolloutKey: key, taskId: 'seam', image: 'saasbench/base:bookworm', env: ['SEAM=1'], network: 'bridge', role: 'test-sidecar' };
  assert.equal(await sb.startSidecar(spec), name);
  const id = (await docker().getContainer(name).inspect()).Id;
  assert.equal(await sb.startSidecar(spec), name);
  assert.equal((await docker().getContainer(name).inspect()).Id, id, 'a running sidecar is kept, not recreated');
  assert.equal((await sb.exec(name, ['sh', '-c', 'echo $SEAM'])).stdout, '1\n');

  const big = join(tmp, 'bin');
  writeFileSync(big, Buffer.alloc(300_000, 5));
  await sb.writeFiles(name, '/opt/seam/bin', [{ path: 'tool', hostFile: big, mode: 0o555 }, { path: 'note.txt', content: 'hi' }]);
  assert.equal((await sb.exec(name, ['stat', '-c', '%s %a', '/opt/seam/bin/tool'])).stdout.trim(), '300000 555');
  assert.equal((await sb.readFile(name, '/opt/seam/bin/note.txt'))?.toString(), 'hi');

  const src = mkdtempSync(join(tmp, 'ws-'));
  writeFileSync(join(src, 'a.txt'), 'restored\n');
  execFileSync('tar', ['-C', src, '-czf', join(tmp, 'ws.tgz'), '.']);
  await sb.exec(name, ['mkdir', '-p', '/ws']);
  await sb.extractArchive(name, '/ws', readFileSync(join(tmp, 'ws.tgz')));
  assert.equal((await sb.readFile(name, '/ws/a.txt'))?.toString(), 'restored\n');

  assert.ok((await sb.addresses(name)).length >= 1, 'a bridge address');
  assert.equal(typeof (await sb.logs(name, 10)), 'string');

  assert.ok(labelledFor(key).some((l) => l.includes(name)));
  const r = await sb.down(key);
  assert.equal(r.removed.containers, 1);
  assert.deepEqual(labelledFor(key), []);
});
