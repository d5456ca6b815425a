import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { P04 } from '../../src/primitives/p04-http-request';
import { P06 } from '../../src/primitives/p06-json-schema-match';
import { P07 } from '../../src/primitives/p07-json-value-assert';
import { P12 } from '../../src/primitives/p12-docker-exec';
import { runNode } from '../../src/primitives/run-chain';
import { checkDag } from '../../src/tasks/validate-dag';
import { checkPlaceholders } from '../../src/tasks/placeholders';
import { httpEnv, makeCtx, runPrimitive, schemaIssues } from '../fixtures/primitives/harness';

/** Canonical P07/P06 inputs added for the published dialects, against real responses of a local server. */

let server: http.Server;
let base: string;
before(async () => {
  server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    if (p === '/json') {
      res.writeHead(201, { 'Content-Type': 'application/json; charset=utf-8', ETag: '"v1"', 'X-Version-Id': '7.1' });
      return res.end(JSON.stringify({ data: { id: 'a1', items: [{ id: 1, name: 'Dev Team', on: true }, { id: 2, name: 'Ops', on: false }] } }));
    }
    if (p === '/list') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify([{ name: 'b', n: 2 }, { name: 'a', n: 5 }]));
    }
    if (p === '/csv') {
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      return res.end('uuid,email\n1,a@x\n');
    }
    if (p === '/empty') {
      res.writeHead(204);
      return res.end();
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

async function after04(path: string) {
  const ctx = makeCtx(httpEnv(base));
  const r = await runPrimitive(P04, { path }, ctx);
  assert.equal(r.passed, true, r.message);
  return ctx;
}
const p07 = async (ctx: ReturnType<typeof makeCtx>, inputs: Record<string, unknown>) => runPrimitive(P07, inputs, ctx);

describe('P07 sources: status, headers, text, first_line, media_type, envelope', () => {
  test('each source reads its part of the last response', async () => {
    const ctx = await after04('/json');
    const ok = await p07(ctx, {
      assertions: [
        { source: 'status', operator: 'in', expected: [200, 201] },
        { source: 'headers', path: "$['etag']", operator: 'equals', expected: '"v1"' },
        { source: 'headers', path: "$['x-version-id']", operator: 'exists' },
        { source: 'media_type', operator: 'equals', expected: 'application/json' },
        { source: 'envelope', operator: 'equals', expected: 'data' },
        { source: 'text', operator: 'contains', expected: '"Dev Team"' },
      ],
    });
    assert.equal(ok.passed, true, ok.message);
    const bad = await p07(ctx, { assertions: [{ source: 'status', operator: 'equals', expected: 200 }, { source: 'headers', path: "$['location']", operator: 'exists' }] });
    assert.equal(bad.passed, false);
    assert.match(bad.message, /0\/2/);
  });
  test('first_line of a text body; envelope root[] of a list; no response fails naming the source', async () => {
    const csv = await after04('/csv');
    assert.equal((await p07(csv, { assertions: [{ source: 'first_line', operator: 'equals', expected: 'uuid,email' }] })).passed, true);
    const list = await after04('/list');
    assert.equal((await p07(list, { assertions: [{ source: 'envelope', operator: 'equals', expected: 'root[]' }] })).passed, true);
    const none = await p07(makeCtx(httpEnv(base)), { assertions: [{ source: 'status', operator: 'equals', expected: 200 }] });
    assert.equal(none.passed, false);
    assert.match(none.message, /no HTTP response in this chain for source "status"/);
  });
  test('schema: body only with source body; unknown source rejected', () => {
    assert.ok(schemaIssues(P07, { assertions: [{ source: 'status', body: {}, operator: 'exists' }] }).some((i) => i.path.includes('body')));
    assert.ok(schemaIssues(P07, { assertions: [{ source: 'cookies', operator: 'exists' }] }).length > 0);
  });
});

describe('P07 assertion modifiers', () => {
  const body = { a: { b: 1, s: 'x' }, list: [{ k: 3, name: 'n1' }, { k: 4, name: 'n2' }], flag: null, other: { total: 2 } };
  const run = (a: Record<string, unknown>, extra: Record<string, unknown> = {}) => runPrimitive(P07, { assertions: [a], body, ...extra }, makeCtx(httpEnv(base)));
  test('optional: an absent or null value passes, a present wrong value fails', async () => {
    assert.equal((await run({ path: '$.gone', operator: 'equals', expected: 1, optional: true })).passed, true);
    assert.equal((await run({ path: '$.flag', operator: 'equals', expected: 1, optional: true })).passed, true);
    assert.equal((await run({ path: '$.a.b', operator: 'equals', expected: 2, optional: true })).passed, false);
  });
  test('or_paths: the first alternative that matches is used', async () => {
    const r = await run({ path: '$.a.missing', or_paths: ['$.nope', '$.a.s'], operator: 'equals', expected: 'x' });
    assert.equal(r.passed, true, r.message);
    assert.equal((r.data?.assertions as { path: string }[])[0].path, '$.a.s');
    assert.equal((await run({ path: '$.a.missing', or_paths: ['$.nope'], operator: 'exists' })).passed, false);
  });
  test('expected_path compares with another value; expected_body reads it from another document', async () => {
    assert.equal((await run({ path: '$.list.length', operator: 'equals', expected_path: '$.other.total' })).passed, true);
    assert.equal((await run({ path: '$.a.b', operator: 'equals', expected_path: '$.x', expected_body: { x: 1 } })).passed, true);
    const miss = await run({ path: '$.a.b', operator: 'equals', expected_path: '$.none' });
    assert.equal(miss.passed, false);
    assert.match(miss.message, /expected_path \$\.none matched nothing/);
  });
  test('matches: list / each / any', async () => {
    assert.equal((await run({ path: '$.list[*].name', matches: 'list', operator: 'contains_all', expected: ['n1', 'n2'] })).passed, true);
    assert.equal((await run({ path: '$.list[*].name', matches: 'list', operator: 'not_contains', expected: 'n3' })).passed, true);
    assert.equal((await run({ path: '$.list[*].k', matches: 'each', operator: 'gt', expected: 2 })).passed, true);
    const each = await run({ path: '$.list[*].k', matches: 'each', operator: 'gt', expected: 3 });
    assert.equal(each.passed, false);
    assert.match(each.message, /match 0 \(3\) fails/);
    assert.equal((await run({ path: '$.list[*].k', matches: 'any', operator: 'equals', expected: 4 })).passed, true);
    assert.equal((await run({ path: '$.list[*].k', matches: 'any', operator: 'equals', expected: 5 })).passed, false);
    assert.equal((await run({ path: '$.none[*]', matches: 'list', operator: 'not_contains', expected: 1 })).passed, true, 'an empty list does not contain');
  });
  test('as_number reads numeric strings; ignore_case for text operators', async () => {
    const b = { n: '15', s: 'Usage: x' };
    const ctx = makeCtx(httpEnv(base));
    assert.equal((await runPrimitive(P07, { body: b, assertions: [{ path: '$.n', as_number: true, operator: 'gte', expected: 15 }] }, ctx)).passed, true);
    assert.equal((await runPrimitive(P07, { body: b, assertions: [{ path: '$.n', operator: 'gte', expected: 15 }] }, ctx)).passed, false, 'no coercion unless asked');
    assert.equal((await runPrimitive(P07, { body: b, assertions: [{ path: '$.s', operator: 'regex', expected: '^usage', ignore_case: true }] }, ctx)).passed, true);
    assert.ok(schemaIssues(P07, { assertions: [{ path: '$', operator: 'gt', expected: 1, ignore_case: true }] }).length > 0);
  });
  test('stringify reads a list or boolean as its JSON text', async () => {
    const b = { errs: ['This part is locked'], n: 1 };
    const ctx = makeCtx(httpEnv(base));
    assert.equal((await runPrimitive(P07, { body: b, assertions: [{ path: '$.errs', stringify: true, operator: 'regex', expected: 'locked' }] }, ctx)).passed, true);
    assert.equal((await runPrimitive(P07, { body: b, assertions: [{ path: '$.errs', operator: 'regex', expected: 'locked' }] }, ctx)).passed, false, 'a list is not a string unless stringified');
    assert.ok(schemaIssues(P07, { assertions: [{ path: '$', stringify: true, as_number: true, operator: 'exists' }] }).length > 0);
  });
  test('per-assertion body: the path reads a saved document', async () => {
    assert.equal((await run({ path: '$.id', body: { id: 9 }, operator: 'equals', expected: 9 })).passed, true);
  });
});

describe('P07 new operators', () => {
  const body = { s: 'Hello', arr: [3, 1, 2], objs: [{ n: 'a' }, { n: 'c' }, { n: 'b' }], o: { x: 1, y: 2 }, e: '', num: '12.50', js: '{"k":1}', f: 1.5 };
  const cases: [Record<string, unknown>, boolean][] = [
    [{ path: '$.s', operator: 'starts_with', expected: 'He' }, true],
    [{ path: '$.s', operator: 'ends_with', expected: 'lo' }, true],
    [{ path: '$.s', operator: 'not_regex', expected: '^h' }, true],
    [{ path: '$.arr', operator: 'min_length', expected: 3 }, true],
    [{ path: '$.arr', operator: 'max_length', expected: 2 }, false],
    [{ path: '$.e', operator: 'empty' }, true],
    [{ path: '$.e', operator: 'not_empty' }, false],
    [{ path: '$.o', operator: 'not_empty' }, true],
    [{ path: '$.f', operator: 'is_type', expected: 'integer' }, false],
    [{ path: '$.arr[0]', operator: 'is_type', expected: 'integer' }, true],
    [{ path: '$.o', operator: 'is_type', expected: ['array', 'object'] }, true],
    [{ path: '$.s', operator: 'not_in', expected: ['a', 'b'] }, true],
    [{ path: '$.num', operator: 'numeric_string', expected: 12.5 }, true],
    [{ path: '$.s', operator: 'numeric_string' }, false],
    [{ path: '$.f', operator: 'numeric_string' }, false],
    [{ path: '$.js', operator: 'is_json' }, true],
    [{ path: '$.s', operator: 'is_json' }, false],
    [{ path: '$.arr', operator: 'sorted', expected: { order: 'asc' } }, false],
    [{ path: '$.objs', operator: 'sorted', expected: { by: 'n', order: 'asc' } }, false],
    [{ path: '$.objs[0:2]', matches: 'list', operator: 'sorted', expected: { by: 'n', order: 'asc' } }, true],
    [{ path: '$.o', operator: 'has_keys', expected: ['x'] }, true],
    [{ path: '$.o', operator: 'has_exactly_keys', expected: ['x'] }, false],
    [{ path: '$.o', operator: 'has_exactly_keys', expected: ['y', 'x'] }, true],
    [{ path: '$.objs', operator: 'has_element', where: [{ path: '$.n', operator: 'equals', expected: 'c' }] }, true],
    [{ path: '$.objs', operator: 'no_element', where: [{ path: '$.n', operator: 'equals', expected: 'c' }] }, false],
    [{ path: '$.gone', operator: 'absent' }, true],
    [{ path: '$.e', operator: 'absent' }, false],
    [{ path: '$.s', operator: 'contains_any', expected: ['xx', 'ell'] }, true],
    [{ path: '$.arr', operator: 'contains_any', expected: [9, 8] }, false],
    [{ path: '$.o', operator: 'has_any_key', expected: ['z', 'y'] }, true],
    [{ path: '$.o', operator: 'has_any_key', expected: ['z'] }, false],
    [{ path: '$.o', operator: 'max_length', expected: 2 }, true],
    [{ path: '$.o', operator: 'length', expected: 3 }, false],
    [{ path: '$.o.*~', matches: 'each', operator: 'regex', expected: '^[xy]$' }, true],
  ];
  for (const [a, want] of cases) {
    test(`${a.operator} ${JSON.stringify(a.expected ?? a.where ?? '')} on ${a.path} → ${want}`, async () => {
      const r = await runPrimitive(P07, { body, assertions: [a] }, makeCtx(httpEnv(base)));
      assert.equal(r.passed, want, r.message);
    });
  }
  test('schema checks each operator\'s expected', () => {
    for (const bad of [
      { operator: 'sorted', expected: { order: 'up' } },
      { operator: 'is_type', expected: 'list' },
      { operator: 'has_element' },
      { operator: 'exists', where: [{ operator: 'exists' }] },
      { operator: 'has_keys', expected: 'x' },
      { operator: 'min_length', expected: -1 },
      { operator: 'empty', expected: 1 },
      { operator: 'equals', expected: 1, expected_path: '$.x' },
    ]) assert.ok(schemaIssues(P07, { assertions: [{ path: '$', ...bad }] }).length > 0, JSON.stringify(bad));
  });
});

describe('P07 seconds_from_now, size, elapsed_ms, or_status, earlier responses', () => {
  test('seconds_from_now reads ISO text and epoch seconds/milliseconds', async () => {
    const now = Date.now();
    const body = { iso: new Date(now + 3600_000).toISOString(), s: Math.floor(now / 1000) + 3600, ms: now + 3600_000, past: new Date(now - 60_000).toISOString(), word: 'soon' };
    const one = async (path: string, want: boolean) => assert.equal((await runPrimitive(P07, { body, assertions: [{ path, operator: 'seconds_from_now', expected: [3500, 3700] }] }, makeCtx(httpEnv(base)))).passed, want, path);
    await one('$.iso', true);
    await one('$.s', true);
    await one('$.ms', true);
    await one('$.past', false);
    await one('$.word', false);
    assert.ok(schemaIssues(P07, { assertions: [{ operator: 'seconds_from_now', expected: [10, 5] }] }).length > 0);
  });
  test('size and elapsed_ms of the last response', async () => {
    const ctx = await after04('/csv');
    assert.equal((await p07(ctx, { assertions: [{ source: 'size', operator: 'equals', expected: Buffer.byteLength('uuid,email\n1,a@x\n') }, { source: 'elapsed_ms', operator: 'lte', expected: 5000 }] })).passed, true);
    assert.equal((await p07(ctx, { assertions: [{ source: 'size', operator: 'gte', expected: 100000 }] })).passed, false);
  });
  test('or_status: a failing check passes on one of those statuses', async () => {
    const ctx = await after04('/json');
    assert.equal((await p07(ctx, { assertions: [{ source: 'headers', path: "$['location']", operator: 'contains', expected: '/login', or_status: [200, 201] }] })).passed, true);
    assert.equal((await p07(ctx, { assertions: [{ source: 'headers', path: "$['location']", operator: 'contains', expected: '/login', or_status: [200] }] })).passed, false);
  });
  test('response / expected_response read earlier responses of the chain (run-chain keeps the history)', async () => {
    const node = {
      id: 'TWICE', prereqs: [], scoring: { method: 'binary', maxScore: 1, category: 'API' },
      primitive_chain: [
        { type: 'P04', inputs: { path: '/json' } },
        { type: 'P04', inputs: { path: '/list' } },
        { type: 'P07', inputs: { assertions: [
          { response: 1, path: '$.data.id', operator: 'equals', expected: 'a1' },
          { source: 'status', operator: 'not_equals', expected_path: '$', expected_response: 1 },
          { path: '$[0].name', operator: 'equals', expected: 'b' },
        ] } },
        { type: 'P07', inputs: { assertions: [{ response: 2, path: '$', operator: 'exists' }] } },
      ],
    };
    const c = checkDag({ nodes: [node] }, 'dag.json');
    assert.deepEqual(c.issues, []);
    const run = await runNode(c.dag.nodes[0], httpEnv(base), { judgeEnabled: false, vars: {} });
    assert.equal(run.steps[2].passed, true, run.steps[2].message);
    assert.equal(run.steps[3].passed, false);
    assert.match(run.steps[3].message, /no response 2 before the last/);
  });
});

describe('P07 jwt', () => {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const token = (alg: string, claims: Record<string, unknown>, secret = 's3cret') => {
    const h = b64({ alg, typ: 'JWT' });
    const p = b64(claims);
    const sig = alg === 'none' ? '' : createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url');
    return `${h}.${p}.${sig}`;
  };
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: '0b6c3b8e-4f6a-4a43-9a0e-2f7c1d9b8a11', exp: now + 3 * 3600 - 5 };
  const expected = { algorithm: 'HS256', claims: { sub: 'uuid', exp: { future_within_seconds: 10800 } } };
  const check = async (t: string, e: Record<string, unknown> = expected) => runPrimitive(P07, { body: { t }, assertions: [{ path: '$.t', operator: 'jwt', expected: e }] }, makeCtx(httpEnv(base)));
  test('algorithm, signature segment, claims; the HMAC verifies when the secret is given', async () => {
    assert.equal((await check(token('HS256', claims))).passed, true);
    assert.equal((await check(token('HS256', claims), { ...expected, secret: 's3cret' })).passed, true);
    const wrongKey = await check(token('HS256', claims, 'other'), { ...expected, secret: 's3cret' });
    assert.equal(wrongKey.passed, false);
    assert.match(wrongKey.message, /does not verify/);
  });
  test('wrong alg, unsigned, bad claims, not a token', async () => {
    assert.match((await check(token('HS384', claims))).message, /alg "HS384" ≠ HS256/);
    assert.match((await check(token('none', claims), { claims: {} })).message, /unsigned/);
    assert.match((await check(token('HS256', { ...claims, sub: 'admin' }))).message, /not a UUID/);
    assert.match((await check(token('HS256', { ...claims, exp: now + 5 * 3600 }))).message, /expected within/);
    assert.match((await check(token('HS256', { ...claims, exp: now - 10 }))).message, /expected within/);
    assert.match((await check('abc.def')).message, /not a compact JWS/);
  });
  test('schema rejects unknown claim checks and a secret without an HMAC algorithm', () => {
    assert.ok(schemaIssues(P07, { assertions: [{ operator: 'jwt', expected: { claims: { exp: 'soon' } } }] }).length > 0);
    assert.ok(schemaIssues(P07, { assertions: [{ operator: 'jwt', expected: { algorithm: 'RS256', secret: 'x' } }] }).length > 0);
  });
});

