import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { WEBSOCKET_CHECK } from '../../src/primitives/websocket-check';
import { GRAPHQL_QUERY } from '../../src/primitives/graphql-query';
import { METADATA_INGEST } from '../../src/primitives/metadata-ingest';
import { TOTP_CODE, totp, base32Decode } from '../../src/primitives/totp-code';
import { P21 } from '../../src/primitives/p21-log-content-check';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

let server: http.Server;
let baseUrl: string;
const sockets = new Set<WebSocket>();
const received: string[] = [];

function json(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

before(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = raw ? JSON.parse(raw) : undefined;
      if (url.pathname === '/api/posts' && req.method === 'POST') {
        if (req.headers.authorization !== 'Bearer tok') return json(res, 401, { error: 'no' });
        for (const s of sockets) s.send(JSON.stringify({ event: 'posted', data: { post: '{}', team_id: 't1' }, broadcast: { channel_id: body.channel_id } }));
        return json(res, 201, { id: 'p1' });
      }
      if (url.pathname === '/graphql' || url.pathname === '/api/graphql') {
        received.push(`${url.pathname} ${req.headers.authorization ?? ''} ${raw}`);
        const q = String(body?.query ?? '');
        if (q.includes('ingestProposal')) {
          return q.includes('aspectName: "ok"') ? json(res, 200, { data: { ingestProposal: 'urn:li:dataset:x' } }) : json(res, 200, { data: { ingestProposal: null }, errors: [{ message: 'rejected' }] });
        }
        if (q.includes('boom')) return json(res, 200, { data: null, errors: [{ message: 'boom happened' }] });
        if (q.includes('denied')) return json(res, 403, { errors: [{ message: 'forbidden', extensions: { code: 403 } }] });
        return json(res, 200, { data: { me: { name: 'eval', vars: body.variables ?? null } } });
      }
      if (url.pathname === '/aspects' && url.searchParams.get('action') === 'ingestProposal') {
        return body?.proposal?.aspectName === 'restli' ? json(res, 200, { value: 'success' }) : json(res, 500, { message: 'bad' });
      }
      res.writeHead(404, { 'Content-Type': 'text/html' });
      res.end('<html>not found</html>');
    });
  });
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has('xmpp') ? 'xmpp' : protocols.has('actioncable-v1-json') ? 'actioncable-v1-json' : false),
  });
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/cable' && req.headers.origin !== baseUrl) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      if (path === '/xmpp') {
        ws.on('message', (m) => {
          if (String(m).includes('<open')) {
            ws.send("<open xmlns='urn:ietf:params:xml:ns:xmpp-framing' id='1'/>");
            ws.send('<stream:features><mechanism>ANONYMOUS</mechanism></stream:features>');
          }
        });
      } else if (path === '/api/ws') {
        if (req.headers.authorization !== 'Bearer tok') return ws.close(4001, 'unauthorized');
        ws.send(JSON.stringify({ event: 'hello', seq: 0, data: {} }));
        ws.on('message', (m) => {
          const msg = JSON.parse(String(m));
          if (msg.action === 'authentication_challenge') ws.send(JSON.stringify({ status: 'OK', seq_reply: msg.seq }));
        });
      } else if (path === '/cable') {
        ws.send(JSON.stringify({ type: 'welcome' }));
        ws.on('message', (m) => {
          const msg = JSON.parse(String(m));
          if (msg.command === 'subscribe' && JSON.parse(msg.identifier).channel === 'RoomChannel') ws.send(JSON.stringify({ identifier: msg.identifier, type: 'confirm_subscription' }));
        });
      } else ws.close();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  for (const s of sockets) s.terminate();
  await new Promise<void>((r) => server.close(() => r()));
});

const env = () => httpEnv(baseUrl);
const withToken = () => {
  const ctx = makeCtx(env());
  ctx.state.auth = { role: 'admin', sessions: { admin: { headers: { Authorization: 'Bearer tok' }, cookies: [], kind: 'api_key' } } };
  return ctx;
};

