/**
 * The rate governor's host side without Temporal: which limits apply (registry, SAASBENCH_RATE_LIMITS,
 * none by default), the relay gate's wait accounting (overlapping waits of one rollout count once),
 * its release (tokens from the reported usage; a 429's Retry-After as a pause) through the real
 * relay, and the 429 reaching the agent unchanged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { governorLimits } from '../../src/governor/limits';
import { governorGate, pauseOf } from '../../src/governor/gate';
import type { Admission } from '../../src/governor/client';
import { loadRegistry } from '../../src/agents/models';
import { startRelay } from '../../src/agents/llm-relay';
import type { ReleaseRequest } from '../../src/model/governor';

test('limits: none by default (no gate, no Temporal); the env overrides or switches off the registry', () => {
  for (const [name, p] of Object.entries(loadRegistry().providers)) assert.equal(governorLimits(name, p.limits, {}), null, name);
  assert.deepEqual(governorLimits('anthropic', { concurrent: 2 }, {}), { concurrent: 2 });
  assert.equal(governorLimits('anthropic', { concurrent: 2 }, { SAASBENCH_RATE_LIMITS: 'off' }), null);
  assert.deepEqual(governorLimits('anthropic', { concurrent: 2 }, { SAASBENCH_RATE_LIMITS: '{"anthropic":{"rpm":5}}' }), { rpm: 5 });
  assert.deepEqual(governorLimits('openai', { concurrent: 2 }, { SAASBENCH_RATE_LIMITS: '{"anthropic":{"rpm":5}}' }), { concurrent: 2 });
  assert.equal(governorLimits('anthropic', { concurrent: 2 }, { SAASBENCH_RATE_LIMITS: '{"anthropic":null}' }), null);
  assert.equal(governorLimits('anthropic', { leaseTtlSeconds: 9 }, {}), null, 'a TTL alone limits nothing');
  assert.throws(() => governorLimits('x', undefined, { SAASBENCH_RATE_LIMITS: '{"x":{"rpm":0}}' }), /SAASBENCH_RATE_LIMITS: x\.rpm/);
  assert.throws(() => governorLimits('x', undefined, { SAASBENCH_RATE_LIMITS: '{"x":{"rps":3}}' }), /SAASBENCH_RATE_LIMITS: x\.rps: unknown key/);
  assert.throws(() => governorLimits('x', undefined, { SAASBENCH_RATE_LIMITS: 'concurrent=2' }), /SAASBENCH_RATE_LIMITS: not JSON/);
});

test('pauseOf: Retry-After in seconds or as a date on 429/529; a default pause without it; nothing otherwise', () => {
  assert.deepEqual(pauseOf(429, '3'), { pauseMs: 3000 });
  assert.deepEqual(pauseOf(529, undefined), { pauseMs: 5000 });
  const now = Date.parse('2026-12-01T10:00:00Z');
  assert.deepEqual(pauseOf(429, 'Tue, 01 Dec 2026 10:00:12 GMT', now), { pauseMs: 12_000 });
  assert.deepEqual(pauseOf(200, '3'), {});
  assert.deepEqual(pauseOf(500, '3'), {});
});

/** A governor stand-in: admits when the test says so, records releases. */
function manualGovernor() {
  const queue: ((a: Admission) => void)[] = [];
  const released: Omit<ReleaseRequest, 'leaseId'>[] = [];
  return {
    released,
    asked: () => queue.length,
    admitNext() {
      queue.shift()!({ leaseId: 'l', release: (r) => released.push(r) });
    },
    admit: () => new Promise<Admission>((r) => queue.push(r)),
  };
}

function upstream(status: number, headers: Record<string, string>, body: string): Promise<{ url: string; close(): void }> {
  const s = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status, headers).end(body));
  });
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r({ url: `http://127.0.0.1:${(s.address() as { port: number }).port}`, close: () => s.close() })));
}

function post(url: string, token: string): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  const body = JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': token } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('gate in the relay: requests wait for admission (overlaps counted once), usage and 429 pauses go back in the release', async () => {
  const ok = await upstream(200, { 'content-type': 'application/json' }, JSON.stringify({ id: 'm', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', usage: { input_tokens: 40, output_tokens: 2 } }));
  const limited = await upstream(429, { 'content-type': 'application/json', 'retry-after': '7' }, JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }));
  const gov = manualGovernor();
  const gate = governorGate(gov, 'r1');
  const mk = (url: string, key: string) => startRelay({ key, bindHost: '127.0.0.1', upstream: { baseUrl: url, key: 'sk-k', auth: 'x-api-key', keyEnv: 'X', protocol: 'anthropic' }, stateDir: mkdtempSync(join(tmpdir(), 'gate-')), gate });
  const relay = await mk(ok.url, 'gate-unit-1');
  const relay429 = await mk(limited.url, 'gate-unit-2');
  try {
    const p1 = post(relay.url, relay.token);
    const p2 = post(relay.url, relay.token);
    while (gov.asked() < 2) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 400));
    assert.ok(gate.unbilledMs() >= 400 && gate.unbilledMs() < 800, `one overlapping wait, not two: ${gate.unbilledMs()}`);
    gov.admitNext();
    gov.admitNext();
    assert.deepEqual([(await p1).status, (await p2).status], [200, 200]);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(relay.stats.governor, { requests: 2, waited: 2, waitMs: relay.stats.governor!.waitMs });
    assert.ok(relay.stats.governor!.waitMs >= 400 && relay.stats.governor!.waitMs < 800);
    // each reported token is attributed once across the two concurrent releases
    assert.equal(gov.released.reduce((a, r) => a + (r.tokens ?? 0), 0), 84);
    const p3 = post(relay429.url, relay429.token);
    while (gov.asked() < 1) await new Promise((r) => setTimeout(r, 20));
    gov.admitNext();
    const r3 = await p3;
    assert.equal(r3.status, 429, 'the agent gets the 429 in its protocol (its retry then waits in the governor)');
    assert.equal(r3.headers['retry-after'], '7');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(gov.released.at(-1), { tokens: 0, pauseMs: 7000 });
  } finally {
    await relay.close();
    await relay429.close();
    ok.close();
    limited.close();
  }
});
