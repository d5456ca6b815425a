// The relay's per-request log (agent/gateway-log.jsonl): one line per model request with its status,
// protocol, time and metered tokens — passed through, translated, and an upstream error — and never a
// body, header, key or token. Extras (retries, governor waits) attached by other relay code are summed.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../src/agents/llm-relay';
import { logGatewayRequest, noteGatewayRequest } from '../../src/agents/gateway-log';
import { GATEWAY_LOG_FILE, GatewayLogEntrySchema } from '../../src/model/gateway-log';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import type { FakeServer } from '../fakes/fake-common';

const KEY = 'sk-real-key-gwlog-unit-0123456789';
const fakes: FakeServer[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

function post(url: string, path: string, headers: Record<string, string>, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = http.request(new URL(path, url), { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(data.length), ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** The log's lines once `n` are there (a line is written when the server side of the response closes). */
async function lines(file: string, n: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const l = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    if (l.length >= n) return l;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`${file}: fewer than ${n} lines`);
}

test('gateway log: one line per model request (passed through, translated, upstream 529), numbers only', async () => {
  const fake = await startFakeAnthropic({ script: { commands: ['echo SECRET_PROMPT_WORD'] }, requireKey: KEY, faults: { 2: { kind: 'overloaded' } } });
  fakes.push(fake);
  const dir = mkdtempSync(join(tmpdir(), 'relay-gwlog-'));
  const relay = await startRelay({ key: 'r-gwlog-1', bindHost: '127.0.0.1', upstream: { baseUrl: fake.url, key: KEY, keyEnv: 'X', auth: 'x-api-key', protocol: 'anthropic' }, stateDir: dir, model: 'snap-1' });
  try {
    const h = { 'x-api-key': relay.token, 'anthropic-version': '2023-06-01' };
    const body = { model: 'snap-1', stream: true, max_tokens: 10, messages: [{ role: 'user', content: 'SECRET_PROMPT_WORD' }] };
    assert.equal(await post(relay.url, '/v1/messages', { 'x-api-key': 'sk-wrong' }, body), 401, 'a rejected request is not a model call: no line');
    assert.equal(await post(relay.url, '/v1/messages?beta=true', h, body), 200);
    assert.equal(await post(relay.url, '/v1/messages', h, body), 529);
    const chat = { model: 'snap-1', messages: [{ role: 'user', content: 'SECRET_PROMPT_WORD' }] };
    assert.equal(await post(relay.url, '/v1/chat/completions', { authorization: `Bearer ${relay.token}` }, chat), 200);
    const file = join(dir, GATEWAY_LOG_FILE);
    const raw = await lines(file, 3);
    const entries = raw.map((l) => GatewayLogEntrySchema.strict().parse(JSON.parse(l)));
    assert.deepEqual(entries.map((e) => [e.status, e.protocol]), [[200, 'anthropic'], [529, 'anthropic'], [200, 'chat']]);
    assert.equal(entries[1].inTok + entries[1].outTok, 0, 'an overloaded answer carries no usage');
    assert.equal(entries.reduce((n, e) => n + e.inTok, 0), relay.stats.usage.input, 'per-request tokens add up to the metered total');
    assert.equal(entries.reduce((n, e) => n + e.outTok, 0), relay.stats.usage.output);
    assert.ok(entries[0].inTok > 0 && entries[2].outTok > 0);
    for (const e of entries) assert.ok(Number.isFinite(Date.parse(e.t)) && e.ms >= 0);
    const text = readFileSync(file, 'utf8');
    for (const secret of [KEY, relay.token, 'SECRET_PROMPT_WORD', 'x-api-key', '/v1/']) assert.ok(!text.includes(secret), `the log holds no ${secret}`);
  } finally {
    await relay.close();
  }
});

test('gateway log: retries / governor waits / cost noted on a response are summed into its line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-gwlog-'));
  const usage = { input: 0, output: 0 };
  const server = http.createServer((_req, res) => {
    logGatewayRequest(dir, 'responses', res, usage);
    noteGatewayRequest(res, { waitMs: 40, retries: 1 });
    noteGatewayRequest(res, { waitMs: 10, retries: 1, costUsd: 0.25 });
    usage.input += 7;
    usage.output += 3;
    res.writeHead(503).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as { port: number }).port;
    assert.equal(await post(`http://127.0.0.1:${port}`, '/v1/responses', {}, {}), 503);
    const [line] = await lines(join(dir, GATEWAY_LOG_FILE), 1);
    const e = GatewayLogEntrySchema.parse(JSON.parse(line));
    assert.deepEqual({ status: e.status, protocol: e.protocol, inTok: e.inTok, outTok: e.outTok, retries: e.retries, waitMs: e.waitMs, costUsd: e.costUsd }, { status: 503, protocol: 'responses', inTok: 7, outTok: 3, retries: 2, waitMs: 50, costUsd: 0.25 });
  } finally {
    await new Promise((r) => server.close(r));
  }
});
