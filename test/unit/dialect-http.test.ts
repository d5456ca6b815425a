/**
 * The HTTP dialects (P04, P05, P14, P16, P23, P24, P26, P27, P28, P29): each family of published
 * spellings, on small DAGs of our own, maps onto the canonical inputs (which then pass the
 * canonical schemas) and is recorded as a spelling.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { checkDag } from '../../src/tasks/validate-dag';

type Step = { type: string; inputs: Record<string, unknown>; notes?: Record<string, unknown> };

/** Normalize one published step of `task`; returns the canonical step, the spellings used and every issue. */
function one(task: string, type: string, inputs: Record<string, unknown>, node: Record<string, unknown> = {}) {
  const raw = { nodes: [{ id: 'N', prereqs: [], primitive_chain: [{ type, inputs }], scoring: { category: 'API', method: 'binary', maxScore: 1 }, ...node }] };
  const norm = normalizePublishedDag(raw, { task, file: 'dag.json' });
  const check = checkDag(norm.dag, 'dag.json');
  const n = norm.dag.nodes[0] as { primitive_chain: Step[] };
  return { step: n.primitive_chain[0], spellings: norm.spellings.map((s) => s.spelling), issues: [...norm.issues, ...check.issues].map((i) => `${i.path}: ${i.message}`), unsupported: check.unsupported };
}

/** The step must load cleanly and record `spelling`. */
function clean(r: ReturnType<typeof one>, spelling?: string) {
  assert.deepEqual(r.issues, []);
  assert.deepEqual(r.unsupported, {});
  if (spelling) assert.ok(r.spellings.includes(spelling), `spelling "${spelling}" recorded (got ${r.spellings.join(' | ')})`);
}

