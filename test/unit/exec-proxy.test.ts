// The exec proxy (src/security/exec-proxy.ts): its policy, and the proxy itself in front of a fake
// engine on a unix socket — only exec into the one container passes, only exec ids it created can
// be started, the hijacked exec stream is piped both ways, and a restart keeps port and token.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execBodyIssue, judge, startExecProxy, type ExecProxy } from '../../src/security/exec-proxy';

const ID = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const names = new Set(['app-1', '/app-1']);

test('policy: ping/version, inspect and exec create of the app container, its own exec ids; nothing else', () => {
  const t = 'tok';
  const ok = (m: string, p: string, ids = new Set([ID])) => judge(m, p, t, names, ids).ok;
  assert.ok(ok('HEAD', '/tok/_ping') && ok('GET', '/tok/v1.41/_ping') && ok('GET', '/tok/v1.45/version'));
  assert.ok(ok('GET', '/tok/v1.41/containers/app-1/json'));
  assert.ok(ok('POST', '/tok/v1.41/containers/app-1/exec'));
  assert.ok(ok('POST', `/tok/v1.41/exec/${ID}/start`) && ok('POST', `/tok/v1.41/exec/${ID}/resize?h=1&w=2`) && ok('GET', `/tok/v1.41/exec/${ID}/json`));
  // wrong or missing token
  assert.ok(!ok('GET', '/_ping') && !ok('GET', '/other/_ping') && !ok('GET', '/tokx/_ping'));
  // another container, other verbs on the app, the rest of the API
  for (const [m, p] of [
    ['POST', '/tok/v1.41/containers/neighbour-db/exec'],
    ['GET', '/tok/v1.41/containers/neighbour-db/json'],
    ['POST', '/tok/v1.41/containers/app-1/start'],
    ['PUT', '/tok/v1.41/containers/app-1/archive?path=/'],
    ['DELETE', '/tok/v1.41/containers/app-1'],
    ['GET', '/tok/v1.41/containers/json'],
    ['POST', '/tok/v1.41/containers/create'],
    ['POST', '/tok/v1.41/images/create?fromImage=alpine'],
    ['GET', '/tok/v1.41/info'],
    ['POST', '/tok/v1.41/containers/app-1/../x/exec'],
    ['POST', '/tok/v1.41/containers/app-1%2F..%2Fx/exec'],
    ['POST', `/tok/v1.41/exec/${OTHER}/start`],
    ['GET', `/tok/v1.41/exec/${ID}/start`],
  ]) assert.ok(!ok(m, p), `${m} ${p} refused`);
  assert.match((judge('POST', `/tok/exec/${OTHER}/start`, t, names, new Set([ID])) as { why: string }).why, /not created through this proxy/);
  assert.equal(execBodyIssue('{"Cmd":["true"]}'), null);
  assert.match(execBodyIssue('{"Cmd":["true"],"Privileged":true}')!, /privileged/);
  assert.match(execBodyIssue('nope')!, /not JSON/);
});