describe('WEBSOCKET_CHECK against a ws server on 127.0.0.1', () => {
  test('XMPP framing: published loopback URL mapped onto the app, subprotocol, send then expect (earlier messages consumed)', async () => {
    const r = await runPrimitive(WEBSOCKET_CHECK, { url: 'ws://localhost:8026/xmpp', subprotocols: ['xmpp'], steps: [{ send: '<open/>' }, { expect: { contains: '<open' } }, { expect: { contains: 'ANONYMOUS' } }] }, makeCtx(env()));
    assert.equal(r.passed, true, r.message);
    assert.match(r.message, /WebSocket \/xmpp open \(xmpp\)/);
    const miss = await runPrimitive(WEBSOCKET_CHECK, { url: '/xmpp', subprotocols: ['xmpp'], steps: [{ send: '<open/>' }, { expect: { any_of: ['<success', 'bind'] }, timeout_ms: 400 }] }, makeCtx(env()));
    assert.equal(miss.passed, false);
    assert.match(miss.message, /step 2: no message containing one of \["<success","bind"\] within 400 ms; received 2/);
    const first = await runPrimitive(WEBSOCKET_CHECK, { url: '/xmpp', subprotocols: ['xmpp'], steps: [{ send: '<open/>' }, { expect: { contains: 'ANONYMOUS' }, first: true, timeout_ms: 1000 }] }, makeCtx(env()));
    assert.equal(first.passed, false, 'first: only the next message counts');
  });

  test('Mattermost-like: the session\'s Authorization on the upgrade, first event, a JSON reply, an HTTP trigger and the event it broadcasts', async () => {
    const hello = await runPrimitive(WEBSOCKET_CHECK, { url: '/api/ws', steps: [{ expect: { json: { event: 'hello', seq: 0 } }, first: true }] }, withToken());
    assert.equal(hello.passed, true, hello.message);
    const challenge = await runPrimitive(WEBSOCKET_CHECK, { url: '/api/ws', steps: [{ send_json: { action: 'authentication_challenge', seq: 1, data: { token: 'tok' } } }, { expect: { json: { status: 'OK', seq_reply: 1 } } }] }, withToken());
    assert.equal(challenge.passed, true, challenge.message);
    const ev = await runPrimitive(WEBSOCKET_CHECK, { url: '/api/ws', steps: [{ http: { method: 'POST', path: '/api/posts', body: { channel_id: 'c9' } } }, { expect: { json: { event: 'posted', broadcast: { channel_id: 'c9' } }, has_keys: ['data.post', 'data.team_id'] } }] }, withToken());
    assert.equal(ev.passed, true, ev.message);
    assert.match(ev.message, /POST \/api\/posts → 201/);
    const wrongChannel = await runPrimitive(WEBSOCKET_CHECK, { url: '/api/ws', steps: [{ http: { method: 'POST', path: '/api/posts', body: { channel_id: 'c9' } } }, { expect: { json: { event: 'posted', broadcast: { channel_id: 'other' } } }, timeout_ms: 500 }] }, withToken());
    assert.equal(wrongChannel.passed, false);
    const missingKey = await runPrimitive(WEBSOCKET_CHECK, { url: '/api/ws', steps: [{ http: { method: 'POST', path: '/api/posts', body: { channel_id: 'c9' } } }, { expect: { json: { event: 'posted' }, has_keys: ['data.sender_name'] }, timeout_ms: 500 }] }, withToken());
    assert.equal(missingKey.passed, false);
    const anon = await runPrimitive(WEBSOCKET_CHECK, { url: '/api/ws', session: 'none', steps: [{ expect: {}, timeout_ms: 1000 }] }, withToken());
    assert.equal(anon.passed, false);
    assert.match(anon.message, /closed by the server \(code 4001\)/);
  });

  test('ActionCable: Origin of the app, subprotocol, subscribe and confirm; without Origin the upgrade is refused; a closed port fails', async () => {
    const identifier = JSON.stringify({ channel: 'RoomChannel', pubsub_token: 'abc' });
    const r = await runPrimitive(WEBSOCKET_CHECK, { url: '/cable', subprotocols: ['actioncable-v1-json'], steps: [{ send_json: { command: 'subscribe', identifier } }, { expect: { json: { type: 'confirm_subscription' } } }] }, makeCtx(env()));
    assert.equal(r.passed, true, r.message);
    const noOrigin = await runPrimitive(WEBSOCKET_CHECK, { url: '/cable', origin: false, steps: [] }, makeCtx(env()));
    assert.equal(noOrigin.passed, false);
    assert.match(noOrigin.message, /upgrade refused|connection failed/);
    const refused = await runPrimitive(WEBSOCKET_CHECK, { url: '/cable', origin: false, expect_refused: true }, makeCtx(env()));
    assert.equal(refused.passed, true, refused.message);
    const closedAtOnce = await runPrimitive(WEBSOCKET_CHECK, { url: '/api/ws', session: 'none', expect_refused: true }, makeCtx(env()));
    assert.equal(closedAtOnce.passed, true, closedAtOnce.message);
    const accepted = await runPrimitive(WEBSOCKET_CHECK, { url: '/xmpp', subprotocols: ['xmpp'], expect_refused: true }, makeCtx(env()));
    assert.equal(accepted.passed, false);
    assert.match(accepted.message, /accepted \(expected a refusal\)/);
    const other = await runPrimitive(WEBSOCKET_CHECK, { url: 'wss://example.com/x' }, makeCtx(env()));
    assert.match(other.message, /not the app under test/);
  });
});