describe('P04 dialect', () => {
  test('paths: ${PREFIX:-default} (xayqujrv), jzssnoqp prefixes, absolute URLs and _external', () => {
    let r = one('xayqujrv', 'P04', { method: 'GET', path: '${API_V1_PREFIX:-/api/v1}/flags/' });
    clean(r, '${NAME:-default}');
    assert.equal(r.step.inputs.path, '/api/v1/flags/');
    r = one('jzssnoqp', 'P04', { method: 'POST', path: '${PUBLIC_API_PREFIX}/inboxes/x' });
    clean(r, '${API_PREFIX}');
    assert.equal(r.step.inputs.path, '/public/api/v1/inboxes/x');
    r = one('xayqujrv', 'P04', { path: 'http://localhost:9011/history?since=0', _external: true });
    clean(r, '_external: true');
    assert.deepEqual(r.step.inputs, { url: 'http://localhost:9011/history?since=0' });
    // an unknown ${X} in another task is a load issue, never sent literally
    assert.match(one('zzz', 'P04', { path: '${NOPE}/x' }).issues.join(), /has no known value/);
  });

  test('bodies: string bodies, body_form / form_data, content_type, params, body null', () => {
    let r = one('gmdnohlg', 'P04', { method: 'POST', path: '/s/x', body: 'password=a&b=2', headers: {} });
    clean(r, 'body: "text"');
    assert.equal(r.step.inputs.raw_body, 'password=a&b=2');
    assert.deepEqual(r.step.inputs.headers, { 'Content-Type': 'application/x-www-form-urlencoded' });
    r = one('uybznoms', 'P04', { method: 'POST', path: '/api/posts', body: '{ invalid json' });
    assert.deepEqual(r.step.inputs.headers, { 'Content-Type': 'application/json' });
    r = one('cvyocaao', 'P04', { method: 'POST', path: '/token', body_form: 'grant_type=x&client_id=y' });
    clean(r, 'body_form');
    assert.equal(r.step.inputs.form, 'grant_type=x&client_id=y');
    r = one('ygamciur', 'P04', { method: 'POST', path: '/login', form_data: { u: 'a' }, content_type: 'application/x-www-form-urlencoded' });
    clean(r, 'content_type');
    assert.deepEqual(r.step.inputs, { method: 'POST', path: '/login', form: { u: 'a' }, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    r = one('ygamciur', 'P04', { method: 'POST', path: '/exec', form_data: 'dto={"a":1}', content_type: 'multipart/form-data' });
    clean(r, 'content_type: multipart/form-data');
    assert.deepEqual(r.step.inputs.form, { dto: '{"a":1}' });
    assert.equal(r.step.inputs.multipart, true);
    r = one('ghmkznee', 'P04', { method: 'POST', path: '/login', params: { redirect: 'x' }, body: null });
    clean(r, 'params');
    assert.deepEqual(r.step.inputs, { method: 'POST', path: '/login', query: { redirect: 'x' } });
  });

  test('gmdnohlg: OCS paths ask for JSON; path_generator writes the long path out; WebDAV methods', () => {
    let r = one('gmdnohlg', 'P04', { method: 'GET', path: '/ocs/v2.php/cloud/users' });
    clean(r, 'gmdnohlg OCS path');
    assert.deepEqual(r.step.inputs.query, { format: 'json' });
    r = one('gmdnohlg', 'P04', { method: 'PUT', path: "/dav/{{repeat_char('a', 5)}}", path_generator: { type: 'repeat', char: 'a', count: 5 } });
    clean(r, 'path_generator');
    assert.equal(r.step.inputs.path, '/dav/aaaaa');
    assert.match(one('gmdnohlg', 'P04', { path: "/dav/{{repeat_char('a', 5)}}", path_generator: { type: 'repeat', char: 'b', count: 5 } }).issues.join(), /must hold/);
    clean(one('gmdnohlg', 'P04', { method: 'PROPFIND', path: '/dav/files/admin/' }));
  });

  test('captures: response_as / store_response_as / capture_as+field / capture_var / id captures / save_as', () => {
    let r = one('cqfnbfay', 'P04', { method: 'POST', path: '/x', capture_response_as: 'resp' });
    clean(r, 'capture_response_as');
    assert.deepEqual(r.step.inputs.capture, { resp: '$' });
    r = one('jzssnoqp', 'P04', { method: 'POST', path: '/x', capture_as: 'ident', capture_field: 'inbox_identifier', no_capture: true });
    clean(r, 'capture_as + capture_field');
    assert.deepEqual(r.step.inputs.capture, { ident: ['$.inbox_identifier', '$.payload.inbox_identifier', '$.payload.*.inbox_identifier'] });
    assert.equal(r.step.inputs.id_capture, false);
    r = one('xayqujrv', 'P04', { method: 'POST', path: '/k', capture_var: 'mk:$.key' });
    clean(r, 'capture_var "name:$.path"');
    assert.deepEqual(r.step.inputs.capture, { mk: '$.key' });
    r = one('kmasmnil', 'P04', { method: 'POST', path: '/s', _store_id_as: 'sid', _test_note: 'kept' });
    clean(r, '_store_id_as');
    assert.deepEqual(r.step.inputs.capture, { sid: ['$.data.id', '$.id'] });
    assert.deepEqual(r.step.notes, { _test_note: 'kept' });
    r = one('jtbxfpny', 'P04', { method: 'POST', path: '/d', save_as: 'made' });
    clean(r, 'save_as (jtbxfpny)');
    assert.equal(r.step.inputs.save_as, 'made');
    r = one('rjhcjrst', 'P04', { method: 'GET', path: '/a', save_as: 'atts' });
    assert.deepEqual(r.step.inputs.capture, { atts: '$' });
  });

  test('who: auth_mode, auth_override, no_auth / skip_auth / auth none, attach_csrf, omit_csrf / omit_ocs_header', () => {
    let r = one('orghjavi', 'P04', { method: 'POST', path: '/sites', form: { a: 'b' }, auth_mode: 'session_eval_admin', attach_csrf: true, follow_redirects: false });
    clean(r, 'auth_mode');
    assert.deepEqual(r.step.inputs, { method: 'POST', path: '/sites', form: { a: 'b' }, role: 'admin', attach_csrf: 'x-csrf-token', follow_redirects: false });
    r = one('orghjavi', 'P04', { method: 'GET', path: '/2fa', auth_mode: null });
    clean(r, 'follow_redirects absent (orghjavi)');
    assert.deepEqual(r.step.inputs, { method: 'GET', path: '/2fa', role: 'anonymous', follow_redirects: true });
    r = one('jzssnoqp', 'P04', { method: 'POST', path: '/p', auth_override: 'platform_app_token' });
    clean(r, 'auth_override');
    assert.deepEqual([r.step.inputs.role, r.step.inputs.id_capture], ['platform_app', false]);
    for (const [task, k, v] of [['gmdnohlg', 'no_auth', true], ['lzdugafl', 'skip_auth', true], ['sgdoserd', 'auth', 'none']] as const) {
      r = one(task, 'P04', { path: '/x', [k]: v });
      clean(r);
      assert.equal(r.step.inputs.role, 'anonymous', `${task} ${k}`);
    }
    r = one('gmdnohlg', 'P04', { method: 'POST', path: '/api/v2/cloud/users', headers: {}, body: { a: 1 }, omit_csrf: true, omit_ocs_header: true });
    clean(r, 'omit_ocs_header');
    assert.deepEqual(r.step.inputs.omit_headers, ['requesttoken', 'OCS-APIRequest']);
    assert.match(one('sgdoserd', 'P04', { path: '/x', auth: 'basic' }).issues.join(), /only "none"/);
  });

  test('how: polling (both spellings), concurrent_requests, allow/follow_redirects, expectations', () => {
    let r = one('lgzivily', 'P04', { method: 'GET', path: '{{ctx.status_url}}', poll_until_status: [200, 202], poll_max_seconds: 60, poll_interval_seconds: 5 });
    clean(r, 'poll_until_status / poll_until_path + poll_*');
    assert.deepEqual(r.step.inputs.poll, { until_status: [200, 202], max_seconds: 60, interval_ms: 5000 });
    r = one('sgdoserd', 'P04', { method: 'GET', path: '/c', poll_until_path: '$.counts.X', poll_attempts: 20, poll_interval_ms: 500 });
    assert.deepEqual(r.step.inputs.poll, { until_path: '$.counts.X', attempts: 20, interval_ms: 500 });
    r = one('ychlukjm', 'P04', { method: 'POST', path: '/g', body: { q: 1 }, concurrent_requests: 3 });
    clean(r, 'concurrent_requests');
    assert.equal(r.step.inputs.concurrent, 3);
    r = one('lgzivily', 'P04', { path: '/m', expect_content_type: 'application/fhir+json', expect_redirect: false, binary_response: true });
    clean(r);
    assert.match(one('sgdoserd', 'P04', { path: '/c', poll_interval_seconds: 1, poll_interval_ms: 500, poll_until_status: 200 }).issues.join(), /both given/);
  });
});

describe('P05 dialect', () => {
  test('{{id}} item paths, id_path (JSONPath or base path), keep_alive, token', () => {
    let r = one('ygamciur', 'P05', { resource: '/api/v1/apps', read_path: '/api/v1/apps/view/{{id}}', id_path: '$.data.id', create_body: {} });
    clean(r, 'read_path with {{id}}');
    assert.deepEqual([r.step.inputs.read_path, r.step.inputs.id_path], ['/api/v1/apps/view/{id}', '$.data.id']);
    r = one('qmjfeopc', 'P05', { resource: '{{API_V3_PREFIX}}/tasks/user', id_path: '{{API_V3_PREFIX}}/tasks', create_body: {} });
    clean(r, 'id_path: "/base"');
    assert.equal(r.step.inputs.delete_path, '{{API_V3_PREFIX}}/tasks/{id}');
    r = one('jtbxfpny', 'P05', { resource: '/api/v1/database/', create_body: {}, keep_alive: true });
    clean(r, 'keep_alive');
    assert.deepEqual([r.step.inputs.skip_delete, r.step.inputs.capture_id_as], [true, 'created_id']);
    r = one('kmasmnil', 'P05', { resource: '/api/v1/x', create_body: {}, token: '{{api_key}}' });
    clean(r, 'token (kmasmnil)');
    assert.deepEqual(r.step.inputs.headers, { 'x-api-key': '{{api_key}}' });
    r = one('pkvwdnhj', 'P05', { resource: '/api/lists', create_body: {}, token: '{{admin_token}}' });
    clean(r, 'token (pkvwdnhj)');
    assert.ok(r.step.notes && '_token_unread_by_evaluator' in r.step.notes);
  });
});

describe('P14 dialect', () => {
  test('result spellings, acceptable statuses, per-task token headers and status sets', () => {
    let r = one('xayqujrv', 'P14', { role: 'user', action: 'POST ${API_V1_PREFIX:-/api/v1}/projects/', expected_result: 'denied', expected_status: 403, acceptable_denied_status: [401, 403, 404, 500] });
    clean(r, 'acceptable_denied_status');
    assert.deepEqual(r.step.inputs, { role: 'user', action: 'POST /api/v1/projects/', expected_result: 'denied', denied_codes: [401, 403, 404, 500] });
    assert.deepEqual(r.step.notes, { _expected_status_unread: 403 });
    r = one('orghjavi', 'P14', { action: 'GET /billing', auth_mode: 'session_eval_editor', expected_result: 'denied_or_allowed', expected_status: 403, acceptable_statuses: [200, 302, 403] });
    clean(r, 'expected_result: denied_or_allowed');
    assert.equal(r.step.inputs.expected_result, 'either');
    assert.equal(r.step.inputs.role, 'editor');
    r = one('cqfnbfay', 'P14', { role: 'user', action: 'GET /api/x', token: '{{t}}', expected_result: 'denied', expected_status: 403 });
    clean(r, 'expected_status with denied (cqfnbfay)');
    assert.deepEqual([r.step.inputs.headers, r.step.inputs.acceptable_statuses], [{ 'X-Auth-Token': '{{t}}' }, [401, 403, 404]]);
    r = one('lgzivily', 'P14', { username: 'u', password: 'p', role_aro_group: 'front', action: 'GET /api/user', expected_result: 'allowed', expected_status: [200, 401], allow_redirects: false });
    clean(r, 'role_aro_group');
    assert.deepEqual(r.step.inputs, { action: 'GET /api/user', expected_result: 'allowed', role: 'front', login_as: { username: 'u', password: 'p' }, follow_redirects: false, acceptable_statuses: [200, 401] });
    r = one('ychlukjm', 'P14', { action: 'POST /api/graphql (addTag where the owner differs)', expected_result: 'denied', expected_status: [200, 403] });
    clean(r, 'action "METHOD /path (description)"');
    assert.deepEqual([r.step.inputs.action, r.step.inputs.acceptable_statuses, r.step.notes?._action_description], ['POST /api/graphql', [200, 403], 'addTag where the owner differs']);
  });

  test('sgdoserd judges the last response; mjobbzsi UI checks are stubs', () => {
    let r = one('sgdoserd', 'P14', { action: 'GET /api/v4/system/timezones' });
    clean(r, 'P14 (sgdoserd)');
    assert.equal(r.step.inputs.from_last_response, true);
    assert.equal(r.step.inputs.expected_result, 'allowed');
    r = one('sgdoserd', 'P14', { action: 'GET /x', expected_result: 'denied', expected_status: 403 });
    assert.deepEqual(r.step.inputs.acceptable_statuses, [403, 404]);
    r = one('mjobbzsi', 'P14', { role: 'moderator', action: 'kickParticipant', expected_result: 'allowed', context: 'conference_muc' });
    clean(r, 'action: "<UI control>" + context (mjobbzsi)');
    assert.equal(r.step.type, 'PUBLISHED_STUB');
    assert.deepEqual((r.step.inputs as { published_inputs: unknown }).published_inputs, { role: 'moderator', action: 'kickParticipant', expected_result: 'allowed', context: 'conference_muc' });
  });
});

describe('P16 and P23 dialects', () => {
  test('P16 limits and dfhjkeb schema_keys; P23 flat uploads and base64: contents', () => {
    let r = one('kmasmnil', 'P16', { max_response_time_ms: 5000 });
    clean(r, 'max_response_time_ms');
    assert.deepEqual(r.step.inputs, { max_ms: 5000 });
    r = one('dfhjkeb', 'P16', { schema_keys: ['token'] });
    clean(r, 'schema_keys');
    assert.deepEqual(r.step.inputs, { max_ms: 500, require_keys: ['token'] });
    r = one('sgdoserd', 'P23', { upload_path: '/api/v4/files', form_fields: { channel_id: 'c' }, files: [{ field: 'files', filename: 't.txt', content_type: 'text/plain', content_b64: 'SGk=' }] });
    clean(r, 'upload_path + form_fields + files[]');
    assert.deepEqual(r.step.inputs, { upload: { path: '/api/v4/files', extra_fields: { channel_id: 'c' }, field_name: 'files', file_name: 't.txt', content_type: 'text/plain', file_content_b64: 'SGk=' } });
    r = one('fpumriig', 'P23', { upload: { method: 'POST', path: '/file/upload', file_name: 't.txt', file_content: 'base64:dGVzdA==' } });
    clean(r, 'file_content: "base64:…"');
    assert.equal((r.step.inputs.upload as Record<string, unknown>).file_content_b64, 'dGVzdA==');
  });
});

describe('P27 dialect', () => {
  test('cqfnbfay: trigger object, body/header expectations, the announced port', () => {
    const r = one('cqfnbfay', 'P27', { trigger: { method: 'POST', path: '/api/s', body: { a: 1 } }, expect_delivery: { timeout_ms: 15000, body_contains: { event_type: 'submission.created' }, headers_contain: { 'Content-Type': 'application/json' } } });
    clean(r, 'trigger {method, path, body}');
    assert.deepEqual(r.step.inputs, { trigger_method: 'POST', trigger_path: '/api/s', trigger_body: { a: 1 }, wait_seconds: 15, receiver: { body_contains: ['submission.created'], headers_match: { 'Content-Type': 'application/json' }, port: '{{webhook_port}}' } });
  });
  test('rjhcjrst: registration to the step receiver, queue processing, JSON paths, HMAC signature', () => {
    const r = one('rjhcjrst', 'P27', {
      register: { path: '/api/v1/webhooks', headers: { Authorization: 'Bearer {{t}}' }, body: { url: 'http://host.docker.internal:{{webhook_port}}/hook', secret: 's' } },
      trigger: { method: 'POST', path: '/api/v1/transactions', body: {} },
      queue_processing: { command: 'php artisan queue:work --once', container: '{{app_container}}' },
      expect_delivery: { timeout_ms: 15000, headers_contain: { Signature: '^t=\\d+,v1=[0-9a-f]{128}$' }, body_jsonpath_exists: ['$.uuid'], signature_verify: { algorithm: 'sha3-512', secret: 's', preimage_template: '{ts}.{raw_payload}', header_pattern: '^t=(?P<ts>\\d+),v1=(?P<sig>[0-9a-f]{128})$' } },
    });
    clean(r, 'expect_delivery.signature_verify');
    const i = r.step.inputs as Record<string, any>;
    assert.equal(i.register.body.url, '{webhook_base}/hook');
    assert.deepEqual(i.run_after_trigger, { command: 'php artisan queue:work --once' });
    assert.deepEqual(i.receiver.signature, { header: 'Signature', pattern: '^t=(?<ts>\\d+),v1=(?<sig>[0-9a-f]{128})$', algorithm: 'sha3-512', secret: 's', preimage: '{ts}.{raw_payload}' });
  });
  test('xayqujrv: the mock receiver\'s history, its explicit event count', () => {
    const r = one('xayqujrv', 'P27', { register: { path: '${API_V1_PREFIX:-/api/v1}/environments/k/webhooks/', body: { url: 'http://mock-receiver:9001/hook' }, token: '{{admin_token}}' }, trigger: { method: 'PATCH', path: '/api/v1/fs/1/', body: {}, token: '{{admin_token}}' }, expect_delivery: { timeout_ms: 30000, min_attempts: 3 }, require_signature: false, min_events: 0, expect_signature_regex: '', expect_min_events: 0 });
    clean(r, 'expect_min_events / min_events / expect_signature_regex / require_signature (xayqujrv)');
    const i = r.step.inputs as Record<string, any>;
    assert.deepEqual(i.register.headers, { Authorization: 'Token {{admin_token}}' });
    assert.deepEqual(i.receiver_history, { url: 'http://localhost:9011/history?since=0', criteria: { min_deliveries: 0 } });
    assert.deepEqual(r.step.notes, { _min_attempts_superseded_by_expect_min_events: 3 });
  });
});

describe('P24, P26, P28, P29 dialects', () => {
  test('P24 (cqfnbfay), P26 (cqfnbfay, jzssnoqp), P28 (cqfnbfay) load as the canonical workflow types', () => {
    let r = one('cqfnbfay', 'P24', { trigger: { type: 'http', method: 'POST', path: '/api/s', body: {} }, verify: { strategy: 'db_query', sql: 'SELECT 1 AS cnt', expected_result: { cnt: 1 }, max_wait_ms: 15000 } });
    clean(r, 'P24 trigger/verify (cqfnbfay)');
    assert.deepEqual(r.step.inputs, { trigger: { method: 'POST', path: '/api/s', body: {} }, verify: { sql: 'SELECT 1 AS cnt', expect_row: { cnt: 1 } }, wait_seconds: 15 });
    r = one('cqfnbfay', 'P26', { path: '/api/templates', method: 'GET', params: { q: 'Eval' }, token: '{{t}}', expected_results: { min_count: 1, first_result_contains: 'Eval' } });
    clean(r, 'P26 path/params/expected_results');
    assert.deepEqual(r.step.inputs, { method: 'GET', path: '/api/templates', query: { q: 'Eval' }, headers: { 'X-Auth-Token': '{{t}}' }, results_path: ['$.data'], min_count: 1, first_result_contains: 'Eval' });
    r = one('jzssnoqp', 'P26', { path: '${API_V1_PREFIX}/accounts/1/contacts/search', params: { q: 'E' }, expected_results: { min_count: 1 } });
    clean(r);
    assert.equal(r.step.inputs.path, '/api/v1/accounts/1/contacts/search');
    r = one('cqfnbfay', 'P28', { trigger: { method: 'POST', path: '/api/s', body: {} }, mailserver_api: 'http://localhost:8025/api/v2/messages', expect: { to: 'a@b.c', subject_contains: 'sign', timeout_ms: 15000 } });
    clean(r, 'P28 trigger/mailserver_api/expect (cqfnbfay)');
    assert.deepEqual(r.step.inputs, { trigger: { method: 'POST', path: '/api/s', body: {} }, mail_api: 'http://localhost:8025/api/v2/messages', to: 'a@b.c', subject_contains: 'sign', wait_seconds: 15 });
  });

  test('P29 cqfnbfay: setup captures become {tokens}, defaults PUT and 200, expect_state, final SQL', () => {
    const r = one('cqfnbfay', 'P29', { entity_setup: { method: 'POST', path: '/api/s', body: {} }, steps: [{ name: 'a', path: '/api/x/{{submitter_ids[1]}}', body: { c: true }, expect_state: { path: '$.status', value: 'completed' } }], final_verify: { db_query: 'SELECT n FROM t WHERE id = {{id}}', expected: { n: 3 } } });
    clean(r, 'entity_setup (a request)');
    const i = r.step.inputs as Record<string, any>;
    assert.deepEqual(i.setup.capture, { id: ['$.id', '$[0].submission_id', '$[0].id'], submitter_ids_1: '$[1].id' });
    assert.deepEqual(i.steps, [{ name: 'a', method: 'PUT', path: '/api/x/{submitter_ids_1}', body: { c: true }, expect_status: [200], expect: [{ path: '$.status', equals: 'completed' }] }]);
    assert.deepEqual(i.final_verify, { sql: 'SELECT n FROM t WHERE id = {id}', expect_row: { n: 3 } });
  });

  test('P29 xayqujrv: null setup, waits, body comparisons, history final check; ubsmhopy tokens', () => {
    let r = one('xayqujrv', 'P29', { entity_setup: null, steps: [{ name: 'first', method: 'GET', path: '/i', expect_status: 200 }, { name: 'second', method: 'GET', path: '/i', expect_status: 200, _assert_equal_to: 'first', _assert_diff_from: 'first_call_should_be_equal' }, { name: 'w', _wait_seconds: 3 }], final_verify: { _external_get: 'http://localhost:9011/history?since=0', expect_min_events: 3, expect_signature_header_regex: 'sha256=[a-f0-9]{64}' } });
    clean(r, 'steps[]._wait_seconds');
    const i = r.step.inputs as Record<string, any>;
    assert.deepEqual(i.steps[1], { name: 'second', method: 'GET', path: '/i', expect_status: [200], same_body_as: 'first' });
    assert.deepEqual(i.steps[2], { name: 'w', wait_seconds: 3 });
    assert.deepEqual(i.final_verify, { history_url: 'http://localhost:9011/history?since=0', min_deliveries: 3, header_regex: 'sha256=[a-f0-9]{64}' });
    assert.deepEqual(r.step.notes, { _second_assert_diff_from_names_no_step: 'first_call_should_be_equal' });
    r = one('ubsmhopy', 'P29', { entity_setup: { method: 'POST', path: '/api/sends', body: {}, token: '{{admin_token}}' }, steps: [{ name: 'a', method: 'POST', path: '/api/sends/access/{{accessId}}', token: '', expect_status: 404 }], final_verify: { db_query: "SELECT c FROM s WHERE uuid='{{id}}'", expected: { c: 1 } } });
    clean(r);
    const u = r.step.inputs as Record<string, any>;
    assert.deepEqual(u.setup.headers, { Authorization: 'Bearer {{admin_token}}' });
    assert.deepEqual(u.steps[0], { name: 'a', method: 'POST', path: '/api/sends/access/{accessId}', role: 'anonymous', expect_status: [404] });
  });
});

describe('node id_capture', () => {
  test('no_entity_capture reaches the canonical node as id_capture: false', () => {
    const raw = { nodes: [{ id: 'N', prereqs: [], no_entity_capture: true, primitive_chain: [{ type: 'P04', inputs: { path: '/x' } }], scoring: { category: 'API', method: 'binary', maxScore: 1 } }] };
    const check = checkDag(normalizePublishedDag(raw, { task: 'jzssnoqp', file: 'dag.json' }).dag, 'dag.json');
    assert.deepEqual(check.issues, []);
    assert.equal(check.dag.nodes[0].idCapture, false);
  });
});