describe('P07 step options: any_of, captures, empty and non-JSON bodies, parse_json', () => {
  test('any_of: at least one must pass, besides all assertions', async () => {
    const ctx = await after04('/json');
    assert.equal((await p07(ctx, { assertions: [], any_of: [{ path: '$.nope', operator: 'exists' }, { source: 'status', operator: 'equals', expected: 201 }] })).passed, true);
    const r = await p07(ctx, { assertions: [{ path: '$.data.id', operator: 'exists' }], any_of: [{ path: '$.nope', operator: 'exists' }] });
    assert.equal(r.passed, false);
    assert.match(r.message, /any_of 0\/1 passed/);
  });
  test('captures are set (and exported) only when the step passes; has_element captures from the found element', async () => {
    const ctx = await after04('/json');
    const ok = await p07(ctx, { assertions: [{ path: '$.data.id', operator: 'exists', capture_as: 'aid' }, { path: '$.data.items', operator: 'has_element', where: [{ path: '$.name', operator: 'contains', expected: 'Dev' }], capture_as: 'team', capture_path: '$.id' }] });
    assert.equal(ok.passed, true, ok.message);
    assert.deepEqual(ctx.state.exports, { aid: 'a1', team: 1 });
    const ctx2 = await after04('/json');
    const bad = await p07(ctx2, { assertions: [{ path: '$.data.id', operator: 'exists', capture_as: 'aid' }, { path: '$.data.nope', operator: 'exists' }] });
    assert.equal(bad.passed, false);
    assert.deepEqual(ctx2.state.exports, {});
  });
  test('produces(): captures of assertions and any_of are visible to the load-time placeholder check', () => {
    const step = (type: string, inputs: Record<string, unknown>) => ({ type, inputs });
    const dag = {
      nodes: [
        { id: 'A', prereqs: [], scoring: { method: 'binary', maxScore: 1, category: 'API' }, primitive_chain: [step('P04', { path: '/x' }), step('P07', { assertions: [{ path: '$.id', operator: 'exists', capture_as: 'xid' }], any_of: [{ path: '$.k', operator: 'exists', capture_as: 'kid' }] }), step('P04', { path: '/x/{{xid}}/{{kid}}' })] },
        { id: 'B', prereqs: ['A'], scoring: { method: 'binary', maxScore: 1, category: 'API' }, primitive_chain: [step('P04', { path: '/y/{{xid}}/{{A.kid}}' })] },
        { id: 'C', prereqs: [], scoring: { method: 'binary', maxScore: 1, category: 'API' }, primitive_chain: [step('P04', { path: '/z/{{xid}}' })] },
      ],
    };
    const c = checkDag(dag, 'dag.json');
    assert.deepEqual(c.issues, []);
    const issues = checkPlaceholders(c.dag, dag.nodes, { file: 'dag.json', variables: [] });
    assert.deepEqual(issues.map((i) => i.nodeId), ['C']);
  });
  test('allow_empty_body / allow_non_json pass the step without assertions; otherwise the assertions decide', async () => {
    const empty = await after04('/empty');
    assert.equal((await p07(empty, { assertions: [{ path: '$.id', operator: 'exists' }], allow_empty_body: true })).passed, true);
    assert.equal((await p07(empty, { assertions: [{ path: '$.id', operator: 'exists' }] })).passed, false);
    const csv = await after04('/csv');
    const r = await p07(csv, { assertions: [{ path: '$', operator: 'is_type', expected: 'object' }], allow_non_json: true });
    assert.equal(r.passed, true);
    assert.match(r.message, /not JSON \(allow_non_json\)/);
    const json = await after04('/json');
    assert.equal((await p07(json, { assertions: [{ path: '$', operator: 'is_type', expected: 'array' }], allow_non_json: true })).passed, false, 'a JSON body is still checked');
  });
  test('an empty assertion list checks nothing and passes; parse_json reads JSON text', async () => {
    const ctx = makeCtx(httpEnv(base));
    const none = await p07(ctx, { assertions: [] });
    assert.equal(none.passed, true);
    assert.match(none.message, /no assertions/);
    assert.equal((await p07(ctx, { body: '{"key":"whale","hp":3}', parse_json: true, assertions: [{ path: '$.hp', operator: 'gt', expected: 0 }] })).passed, true);
    const bad = await p07(ctx, { body: 'PERSISTENT', parse_json: true, assertions: [{ path: '$.k', operator: 'exists' }] });
    assert.equal(bad.passed, false);
    assert.match(bad.message, /not JSON text/);
  });
  test('a chain P12 → P07 on {{previous}} checks the command result', async () => {
    const env = httpEnv(base, { exec: async () => ({ exitCode: 2, stdout: '15\n', stderr: 'Error: Missing option', timedOut: false }) });
    const node = {
      id: 'CLI', prereqs: [], scoring: { method: 'binary' as const, maxScore: 1, category: 'API' }, complexityTier: undefined,
      chain: [
        { type: 'P12', inputs: { command: 'x', expect_exit_code: null } },
        { type: 'P07', inputs: { body: '{{previous}}', assertions: [{ path: '$.exit_code', operator: 'not_equals', expected: 0 }, { path: '$.output', operator: 'regex', expected: 'missing option', ignore_case: true }, { path: '$.stdout', as_number: true, operator: 'gte', expected: 15 }] } },
      ],
    };
    const c = checkDag({ nodes: [{ id: 'CLI', prereqs: [], scoring: node.scoring, primitive_chain: node.chain }] }, 'dag.json');
    assert.deepEqual(c.issues, []);
    const run = await runNode(c.dag.nodes[0], env, { judgeEnabled: false, vars: {} });
    assert.equal(run.status, 'PASSED', run.message);
    void P12;
  });
});

