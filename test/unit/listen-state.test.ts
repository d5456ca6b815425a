// readListenState: the relay's and the proxies' state file, read back by a restarted activity.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readListenState } from '../../src/listen';

test('readListenState: the saved bind address, port and token; null for a missing, unreadable or misshapen file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saasbench-listen-'));
  const f = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));
  assert.deepEqual(readListenState(f('ok.json', JSON.stringify({ bindHost: '172.17.0.1', port: 41234, token: 't0k', startedAt: 'x' }))), { bindHost: '172.17.0.1', port: 41234, token: 't0k' });
  assert.deepEqual(readListenState(f('egress.json', JSON.stringify({ bindHost: '127.0.0.1', port: 5 }))), { bindHost: '127.0.0.1', port: 5 });
  assert.equal(readListenState(join(dir, 'missing.json')), null);
  assert.equal(readListenState(f('torn.json', '{"bindHost":"127.0.0.1","po')), null);
  assert.equal(readListenState(f('port-text.json', JSON.stringify({ bindHost: '127.0.0.1', port: '5', token: 't' }))), null);
  assert.equal(readListenState(f('no-host.json', JSON.stringify({ port: 5, token: 't' }))), null);
  assert.equal(readListenState(f('token-number.json', JSON.stringify({ bindHost: '127.0.0.1', port: 5, token: 7 }))), null);
});