// a fake engine: exec create answers an id, exec start hijacks and echoes what it receives
let dir: string;
let engine: http.Server;
const seen: string[] = [];
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-exec-proxy-'));
  engine = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const body: Buffer[] = [];
    req.on('data', (b: Buffer) => body.push(b));
    req.on('end', () => {
      if (req.url?.endsWith('/exec')) res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ Id: ID, body: Buffer.concat(body).toString() }));
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
    });
  });
  engine.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    seen.push(`UPGRADE ${req.method} ${req.url}`);
    socket.write('HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
    if (head.length) socket.write(head);
    socket.pipe(socket);
  });
  await new Promise<void>((r) => engine.listen(join(dir, 'engine.sock'), r));
});
after(async () => {
  engine.closeAllConnections();
  await new Promise<void>((r) => engine.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function call(p: ExecProxy, method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const u = new URL(p.dockerHost.replace('tcp://', 'http://'));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: `${u.pathname}${path}`, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (b) => (text += b));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** exec start the way the docker CLI does it: Upgrade: tcp, then the raw stream. */
function hijack(p: ExecProxy, id: string, payload: string): Promise<string> {
  const u = new URL(p.dockerHost.replace('tcp://', 'http://'));
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname, () => {
      const body = '{"Detach":false,"Tty":false}';
      s.write(`POST ${u.pathname}/v1.41/exec/${id}/start HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      setTimeout(() => s.end(payload), 50);
    });
    let out = '';
    s.on('data', (b) => (out += b));
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

test('the proxy in front of an engine: exec into the app container passes, every other call is refused', async () => {
  const stateDir = join(dir, 'state');
  const p = await startExecProxy({ key: 'k1', bindHost: '127.0.0.1', container: 'app-1', stateDir, engineSocket: join(dir, 'engine.sock') });
  try {
    assert.match(p.dockerHost, /^tcp:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{36}$/);
    assert.equal((await call(p, 'GET', '/_ping')).text, 'OK');
    // before any exec was created, its id is unknown
    assert.equal((await call(p, 'GET', `/v1.41/exec/${ID}/json`)).status, 403);
    const created = await call(p, 'POST', '/v1.41/containers/app-1/exec', '{"Cmd":["bash"],"AttachStdin":true}');
    assert.equal(created.status, 201);
    assert.equal(JSON.parse(created.text).body, '{"Cmd":["bash"],"AttachStdin":true}', 'the body reached the engine as sent');
    assert.equal((await call(p, 'GET', `/v1.41/exec/${ID}/json`)).status, 200);
    const echoed = await hijack(p, ID, 'stdin-through-the-pipe');
    assert.match(echoed, /^HTTP\/1\.1 101/);
    assert.match(echoed, /stdin-through-the-pipe/);
    // refused: a privileged exec, another container, the rest of the API, an id it did not create
    for (const [m, path, body] of [
      ['POST', '/v1.41/containers/app-1/exec', '{"Cmd":["true"],"Privileged":true}'],
      ['POST', '/v1.41/containers/neighbour/exec', '{"Cmd":["true"]}'],
      ['GET', '/v1.41/containers/json'],
      ['POST', '/v1.41/containers/create', '{"Image":"x"}'],
    ]) {
      const r = await call(p, m, path, body);
      assert.equal(r.status, 403, `${m} ${path}`);
      assert.match(JSON.parse(r.text).message, /^saasbench exec proxy: /);
    }
    assert.match(await hijack(p, OTHER, 'x'), /^HTTP\/1\.1 403/);
    // no token: refused too
    const u = new URL(p.dockerHost.replace('tcp://', 'http://'));
    const bare = await new Promise<number>((r) => http.get({ host: u.hostname, port: u.port, path: '/_ping' }, (res) => r(res.statusCode ?? 0)));
    assert.equal(bare, 403);
    // what reached the engine: only the allowed calls, token stripped
    assert.ok(seen.every((s) => !s.includes(u.pathname.slice(1))), seen.join('\n'));
    assert.ok(!seen.some((s) => /neighbour|containers\/json|create|Privileged/.test(s)), seen.join('\n'));
    assert.equal(p.stats.execs, 1);
    assert.equal(p.stats.refused, 7);
    assert.ok(p.stats.refusedSamples.every((s) => !s.includes(u.pathname.slice(1))), 'the token is cut from the samples');
  } finally {
    await p.close();
  }
  // a restarted activity gets the same port and token back
  const again = await startExecProxy({ key: 'k1', bindHost: '127.0.0.1', container: 'app-1', stateDir, engineSocket: join(dir, 'engine.sock') });
  try {
    assert.equal(again.dockerHost, p.dockerHost);
    assert.equal(JSON.parse(readFileSync(join(stateDir, 'exec-proxy.json'), 'utf8')).port, again.port);
  } finally {
    await again.close();
  }
});