describe('P06 field_types, root, unwrap, required_headers', () => {
  test('types, root and the data wrapper', async () => {
    const ctx = await after04('/json');
    assert.equal((await runPrimitive(P06, { required_fields: ['id'], field_types: { items: 'array', id: 'string' }, root: 'data' }, ctx)).passed, true);
    const wrong = await runPrimitive(P06, { required_fields: [], field_types: { id: 'integer' }, root: 'data' }, ctx);
    assert.equal(wrong.passed, false);
    assert.match(wrong.message, /id is string, not integer/);
    assert.equal((await runPrimitive(P06, { required_fields: ['id', 'items.0.name'], unwrap: ['data'] }, ctx)).passed, true);
    assert.equal((await runPrimitive(P06, { required_fields: ['id'] }, ctx)).passed, false, 'without unwrap the fields are at the root');
    assert.match((await runPrimitive(P06, { required_fields: [], root: 'nope' }, ctx)).message, /root nope not found/);
  });
  test('min_keys', async () => {
    const ctx = await after04('/json');
    assert.equal((await runPrimitive(P06, { required_fields: [], root: 'data', min_keys: 2 }, ctx)).passed, true);
    assert.match((await runPrimitive(P06, { required_fields: [], root: 'data', min_keys: 3 }, ctx)).message, /2 key\(s\), expected at least 3/);
  });
  test('required_headers (case-insensitive)', async () => {
    const ctx = await after04('/json');
    assert.equal((await runPrimitive(P06, { required_fields: [], required_headers: ['X-Version-Id'] }, ctx)).passed, true);
    const r = await runPrimitive(P06, { required_fields: [], required_headers: ['X-Application-Version'] }, ctx);
    assert.equal(r.passed, false);
    assert.match(r.message, /missing header\(s\): X-Application-Version/);
  });
});
