import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rewritePublishedCompose } from '../../src/tasks/published';

test('published compose: host directories outside the task become per-rollout volumes; the task folder stays a bind', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-hostdirs-'));
  try {
    mkdirSync(join(dir, 'cfg'));
    writeFileSync(join(dir, '.env'), 'CONFIG=~/.conference-cfg\n');
    const raw = {
      services: {
        xmpp: { image: 'x', volumes: ['${CONFIG:-~/.conference-cfg}/prosody/config:/config:Z', '${CONFIG:-~/.conference-cfg}/prosody/config:/again:ro', './cfg/init.sql:/docker-entrypoint-initdb.d/init.sql:ro', '/etc/passwd:/host-passwd'] },
        app: { image: 'a', volumes: ['./workspace:/app'] },
      },
    };
    const { doc, notes } = rewritePublishedCompose(raw, dir, 'app', '/app', true);
    const vols = doc.services!.xmpp.volumes as string[];
    assert.equal(vols[0], 'saasbench_host_0:/config', 'the SELinux :Z flag goes with the bind');
    assert.equal(vols[1], 'saasbench_host_0:/again:ro', 'the same host directory is the same volume');
    assert.equal(vols[2], `${join(dir, 'cfg/init.sql')}:/docker-entrypoint-initdb.d/init.sql:ro`, 'a file of the task stays a (read-only) bind');
    assert.equal(vols[3], 'saasbench_host_1:/host-passwd');
    assert.ok(doc.volumes && 'saasbench_host_0' in doc.volumes && 'saasbench_host_1' in doc.volumes);
    assert.equal(notes.filter((n) => /a host directory outside the task/.test(n)).length, 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
