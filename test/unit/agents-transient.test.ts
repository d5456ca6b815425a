import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transientIn } from '../../src/agents/transient';

test('status codes count only where they are HTTP statuses', () => {
  for (const t of ['API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}', 'unexpected status 429 Too Many Requests', 'HTTP/1.1 503', 'Error code: 429', '{"status":529}', 'statusCode=503', '503 Service Unavailable', 'got HTTP 429 from upstream']) {
    assert.ok(transientIn([t]), `transient: ${t}`);
  }
  for (const t of ['processed 529 files', 'retrying in 503 ms', 'wrote 429 lines to server.js', 'port 5290', 'issue #429 fixed']) {
    assert.equal(transientIn([t]), null, `not transient: ${t}`);
  }
  assert.match(transientIn(['status 429'])!, /^HTTP 429\/503\/529: /);
});
