import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSandboxBackend, dockerBackend, dockerHostAddress, hostUrl, SandboxInputError } from '../../src/sandbox';
import { shQuote, shellWord } from '../../src/shell';
import type { StackHandle } from '../../src/model/sandbox';

test('dockerHostAddress: a tcp:// DOCKER_HOST names the host published ports are on; sockets mean this machine', () => {
  assert.equal(dockerHostAddress('tcp://10.1.2.3:2376'), '10.1.2.3');
  assert.equal(dockerHostAddress('tcp://docker-box.lan:2375'), 'docker-box.lan');
  assert.equal(dockerHostAddress('tcp://[fd00::5]:2376'), 'fd00::5');
  assert.equal(dockerHostAddress('unix:///var/run/docker.sock'), '127.0.0.1');
  assert.equal(dockerHostAddress('tcp://localhost:2375'), '127.0.0.1');
  assert.equal(dockerHostAddress(undefined), '127.0.0.1');
  assert.equal(hostUrl('fd00::5', 80), 'http://[fd00::5]:80');
});

test('docker backend endpoints come from the engine host, not a hard-coded loopback', () => {
  const stack: StackHandle = { rolloutKey: 'k', project: 'p', network: 'n', services: { app: { container: 'c', ports: { '8080/tcp': 49153 } } } };
  assert.deepEqual(dockerBackend({ hostAddress: '10.1.2.3' }).endpoint(stack, 'app', 8080), { host: '10.1.2.3', port: 49153, url: 'http://10.1.2.3:49153' });
  assert.throws(() => dockerBackend({ hostAddress: '127.0.0.1' }).endpoint(stack, 'app', 9999), /publishes no port 9999/);
});

test('the factory knows its backends by name and refuses others', () => {
  assert.equal(createSandboxBackend('docker').kind, 'docker');
  assert.throws(() => createSandboxBackend('nope'), (e: Error) => e instanceof SandboxInputError && /SAASBENCH_SANDBOX=nope/.test(e.message));
});

test('one shell quoting: any content survives as one word', () => {
  assert.equal(shQuote(`it's`), `'it'\\''s'`);
  assert.equal(shellWord('plain/path.txt'), 'plain/path.txt');
  assert.equal(shellWord('a b'), `'a b'`);
});
