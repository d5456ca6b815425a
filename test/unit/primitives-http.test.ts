import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { P04 } from '../../src/primitives/p04-http-request';
import { P06 } from '../../src/primitives/p06-json-schema-match';
import { P07 } from '../../src/primitives/p07-json-value-assert';
import { P15 } from '../../src/primitives/p15-status-code-assert';
import { runNode } from '../../src/primitives/run-chain';
import type { DagNode } from '../../src/model/dag';
import { httpEnv, makeCtx, runPrimitive, schemaIssues } from '../fixtures/primitives/harness';

interface Seen { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }
const seen: Seen[] = [];
let server: http.Server;
let baseUrl: string;
let counter = 0;
const items = new Map<number, { id: number; title: string }>();

function send(res: http.ServerResponse, status: number, body: unknown, type = 'application/json') {
  res.writeHead(status, { 'Content-Type': type });
  res.end(type === 'application/json' ? JSON.stringify(body) : String(body));
}

before(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: raw });
      const url = new URL(req.url ?? '/', 'http://x');
      const p = url.pathname;
      if (p === '/json') return send(res, 200, { id: 42, user: { name: 'ann', roles: ['admin', 'staff'], age: 30 }, items: [{ a: 1 }, { a: 2 }], price: 9.99, note: null, tags: [] });
      if (p === '/text') return send(res, 200, 'hello world', 'text/plain');
      if (p === '/redirect') {
        res.writeHead(302, { Location: '/json' });
        return res.end();
      }
      if (p === '/slow') return setTimeout(() => send(res, 200, { late: true }), 2000);
      if (p === '/count') return send(res, 200, { n: ++counter });
      if (p === '/limited') return send(res, ++counter > 3 ? 429 : 200, { n: counter });
      if (p === '/echo') return send(res, 200, { method: req.method, query: Object.fromEntries(url.searchParams), all: url.search, headers: req.headers, body: raw });
      if (p === '/list') return send(res, 200, [{ id: 1, name: 'first' }, { id: 2, name: 'second' }]);
      if (p === '/empty') {
        res.writeHead(204);
        return res.end();
      }
      if (p === '/items' && req.method === 'POST') {
        const body = JSON.parse(raw || '{}');
        const id = items.size + 100;
        items.set(id, { id, title: body.title });
        return send(res, 201, { item: { id, title: body.title } });
      }
      const m = /^\/items\/(\d+)$/.exec(p);
      if (m) {
        const it = items.get(Number(m[1]));
        return it ? send(res, 200, it) : send(res, 404, { error: 'not found' });
      }
      if (p.startsWith('/status/')) return send(res, Number(p.split('/')[2]), { status: Number(p.split('/')[2]) });
      send(res, 404, { error: 'no route' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const env = () => httpEnv(baseUrl);

describe('P04 http_request', () => {
  test('GET JSON: passes, records the last response with parsed body and default Accept', async () => {
    const ctx = makeCtx(env());
    const out = await runPrimitive(P04, { method: 'get', path: '/json' }, ctx);
    assert.equal(out.passed, true, out.message);
    assert.equal(ctx.state.last?.status, 200);
    assert.equal(ctx.state.last?.method, 'GET');
    assert.deepEqual((ctx.state.last?.body as { user: unknown }).user, { name: 'ann', roles: ['admin', 'staff'], age: 30 });
    assert.equal(ctx.state.last?.headers['content-type'], 'application/json');
    assert.ok(typeof ctx.state.last?.elapsedMs === 'number');
    assert.equal(seen.at(-1)?.headers.accept, 'application/json');
  });

  test('text body stays text; 204 gives an empty string', async () => {
    const ctx = makeCtx(env());
    await runPrimitive(P04, { path: '/text' }, ctx);
    assert.equal(ctx.state.last?.body, 'hello world');
    await runPrimitive(P04, { path: '/empty' }, ctx);
    assert.equal(ctx.state.last?.status, 204);
    assert.equal(ctx.state.last?.body, '');
  });

  test('redirects are not followed', async () => {
    const before = seen.length;
    const ctx = makeCtx(env());
    const out = await runPrimitive(P04, { path: '/redirect' }, ctx);
    assert.equal(out.passed, true);
    assert.equal(ctx.state.last?.status, 302);
    assert.equal(ctx.state.last?.headers.location, '/json');
    assert.deepEqual(seen.slice(before).map((s) => s.url), ['/redirect']);
  });

  test('a non-2xx status still passes (P15 checks status)', async () => {
    const ctx = makeCtx(env());
    const out = await runPrimitive(P04, { path: '/status/500' }, ctx);
    assert.equal(out.passed, true);
    assert.equal(ctx.state.last?.status, 500);
  });

  test('slow endpoint beyond timeout fails with a message, no last response', async () => {
    const ctx = makeCtx(env());
    const t0 = Date.now();
    const out = await runPrimitive(P04, { path: '/slow', timeout: 0.3 }, ctx);
    assert.equal(out.passed, false);
    assert.match(out.message, /timed out after 0\.3s/);
    assert.ok(Date.now() - t0 < 1500);
    assert.equal(ctx.state.last, undefined);
  });

  test('connection refused fails with the transport error', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const out = await runPrimitive(P04, { path: '/x' }, makeCtx(httpEnv(`http://127.0.0.1:${port}`)));
    assert.equal(out.passed, false);
    assert.match(out.message, /ECONNREFUSED/);
  });

  test('repeat N sends N requests (server-observed), keeps the last, records all statuses', async () => {
    counter = 0;
    const ctx = makeCtx(env());
    const out = await runPrimitive(P04, { method: 'POST', path: '/limited', body: { x: 1 }, repeat: 5, rapid_fire: true }, ctx);
    assert.equal(out.passed, true);
    assert.equal(counter, 5);
    assert.deepEqual(out.data?.statuses, [200, 200, 200, 429, 429]);
    assert.equal(ctx.state.last?.status, 429);
    assert.deepEqual(ctx.state.last?.body, { n: 5 });
  });

  test('repeat without rapid_fire spaces requests ~50 ms apart', async () => {
    counter = 0;
    const t0 = Date.now();
    await runPrimitive(P04, { method: 'POST', path: '/count', repeat: 3 }, makeCtx(env()));
    assert.equal(counter, 3);
    assert.ok(Date.now() - t0 >= 100, 'two 50 ms gaps');
  });

  test('GET body becomes the query string; query merges; POST body is JSON', async () => {
    const ctx = makeCtx(env());
    await runPrimitive(P04, { path: '/echo?x=1', body: { q: 'a b', n: 3, flag: true, skip: null, tag: ['t1', 't2'] }, query: { page: 2 } }, ctx);
    const echo = ctx.state.last?.body as { query: Record<string, string>; all: string; body: string };
    assert.equal(echo.all, '?x=1&q=a+b&n=3&flag=true&tag=t1&tag=t2&page=2');
    assert.equal(echo.body, '');
    await runPrimitive(P04, { method: 'POST', path: '/echo', body: { title: 'T', n: [1, 2] }, headers: { 'X-Num': 7, accept: 'text/html' } }, ctx);
    const e2 = ctx.state.last?.body as { headers: Record<string, string>; body: string };
    assert.deepEqual(JSON.parse(e2.body), { title: 'T', n: [1, 2] });
    assert.equal(e2.headers['content-type'], 'application/json');
    assert.equal(e2.headers['x-num'], '7');
    assert.equal(e2.headers.accept, 'text/html', 'explicit header wins, case-insensitively');
  });

  test('capture: JSONPath values become variables (typed); a missing path fails naming it', async () => {
    const ctx = makeCtx(env());
    const ok = await runPrimitive(P04, { path: '/json', capture: { uid: '$.id', first_a: '$.items[0].a', who: '$.user.name' } }, ctx);
    assert.equal(ok.passed, true, ok.message);
    assert.deepEqual(ctx.state.exports, { uid: 42, first_a: 1, who: 'ann' });
    const ctx2 = makeCtx(env());
    const bad = await runPrimitive(P04, { path: '/json', capture: { uid: '$.id', gone: '$.user.missing' } }, ctx2);
    assert.equal(bad.passed, false);
    assert.match(bad.message, /\$\.user\.missing/);
    assert.deepEqual(ctx2.state.exports, {}, 'nothing captured when a path is missing');
    assert.equal(ctx2.state.last?.status, 200, 'the response is still recorded');
  });

  test('schema: unknown key rejected with its name; GET with a non-object body rejected; bad method rejected', () => {
    const i = schemaIssues(P04, { path: '/x', allow_redirects: true });
    assert.equal(i[0].code, 'unrecognized_keys');
    assert.deepEqual(i[0].keys, ['allow_redirects']);
    assert.deepEqual(schemaIssues(P04, { method: 'GET', path: '/x', body: [1] })[0].path, ['body']);
    assert.ok(schemaIssues(P04, { method: 'FETCH', path: '/x' }).length > 0);
    assert.ok(schemaIssues(P04, { path: 'no-slash' }).length > 0);
    assert.deepEqual(schemaIssues(P04, { path: '/x', capture: { 'bad-name': '$.id' } })[0].path, ['capture', 'bad-name']);
  });
});

describe('P15 status_code_assert', () => {
  const withStatus = (status: number, method = 'GET') => {
    const ctx = makeCtx(env());
    ctx.state.last = { method, path: '/p', status, headers: {}, body: {}, elapsedMs: 1 };
    return ctx;
  };
  test('no sets given: any 2xx', async () => {
    assert.equal((await runPrimitive(P15, {}, withStatus(204))).passed, true);
    assert.equal((await runPrimitive(P15, {}, withStatus(302))).passed, false);
  });
  test('union of expected_status, acceptable_statuses and acceptable (expected_status does not shadow)', async () => {
    const inputs = { expected_status: 422, acceptable_statuses: [403], acceptable: [429] };
    for (const s of [422, 403, 429]) assert.equal((await runPrimitive(P15, inputs, withStatus(s))).passed, true, String(s));
    assert.equal((await runPrimitive(P15, inputs, withStatus(200))).passed, false);
    assert.equal((await runPrimitive(P15, { expected_status: [200, 304] }, withStatus(304))).passed, true);
    assert.equal((await runPrimitive(P15, { acceptable: 201 }, withStatus(200))).passed, false);
  });
  test('no lenient idempotent rules: 409 "already exists" fails a 2xx set; DELETE 404 fails', async () => {
    const ctx = withStatus(409, 'POST');
    ctx.state.last!.body = { error: 'already exists' };
    assert.equal((await runPrimitive(P15, { acceptable_statuses: [200, 201] }, ctx)).passed, false);
    assert.equal((await runPrimitive(P15, { acceptable_statuses: [200, 204] }, withStatus(404, 'DELETE'))).passed, false);
  });
  test('no previous response fails', async () => {
    const out = await runPrimitive(P15, { expected_status: 200 }, makeCtx(env()));
    assert.equal(out.passed, false);
    assert.match(out.message, /no HTTP response to check/);
  });
  test('schema rejects out-of-range and unknown keys', () => {
    assert.ok(schemaIssues(P15, { expected_status: 99 }).length > 0);
    assert.deepEqual(schemaIssues(P15, { status: 200 })[0].keys, ['status']);
  });
});

describe('P06 json_schema_match', () => {
  test('dotted paths with array indices against the last response', async () => {
    const ctx = makeCtx(env());
    await runPrimitive(P04, { path: '/json' }, ctx);
    assert.equal((await runPrimitive(P06, { required_fields: ['id', 'user.name', 'user.roles.1', 'items.0.a', 'note'] }, ctx)).passed, true);
    const out = await runPrimitive(P06, { required_fields: ['id', 'user.email', 'items.5.a'] }, ctx);
    assert.equal(out.passed, false);
    assert.deepEqual(out.data?.missing, ['user.email', 'items.5.a']);
  });
  test('list body: a path may address the first element; explicit body input wins', async () => {
    const ctx = makeCtx(env());
    await runPrimitive(P04, { path: '/list' }, ctx);
    assert.equal((await runPrimitive(P06, { required_fields: ['id', 'name', '1.name'] }, ctx)).passed, true);
    assert.equal((await runPrimitive(P06, { required_fields: ['title'] }, ctx)).passed, false);
    assert.equal((await runPrimitive(P06, { required_fields: ['a.b'], body: { a: { b: 0 } } }, ctx)).passed, true);
  });
  test('text body fails; empty list passes; no response fails', async () => {
    const ctx = makeCtx(env());
    await runPrimitive(P04, { path: '/text' }, ctx);
    assert.equal((await runPrimitive(P06, { required_fields: ['length'] }, ctx)).passed, false);
    assert.equal((await runPrimitive(P06, { required_fields: [] }, ctx)).passed, true);
    assert.equal((await runPrimitive(P06, { required_fields: ['x'] }, makeCtx(env()))).passed, false);
  });
});

describe('P07 json_value_assert', () => {
  const body = { id: 42, user: { name: 'ann', roles: ['admin', 'staff'], age: 30 }, items: [{ a: 1 }, { a: 2 }], price: 9.99, note: null, tags: [] as string[] };
  const one = async (a: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    (await runPrimitive(P07, { assertions: [a], body, ...extra }, makeCtx(env()))).passed;
  const cases: [Record<string, unknown>, boolean][] = [
    [{ path: '$.id', expected: 42 }, true],
    [{ path: '$.id', expected: '42' }, false],
    [{ path: '$.user.name', operator: 'equals', expected: 'Ann' }, false],
    [{ path: '$.user', expected: { age: 30, roles: ['admin', 'staff'], name: 'ann' } }, true],
    [{ path: '$.price', expected: 10, tolerance: 0.02 }, true],
    [{ path: '$.price', expected: 10, tolerance: 0.001 }, false],
    [{ path: '$.id', operator: 'not_equals', expected: 41 }, true],
    [{ path: '$.id', operator: 'not_equals', expected: 42 }, false],
    [{ path: '$.user.name', operator: 'exists' }, true],
    [{ path: '$.note', operator: 'exists' }, false],
    [{ path: '$.missing', operator: 'exists' }, false],
    [{ path: '$.missing', operator: 'not_exists' }, true],
    [{ path: '$.note', operator: 'not_exists' }, true],
    [{ path: '$.id', operator: 'not_exists' }, false],
    [{ path: '$.user.name', operator: 'contains', expected: 'nn' }, true],
    [{ path: '$.user.roles', operator: 'contains', expected: 'staff' }, true],
    [{ path: '$.items', operator: 'contains', expected: { a: 2 } }, true],
    [{ path: '$.user', operator: 'contains', expected: { name: 'ann' } }, true],
    [{ path: '$.user', operator: 'contains', expected: { name: 'bob' } }, false],
    [{ path: '$.user', operator: 'contains', expected: 'name' }, false],
    [{ path: '$.user.roles', operator: 'not_contains', expected: 'root' }, true],
    [{ path: '$.user.roles', operator: 'not_contains', expected: 'admin' }, false],
    [{ path: '$.id', operator: 'not_contains', expected: 4 }, false],
    [{ path: '$.user.age', operator: 'gt', expected: 29 }, true],
    [{ path: '$.user.age', operator: 'gt', expected: 30 }, false],
    [{ path: '$.user.age', operator: 'gte', expected: 30 }, true],
    [{ path: '$.user.age', operator: 'lt', expected: 30 }, false],
    [{ path: '$.user.age', operator: 'lte', expected: 30 }, true],
    [{ path: '$.user.name', operator: 'gte', expected: 0 }, false],
    [{ path: '$.user.name', operator: 'regex', expected: '^a.n$' }, true],
    [{ path: '$.user.name', operator: 'regex', expected: '^A' }, false],
    [{ path: '$.user.roles', operator: 'length', expected: 2 }, true],
    [{ path: '$.tags', operator: 'length', expected: 1 }, false],
    [{ path: '$.items', operator: 'is_type', expected: 'array' }, true],
    [{ path: '$.note', operator: 'is_type', expected: 'null' }, true],
    [{ path: '$.id', operator: 'is_type', expected: 'string' }, false],
    [{ path: '$.user.name', operator: 'in', expected: ['bob', 'ann'] }, true],
    [{ path: '$.id', operator: 'in', expected: ['42'] }, false],
    [{ path: '$.items[?(@.a > 1)].a', expected: 2 }, true],
    [{ path: 'user.name', expected: 'ann' }, true],
    [{ path: '$', operator: 'is_type', expected: 'object' }, true],
  ];
  for (const [a, want] of cases) {
    test(`${a.path} ${a.operator ?? 'equals'} ${JSON.stringify(a.expected)} → ${want}`, async () => {
      assert.equal(await one(a), want);
    });
  }
  test('allow_empty: an empty match passes that assertion only', async () => {
    assert.equal(await one({ path: '$.nothing', expected: 1 }), false);
    assert.equal(await one({ path: '$.nothing', expected: 1 }, { allow_empty: true }), true);
    assert.equal(await one({ path: '$.id', expected: 1 }, { allow_empty: true }), false);
  });
  test('min_passing: at least that many must pass (default all)', async () => {
    const assertions = [
      { path: '$.id', expected: 42 },
      { path: '$.id', expected: 0 },
      { path: '$.user.name', expected: 'ann' },
    ];
    const ctx = makeCtx(env());
    assert.equal((await runPrimitive(P07, { assertions, body }, ctx)).passed, false);
    const two = await runPrimitive(P07, { assertions, body, min_passing: 2 }, ctx);
    assert.equal(two.passed, true);
    assert.equal(two.data?.passing, 2);
    assert.equal((await runPrimitive(P07, { assertions, body, min_passing: 3 }, ctx)).passed, false);
    assert.ok(schemaIssues(P07, { assertions, min_passing: 4 }).length > 0);
  });
  test('reads the last response when no body is given; fails without one', async () => {
    const ctx = makeCtx(env());
    await runPrimitive(P04, { path: '/list' }, ctx);
    assert.equal((await runPrimitive(P07, { assertions: [{ path: '$[1].name', expected: 'second' }] }, ctx)).passed, true);
    assert.equal((await runPrimitive(P07, { assertions: [{ path: '$.x', operator: 'exists' }] }, makeCtx(env()))).passed, false);
  });
  test('schema: unknown operator, missing/extra expected, bad regex, nested unknown key', () => {
    assert.deepEqual(schemaIssues(P07, { assertions: [{ path: '$.a', operator: 'approximately', expected: 1 }] })[0].path, ['assertions', 0, 'operator']);
    assert.deepEqual(schemaIssues(P07, { assertions: [{ path: '$.a', operator: 'equals' }] })[0].path, ['assertions', 0, 'expected']);
    assert.deepEqual(schemaIssues(P07, { assertions: [{ path: '$.a', operator: 'exists', expected: true }] })[0].path, ['assertions', 0, 'expected']);
    assert.deepEqual(schemaIssues(P07, { assertions: [{ path: '$.a', operator: 'regex', expected: '(' }] })[0].path, ['assertions', 0, 'expected']);
    const nested = schemaIssues(P07, { assertions: [{ path: '$.a', operator: 'exists', match_type: 'x' }] })[0];
    assert.equal(nested.code, 'unrecognized_keys');
    assert.deepEqual(nested.path, ['assertions', 0]);
    assert.deepEqual(nested.keys, ['match_type']);
    assert.deepEqual(schemaIssues(P07, { assertions: [{ path: '$.a', operator: 'gt', expected: 1, tolerance: 1 }] })[0].path, ['assertions', 0, 'tolerance']);
  });
});

describe('templating through run-chain', () => {
  const node = (chain: DagNode['chain']): DagNode => ({ id: 'CREATE_THEN_READ', description: '', prereqs: [], chain, scoring: { category: 'API', subcategory: '', method: 'binary', maxScore: 3 } });

  test('P04 capture → P04 using {{item_id}} → P15 passes and exports the capture', async () => {
    const run = await runNode(
      node([
        { type: 'P04', inputs: { method: 'POST', path: '/items', body: { title: '{{title}}' }, capture: { item_id: '$.item.id' } } },
        { type: 'http_request', inputs: { path: '/items/{{item_id}}', capture: { title_back: '$.title' } } },
        { type: 'P15', inputs: { expected_status: 200 } },
      ]),
      env(),
      { judgeEnabled: false, vars: { title: 'hello' } },
    );
    assert.equal(run.status, 'PASSED', run.message);
    assert.equal(run.score, 3);
    assert.equal(typeof run.exports.item_id, 'number');
    assert.equal(run.exports.title_back, 'hello');
    assert.equal(run.steps[1].inputs && (run.steps[1].inputs as { path: string }).path, `/items/${run.exports.item_id}`);
  });

  test('a wrong id reaches the server and P15 fails the node', async () => {
    const run = await runNode(
      node([
        { type: 'P04', inputs: { path: '/items/{{item_id}}' } },
        { type: 'P15', inputs: { expected_status: 200 } },
      ]),
      env(),
      { judgeEnabled: false, vars: { item_id: 999999 } },
    );
    assert.equal(run.status, 'FAILED');
    assert.match(run.message, /404/);
  });

  test('an unresolved placeholder fails the step naming the variable', async () => {
    const before = seen.length;
    const run = await runNode(
      node([
        { type: 'P04', inputs: { path: '/items/{{item_id}}', headers: { 'X-Csrf': '{{previous.csrf}}' } } },
        { type: 'P15', inputs: {} },
      ]),
      env(),
      { judgeEnabled: false, vars: {} },
    );
    assert.equal(run.status, 'FAILED');
    assert.match(run.steps[0].message, /\{\{item_id\}\}/);
    assert.match(run.steps[0].message, /\{\{previous\.csrf\}\}/);
    assert.equal(seen.length, before, 'nothing was sent');
  });

  test('{{previous.x}} reads the previous P04 body inside the chain (published csrf pattern)', async () => {
    const run = await runNode(
      node([
        { type: 'P04', inputs: { path: '/json' } },
        { type: 'P04', inputs: { method: 'POST', path: '/echo', headers: { 'X-CSRF-Token': '{{previous.user.name}}' } } },
        { type: 'P07', inputs: { assertions: [{ path: '$.headers.x-csrf-token', expected: 'ann' }] } },
      ]),
      env(),
      { judgeEnabled: false, vars: {} },
    );
    assert.equal(run.status, 'PASSED', run.message);
    assert.deepEqual(run.exports, {}, 'previous is chain-local, not exported');
  });

  test('inputs invalid after templating fail the step with the path', async () => {
    const run = await runNode(node([{ type: 'P04', inputs: { path: '/json', timeout: '{{t}}' } }]), env(), { judgeEnabled: false, vars: { t: 'soon' } });
    assert.equal(run.status, 'FAILED');
    assert.match(run.steps[0].message, /invalid at timeout/);
  });
});
