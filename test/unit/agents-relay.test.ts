// The LLM relay on 127.0.0.1 in front of the fakes: token check, key injection, SSE passing through
// unbuffered, upstream abort when the client goes away, body overrides, port reuse across restarts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../src/agents/llm-relay';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import { startFakeOpenAI } from '../fakes/fake-openai';
import type { FakeServer } from '../fakes/fake-common';

const KEY = 'sk-real-key-relay-unit-0123456789';
const fakes: FakeServer[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

function post(url: string, path: string, headers: Record<string, string>, body: unknown, onChunk?: (s: string, at: number) => void): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = http.request(new URL(path, url), { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(data.length), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
        onChunk?.(c.toString(), Date.now());
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

const messagesBody = { model: 'claude-x', stream: true, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'Bash' }] };

test('relay: rejects other tokens (401), injects the real key as x-api-key, streams SSE through', async () => {
  const fake = await startFakeAnthropic({ script: { commands: ['echo hi'] }, requireKey: KEY });
  fakes.push(fake);
  const relay = await startRelay({ key: 'r-unit-1', bindHost: '127.0.0.1', upstream: { baseUrl: fake.url, key: KEY, auth: 'x-api-key', keyEnv: 'X' }, stateDir: mkdtempSync(join(tmpdir(), 'relay-')) });
  try {
    assert.match(relay.token, /^sk-saasbench-relay-[0-9a-f]{36}$/);
    const bad = await post(relay.url, '/v1/messages', { 'x-api-key': 'sk-guess' }, messagesBody);
    assert.equal(bad.status, 401);
    assert.equal(fake.requests.length, 0, 'a rejected request never reaches the upstream');
    const ok = await post(relay.url, '/v1/messages?beta=true', { 'x-api-key': relay.token }, messagesBody);
    assert.equal(ok.status, 200);
    assert.match(String(ok.headers['content-type']), /text\/event-stream/);
    assert.match(ok.text, /event: message_start[\s\S]*"name":"Bash"[\s\S]*event: message_stop/);
    assert.equal(fake.requests.at(-1)!.auth, 'ok', 'the upstream saw the real key');
    assert.equal(fake.requests.at(-1)!.path, '/v1/messages');
    // Bearer works too (Codex sends Authorization)
    const bearer = await post(relay.url, '/v1/messages', { authorization: `Bearer ${relay.token}` }, messagesBody);
    assert.equal(bearer.status, 200);
    assert.deepEqual({ rejected: relay.stats.rejected, requests: relay.stats.requests }, { rejected: 1, requests: 3 });
  } finally {
    await relay.close();
  }
});

test('relay: bearer upstream under a path prefix; chunks arrive as the upstream sends them (no buffering)', async () => {
  // a hand-made upstream that sends one SSE frame, waits 600 ms, sends another
  let seenAuth = '';
  let seenPath = '';
  const up = http.createServer((req, res) => {
    seenAuth = String(req.headers.authorization);
    seenPath = String(req.url);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    setTimeout(() => res.end('data: two\n\n'), 600);
  });
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  const port = (up.address() as { port: number }).port;
  const relay = await startRelay({ key: 'r-unit-2', bindHost: '127.0.0.1', upstream: { baseUrl: `http://127.0.0.1:${port}/openai/v1`, key: KEY, auth: 'bearer', keyEnv: 'X' }, stateDir: mkdtempSync(join(tmpdir(), 'relay-')) });
  try {
    const chunks: { s: string; at: number }[] = [];
    const r = await post(relay.url, '/responses', { authorization: `Bearer ${relay.token}` }, { stream: true }, (s, at) => chunks.push({ s, at }));
    assert.equal(r.status, 200);
    assert.equal(seenAuth, `Bearer ${KEY}`);
    assert.equal(seenPath, '/openai/v1/responses', 'upstream base path + request path');
    assert.ok(chunks.length >= 2, 'two separate chunks');
    assert.match(chunks[0].s, /one/);
    assert.ok(chunks.at(-1)!.at - chunks[0].at >= 400, 'the first frame was delivered before the second was produced');
  } finally {
    await relay.close();
    up.close();
  }
});

test('relay: a client that hangs up on a stalled stream makes the relay drop the upstream call', async () => {
  let upstreamClosed = false;
  const up = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('event: message_start\ndata: {}\n\n');
    res.on('close', () => (upstreamClosed = true)); // never ends by itself
  });
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  const port = (up.address() as { port: number }).port;
  const relay = await startRelay({ key: 'r-unit-3', bindHost: '127.0.0.1', upstream: { baseUrl: `http://127.0.0.1:${port}`, key: KEY, auth: 'x-api-key', keyEnv: 'X' }, stateDir: mkdtempSync(join(tmpdir(), 'relay-')) });
  try {
    await new Promise<void>((resolve) => {
      const req = http.request(new URL('/v1/messages', relay.url), { method: 'POST', headers: { 'x-api-key': relay.token } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.end('{}');
    });
    for (let i = 0; i < 50 && !upstreamClosed; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(upstreamClosed, 'upstream connection closed after the client left');
  } finally {
    await relay.close();
    up.close();
  }
});

test('relay: body overrides are merged into JSON POSTs; an unreachable upstream is a 502 naming no secret', async () => {
  const fake = await startFakeOpenAI({ script: { commands: [] } });
  fakes.push(fake);
  const relay = await startRelay({ key: 'r-unit-4', bindHost: '127.0.0.1', upstream: { baseUrl: `${fake.url}/v1`, key: KEY, auth: 'bearer', keyEnv: 'X' }, stateDir: mkdtempSync(join(tmpdir(), 'relay-')), bodyOverrides: { temperature: 0 } });
  try {
    await post(relay.url, '/chat/completions', { authorization: `Bearer ${relay.token}` }, { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 0.7 });
    assert.equal((fake.requests.at(-1)!.body as { temperature: number }).temperature, 0);
  } finally {
    await relay.close();
  }
  const dead = await startRelay({ key: 'r-unit-5', bindHost: '127.0.0.1', upstream: { baseUrl: 'http://127.0.0.1:9', key: KEY, auth: 'bearer', keyEnv: 'X' }, stateDir: mkdtempSync(join(tmpdir(), 'relay-')) });
  try {
    const r = await post(dead.url, '/responses', { authorization: `Bearer ${dead.token}` }, {});
    assert.equal(r.status, 502);
    assert.match(r.text, /upstream unreachable/);
    assert.ok(!r.text.includes(KEY));
    assert.equal(dead.stats.upstreamErrors, 1);
  } finally {
    await dead.close();
  }
});

test('relay: a restarted relay (activity retry) comes back on the same port with the same token; joins share one server', async () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'relay-'));
  const upstream = { baseUrl: 'http://127.0.0.1:9', key: KEY, auth: 'bearer' as const, keyEnv: 'X' };
  const a = await startRelay({ key: 'r-unit-6', bindHost: '127.0.0.1', upstream, stateDir });
  const b = await startRelay({ key: 'r-unit-6', bindHost: '127.0.0.1', upstream, stateDir });
  assert.equal(a, b, 'the same rollout in the same process joins the running relay');
  await a.close();
  await b.close();
  const c = await startRelay({ key: 'r-unit-6', bindHost: '127.0.0.1', upstream, stateDir });
  try {
    assert.equal(c.port, a.port);
    assert.equal(c.token, a.token);
    const saved = JSON.parse(readFileSync(join(stateDir, 'relay.json'), 'utf8'));
    assert.equal(saved.port, a.port);
    assert.ok(!JSON.stringify(saved).includes(KEY), 'relay.json holds no API key');
  } finally {
    await c.close();
  }
});
