import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { P21 } from '../../src/primitives/p21-log-content-check';
import { P13 } from '../../src/primitives/p13-auth-login';
import { rolesPort } from '../../src/primitives/auth/provider';
import { RolesSchema } from '../../src/model/roles';
import { findPrimitive } from '../../src/primitives/registry';
import type { PrimitiveEnv } from '../../src/primitives/types';
import { containerEnv, startContainer, type TestContainer } from '../fixtures/primitives/container-env';
import { makeCtx, runPrimitive } from '../fixtures/primitives/harness';

let app: TestContainer;
let worker: TestContainer;
let env: PrimitiveEnv;
let server: http.Server;

before(async () => {
  [app, worker] = await Promise.all([startContainer(), startContainer()]);
  const lines = Array.from({ length: 300 }, (_, i) => `${i} INFO GET /page/${i} 200`);
  lines[10] = '10 ERROR Deprecated call in UsersController';
  lines[295] = '295 INFO Completed 201 Created in 12ms';
  await app.sh(`mkdir -p /app/log /app/bin && printf '%s\\n' ${lines.map((l) => `'${l}'`).join(' ')} > /app/log/production.log`);
  await app.sh(`printf '#!/bin/bash\\necho "seeding $1" >&2\\necho "noise line"\\necho "key-$1"\\n' > /app/bin/make-key && chmod +x /app/bin/make-key`);
  await worker.sh(`mkdir -p /srv && echo 'job done: 3 emails' > /srv/worker.log`);
  // the app under test for the seed role: accepts X-Api-Key key-admin
  server = http.createServer((req, res) => {
    const ok = req.headers['x-api-key'] === 'key-admin';
    res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ ok }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  env = containerEnv(app, { services: { worker }, baseUrl });
  const roles = RolesSchema.parse({
    admin: { username: 'admin', seed: { command: 'bin/make-key {{username}}' }, send: { headers: { 'X-Api-Key': '{{token}}' } } },
    broken: { seed: { command: 'exit 7' }, send: { headers: { 'X-Api-Key': '{{token}}' } } },
    jsonseed: { seed: { command: `echo '{"data": {"key": "key-admin"}}'`, token: { from: 'stdout_json', path: '$.data.key' }, service: 'worker' }, send: { headers: { 'X-Api-Key': '{{token}}' } } },
  });
  env.roles = rolesPort(roles, { baseUrl, appService: 'app', exec: (s, c, o) => env.exec(s, c, o), cacheKey: 'logs-seed-test' });
});
after(async () => {
  await Promise.all([app?.remove(), worker?.remove()]);
  await new Promise<void>((r) => server?.close(() => r()));
});

const run = (inputs: Record<string, unknown>) => runPrimitive(P21, inputs, makeCtx(env));

describe('P21 log_content_check in a container', () => {
  test('contains / regex / case-insensitive within the tail', async () => {
    assert.equal((await run({ log_path: 'log/production.log', pattern: 'Completed 201' })).passed, true);
    assert.equal((await run({ log_path: 'log/production.log', pattern: 'completed \\d{3}', match_type: 'regex', case_sensitive: false })).passed, true);
    assert.equal((await run({ log_path: 'log/production.log', pattern: 'completed 201' })).passed, false, 'case-sensitive by default');
  });
  test('tail_lines bounds the search; 0 reads the whole file; min_matches', async () => {
    assert.equal((await run({ log_path: 'log/production.log', pattern: 'Deprecated' })).passed, false, 'line 10 is outside the last 200');
    assert.equal((await run({ log_path: 'log/production.log', pattern: 'Deprecated', tail_lines: 0 })).passed, true);
    assert.equal((await run({ log_path: 'log/production.log', pattern: ' 200', min_matches: 150 })).passed, true);
    assert.equal((await run({ log_path: 'log/production.log', pattern: ' 200', tail_lines: 10, min_matches: 11 })).passed, false);
  });
  test('expect_match false; a missing file fails either way; another service; absolute paths', async () => {
    assert.equal((await run({ log_path: 'log/production.log', pattern: 'FATAL', expect_match: false })).passed, true);
    assert.equal((await run({ log_path: 'log/production.log', pattern: 'ERROR', expect_match: false, tail_lines: 0 })).passed, false);
    const missing = await run({ log_path: 'log/nope.log', pattern: 'x', expect_match: false });
    assert.equal(missing.passed, false);
    assert.match(missing.message, /app:\/app\/log\/nope\.log does not exist/);
    assert.equal((await run({ log_path: '/srv/worker.log', pattern: 'job done', service: 'worker' })).passed, true);
    assert.match((await run({ log_path: 'x.log', pattern: 'x', service: 'ghost' })).message, /unknown service "ghost"/);
  });
});

describe('P13 seed roles: an explicit command in a real container', () => {
  test('the seed runs in the app container (workspace as cwd); the last stdout line is the token; P04 sends it', async () => {
    const ctx = makeCtx(env, {});
    const r = await runPrimitive(P13, { role: 'admin' }, ctx);
    assert.equal(r.passed, true, r.message);
    await runPrimitive(findPrimitive('P04')!, { path: '/' }, ctx);
    assert.equal(ctx.state.last?.status, 200);
  });
  test('stdout_json in another service; a failing seed names the role, the exit code and the service', async () => {
    const ctx = makeCtx(env, {});
    assert.equal((await runPrimitive(P13, { role: 'jsonseed' }, ctx)).passed, true);
    const bad = await runPrimitive(P13, { role: 'broken' }, ctx);
    assert.equal(bad.passed, false);
    assert.match(bad.message, /seed for role broken: command exited 7 in app/);
  });
});