describe('GRAPHQL_QUERY', () => {
  test('posts query + variables in the session; the body becomes the last response; store_as; errors and non-GraphQL answers', async () => {
    const ctx = withToken();
    const r = await runPrimitive(GRAPHQL_QUERY, { endpoint: '/api/graphql', query: 'query Me($n: Int) { me { name } }', variables: { n: 1 }, operation_name: 'Me', store_as: 'me_resp', expect_no_errors: true }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.deepEqual(ctx.state.last?.body, { data: { me: { name: 'eval', vars: { n: 1 } } } });
    assert.deepEqual(ctx.state.exports.me_resp, { data: { me: { name: 'eval', vars: { n: 1 } } } });
    assert.match(received.at(-1)!, /^\/api\/graphql Bearer tok \{"query":"query Me.*"operationName":"Me"\}$/);
    const errs = await runPrimitive(GRAPHQL_QUERY, { query: '{ boom }' }, withToken());
    assert.equal(errs.passed, true, 'errors allowed unless expect_no_errors (a following P07 checks them)');
    assert.match(errs.message, /1 error\(s\), first: "boom happened"/);
    const strict = await runPrimitive(GRAPHQL_QUERY, { query: '{ boom }', expect_no_errors: true }, withToken());
    assert.equal(strict.passed, false);
    assert.match(strict.message, /1 error\(s\), first: "boom happened"; no data/);
    const denied = await runPrimitive(GRAPHQL_QUERY, { query: '{ denied }', expect_no_errors: true }, withToken());
    assert.match(denied.message, /status 403/);
    const notGql = await runPrimitive(GRAPHQL_QUERY, { endpoint: '/nope', query: '{ x }' }, withToken());
    assert.equal(notGql.passed, false);
    assert.match(notGql.message, /POST \/nope → 404: not a GraphQL response/);
  });
});

describe('METADATA_INGEST', () => {
  test('GraphQL ingestProposal first, then the Rest.li action; the last response is {value, data, urn}', async () => {
    const ctx = withToken();
    const g = await runPrimitive(METADATA_INGEST, { entity_urn: 'urn:li:dataset:x', aspect_name: 'ok', aspect_value: { name: 'x', description: 'has "quotes"' } }, ctx);
    assert.equal(g.passed, true, g.message);
    assert.deepEqual(ctx.state.last?.body, { value: 'success', data: { ingestProposal: 'urn:li:dataset:x' }, urn: 'urn:li:dataset:x' });
    assert.match(received.at(-1)!, /entityType: DATASET, entityUrn: \\"urn:li:dataset:x\\", aspectName: \\"ok\\", aspect: \{ contentType: \\"application\/json\\", value: \\"\{\\\\\\"name\\\\\\":/);
    const rest = await runPrimitive(METADATA_INGEST, { entity_type: 'glossaryTerm', entity_urn: 'urn:li:glossaryTerm:t', aspect_name: 'restli', aspect_value: '{"a":1}' }, ctx);
    assert.equal(rest.passed, true, rest.message);
    assert.match(rest.message, /GraphQL \/api\/graphql → 200 \(no ingestProposal\)|Rest\.li \/aspects → 200/);
    const none = await runPrimitive(METADATA_INGEST, { entity_urn: 'urn:li:dataset:x', aspect_name: 'neither', aspect_value: '{}' }, ctx);
    assert.equal(none.passed, false);
    assert.deepEqual(ctx.state.last?.body, { value: 'failed', data: { ingestProposal: null }, urn: null });
    const notUrn = await runPrimitive(METADATA_INGEST, { entity_urn: '{{unresolved}}', aspect_name: 'ok', aspect_value: '{}' }, ctx);
    assert.match(notUrn.message, /is not a URN/);
  });
});

describe('TOTP_CODE and P21 container output', () => {
  test('RFC 6238 vectors; the code lands in store_as; a secret that is not base32 fails', async () => {
    const key = base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    assert.equal(key.toString(), '12345678901234567890');
    assert.equal(totp(key, { time: 59_000, step: 30, digits: 8, algorithm: 'sha1' }), '94287082');
    assert.equal(totp(key, { time: 1_111_111_109_000, step: 30, digits: 8, algorithm: 'sha1' }), '07081804');
    const ctx = makeCtx(env(), { mfa_secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' });
    const r = await runPrimitive(TOTP_CODE, { secret: 'gezd gnbv gy3t qojq gezd gnbv gy3t qojq', store_as: 'mfa_code' }, ctx);
    assert.equal(r.passed, true, r.message);
    assert.equal(ctx.state.exports.mfa_code, totp(key, { time: Date.now(), step: 30, digits: 6, algorithm: 'sha1' }));
    assert.equal(String(ctx.state.exports.mfa_code).length, 6);
    const bad = await runPrimitive(TOTP_CODE, { secret: 'not-base32!!' }, ctx);
    assert.match(bad.message, /not base32/);
  });

  test('P21 source container_output: a pattern searches the output; no pattern keeps the tail as evidence', async () => {
    const asked: [string, number][] = [];
    const e = httpEnv(baseUrl, { containerOutput: async (svc, tail) => (asked.push([svc, tail]), 'GET /health 200\n{"level":"info","request_id":"r1"}\n') });
    const hit = await runPrimitive(P21, { source: 'container_output', pattern: 'request_id', tail_lines: 50 }, makeCtx(e));
    assert.equal(hit.passed, true, hit.message);
    assert.deepEqual(asked, [['app', 50]]);
    const ctx = makeCtx(e);
    const keep = await runPrimitive(P21, { source: 'container_output', tail_lines: 200 }, ctx);
    assert.equal(keep.passed, true, keep.message);
    assert.match(String(ctx.state.vars.last_log_tail), /request_id/);
    const none = await runPrimitive(P21, { source: 'container_output' }, makeCtx(httpEnv(baseUrl)));
    assert.match(none.message, /not possible in this environment/);
    assert.equal(P21.schema.safeParse({ source: 'container_output', log_path: 'x.log' }).success, false);
    assert.equal(P21.schema.safeParse({ pattern: 'x' }).success, false, 'a file source needs log_path');
    assert.equal(P21.schema.safeParse({ log_path: 'x.log', expect_match: false }).success, false, 'match settings need a pattern');
  });
});
