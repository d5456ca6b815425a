/**
 * HTTP dialect spellings of the later published tasks (iyjruvfz, ididetxj, gavmyneb), on small
 * DAGs of our own.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { checkDag } from '../../src/tasks/validate-dag';

type Step = { type: string; inputs: Record<string, any>; notes?: Record<string, unknown> };

function one(task: string, type: string, inputs: Record<string, unknown>, index = 0) {
  const filler = Array.from({ length: index }, (_, k) => ({ id: `F${k}`, prereqs: [], primitive_chain: [{ type: 'P01', inputs: { path: 'x' } }], scoring: { category: 'X', method: 'binary', maxScore: 1 } }));
  const raw = { nodes: [...filler, { id: 'N', prereqs: [], primitive_chain: [{ type, inputs }], scoring: { category: 'API', method: 'binary', maxScore: 1 } }] };
  const norm = normalizePublishedDag(raw, { task, file: 'dag.json' });
  const check = checkDag(norm.dag, 'dag.json');
  const step = (norm.dag.nodes[index] as { primitive_chain: Step[] }).primitive_chain[0];
  return { step, spellings: norm.spellings.map((s) => s.spelling), issues: [...norm.issues, ...check.issues].map((i) => `${i.path}: ${i.message}`) };
}

describe('iyjruvfz', () => {
  test('${NAME} is a run variable; P14 status sets; P04 measure_response_time_ms', () => {
    let r = one('iyjruvfz', 'P14', { action: 'DELETE /api/v2/teams/${TEAM_ID}', expected_result: 'denied', expected_status: 403, expected_acceptable_statuses: [403, 404], as_role_id: 'r1' });
    assert.deepEqual(r.issues, []);
    assert.ok(r.spellings.includes('${NAME} (iyjruvfz)'));
    assert.deepEqual(r.step.inputs, { action: 'DELETE /api/v2/teams/{{TEAM_ID}}', expected_result: 'denied', acceptable_statuses: [403, 404] });
    assert.deepEqual(r.step.notes, { _expected_status_unread: 403, _as_role_id_unread: 'r1' });
    r = one('iyjruvfz', 'P14', { action: 'POST /api/v2/teams/1/memberships', expected_result: 'allowed', expected_status: 201 });
    assert.deepEqual(r.step.inputs.acceptable_statuses, [200, 201, 204]);
    r = one('iyjruvfz', 'P04', { method: 'POST', path: '/api/v2/bookings', body: { eventTypeId: '${EVENT_TYPE_ID}' }, measure_response_time_ms: true });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs, { method: 'POST', path: '/api/v2/bookings', body: { eventTypeId: '{{EVENT_TYPE_ID}}' } });
  });

  test('P27 scenario: register, book a slot of its own, the mock receiver\'s record; local-only checks are stubs', () => {
    let r = one('iyjruvfz', 'P27', { subscriber_url: 'http://mock-receiver:9012/hook', secret: 's', trigger_event: 'BOOKING_CREATED', expected_header_name: 'X-Sig', expected_signature_format: '^[a-f0-9]{64}$', expected_max_retries: 3, wait_seconds: 60 }, 2);
    assert.deepEqual(r.issues, []);
    const i = r.step.inputs;
    assert.deepEqual(i.register.body, { subscriberUrl: 'http://mock-receiver:9012/hook', triggers: ['BOOKING_CREATED'], secret: 's', active: true });
    assert.equal(i.trigger_body.start, '2027-02-03T10:00:00Z');
    assert.deepEqual(i.receiver_history, { url: 'http://localhost:9012/history', criteria: { path: '/hook', min_deliveries: 1, headers_match: { 'X-Sig': '^[a-f0-9]{64}$' }, max_deliveries: 4 } });
    assert.equal(i.wait_seconds, 60);
    r = one('iyjruvfz', 'P27', { verify_signature_locally: true, secret: 's', body: '{"a":1}', expected_hex_signature_pattern: '^[a-f0-9]{64}$' });
    assert.deepEqual(r.issues, []);
    assert.equal(r.step.type, 'PUBLISHED_STUB');
    r = one('iyjruvfz', 'P28', { trigger_template_render: 'Hello {{attendeeName}}', expected_substitutions: ['{{attendeeName}}'], expected_no_unrendered_braces: true });
    assert.deepEqual(r.issues, []);
    assert.equal(r.step.type, 'PUBLISHED_STUB');
    assert.ok(r.step.notes && '_published_inputs' in r.step.notes, 'the template stays a note, not a placeholder');
  });
});

describe('ididetxj', () => {
  test('P14 labels judge the last response; P24 noop trigger; P16 threshold_ms', () => {
    let r = one('ididetxj', 'P14', { action: 'documents.archive', expected_result: 'denied', acceptable_statuses: [403, 404] });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs, { expected_result: 'denied', acceptable_statuses: [403, 404], from_last_response: true });
    assert.deepEqual(r.step.notes, { _action_label: 'documents.archive' });
    r = one('ididetxj', 'P24', { trigger: { type: 'noop' }, verify: { strategy: 'db_query', sql: 'SELECT 2 AS c', expected_result: { c: 2 }, max_wait_ms: 8000 } });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs, { verify: { sql: 'SELECT 2 AS c', expect_row: { c: 2 } }, wait_seconds: 8 });
    r = one('ididetxj', 'P16', { threshold_ms: 5000 });
    assert.deepEqual(r.step.inputs, { max_ms: 5000 });
  });
});

describe('hhrdixum, uybznoms, orghjavi', () => {
  test('hhrdixum P05: Django REST item routes, a company set up first; P23 extra_form_fields', () => {
    let r = one('hhrdixum', 'P05', { resource: '/api/order/po/', setup_company_first: { is_supplier: true }, create_body: { supplier: '{{cid}}' }, expected_create_status: 201 });
    assert.deepEqual(r.issues, []);
    const i = r.step.inputs;
    assert.deepEqual([i.read_path, i.update_method, i.id_field], ['/api/order/po/{id}/', 'PATCH', 'pk']);
    assert.deepEqual(i.setup, { method: 'POST', path: '/api/company/', body: { name: 'P05-Setup-po-{{run_id}}', currency: 'USD', is_supplier: true }, capture: { cid: ['$.pk', '$.id'], company_id: ['$.pk', '$.id'] } });
    assert.deepEqual(i.create_body, { supplier: '{cid}' });
    r = one('hhrdixum', 'P05', { resource: '/api/stock/', setup_part_first: true, create_body: { part: '{{pid}}' } });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.notes, { _setup_part_first_unread_by_evaluator: true });
    r = one('hhrdixum', 'P23', { upload: { path: '/api/importer/session/', field_name: 'data_file', file_content: 'base64:bmFtZQ==', file_name: 'd.yaml', extra_form_fields: { model_type: 'part' } } });
    assert.deepEqual(r.issues, []);
    assert.deepEqual([r.step.inputs.upload.extra_fields, r.step.inputs.upload.file_content_b64], [{ model_type: 'part' }, 'bmFtZQ==']);
  });

  test('hhrdixum (smoke DAG): save_response_id_as / save_response_field_as captures, P14 expected_statuses, P23 save_response_id_as', () => {
    let r = one('hhrdixum', 'P04', { method: 'POST', path: '/api/user/tokens/', body: { name: 'x' }, save_response_id_as: 'tok_pk', save_response_field_as: { field: 'token', var: 'tok' } });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs.capture, { tok_pk: ['$.pk', '$.id', '$.ID', '$.key', '$[0].pk', '$[0].id', '$[0].ID', '$[0].key'], tok: ['$.token', '$[0].token'] });
    r = one('hhrdixum', 'P04', { method: 'GET', path: '/api/part/', save_response_field_as: { part_name: 'name', part_ipn: 'IPN' } });
    assert.deepEqual(r.step.inputs.capture, { part_name: ['$.name', '$[0].name'], part_ipn: ['$.IPN', '$[0].IPN'] });
    r = one('hhrdixum', 'P04', { method: 'GET', path: '/x', save_response_field_as: 'name' });
    assert.ok(r.issues.some((m) => m.includes('save_response_field_as')), r.issues.join('\n'));
    r = one('hhrdixum', 'P14', { action: 'POST /api/report/template/', expected_result: 'denied', expected_status: 400, expected_statuses: [400, 401, 403] });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs.acceptable_statuses, [403, 404, 400, 401]);
    r = one('hhrdixum', 'P14', { action: 'GET /api/part/', expected_result: 'allowed', expected_statuses: [304] });
    assert.deepEqual(r.step.inputs.acceptable_statuses, [200, 201, 202, 203, 204, 205, 206, 304]);
    r = one('hhrdixum', 'P23', { upload: { path: '/api/importer/session/', file_content: 'base64:bmFtZQ==', file_name: 'd.csv', content_type: 'text/csv' }, save_response_id_as: 'sid' });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs.capture, { sid: ['$.pk', '$.id', '$.ID'] });
    r = one('hhrdixum', 'P23', { upload: { path: '/u', file_content: 'x' }, expect_failure: true, save_response_id_as: 'sid' });
    assert.ok(r.issues.some((m) => m.includes('capture needs an upload that succeeds')), r.issues.join('\n'));
  });

  test('uybznoms send_token_cookie; orghjavi session modes are the session roles', () => {
    let r = one('uybznoms', 'P04', { method: 'POST', path: '/api/users/refresh-token', send_token_cookie: true });
    assert.deepEqual(r.issues, []);
    assert.equal(r.step.inputs.token_cookie, 'payload-token');
    r = one('orghjavi', 'P04', { path: '/api/v1/sites', auth_mode: 'bearer_eval_key', follow_redirects: false });
    assert.equal(r.step.inputs.role, 'bearer_eval_key');
    r = one('orghjavi', 'P14', { action: 'GET /settings', auth_mode: 'session_eval_viewer', expected_result: 'denied' });
    assert.equal(r.step.inputs.role, 'viewer');
  });
});

describe('gavmyneb', () => {
  test('P14 operation/expect_status/token null, status sets, described actions', () => {
    let r = one('gavmyneb', 'P14', { role: 'student', operation: 'GET', path: '/api/v1/calendar_events', query: { a: 'b' }, expect_status: 200 });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs, { role: 'student', method: 'GET', path: '/api/v1/calendar_events', query: { a: 'b' }, expected_result: 'allowed', acceptable_statuses: [200] });
    r = one('gavmyneb', 'P14', { role: 'student', action: 'POST /graphql hideAssignmentGrades', token: null, expected_result: 'denied', expected_status: 403 });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs, { role: 'anonymous', action: 'POST /graphql', expected_result: 'denied', denied_codes: [401, 403, 404] });
    assert.deepEqual(r.step.notes, { _action_description: 'hideAssignmentGrades', _expected_status_unread: 403 });
  });

  test('P05 item/delete resources and token; P23 canvas flow; P29 setups and the described-only workflow', () => {
    let r = one('gavmyneb', 'P05', { resource: '/api/v1/accounts/1/courses', create_body: {}, item_resource: '/api/v1/courses', delete_query: { event: 'delete' }, token: '{{admin_token}}' });
    assert.deepEqual(r.issues, []);
    assert.deepEqual([r.step.inputs.read_path, r.step.inputs.delete_path, r.step.inputs.headers], ['/api/v1/courses/{id}', '/api/v1/courses/{id}?event=delete', { Authorization: 'Bearer {{admin_token}}' }]);
    r = one('gavmyneb', 'P23', { upload: { method: 'POST', path: '/api/v1/courses/1/files', field_name: 'attachment', file_name: 'bench.txt', token: '{{admin_token}}', flow: 'canvas' } });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs.upload, { method: 'POST', path: '/api/v1/courses/1/files', file_name: 'bench.txt', flow: 'canvas', headers: { Authorization: 'Bearer {{admin_token}}' }, file_content: 'test' });
    r = one('gavmyneb', 'P29', { entity_setup: { method: 'POST', path: '/api/v1/courses', body: {} }, steps: [{ name: 'offer', path: '/api/v1/courses/{{id}}', body: {} }], final_verify: { db_query: 'SELECT 1 AS x WHERE {{id}} > 0', expected: { x: 1 } } });
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.step.inputs.steps, [{ name: 'offer', method: 'POST', path: '/api/v1/courses/{id}', body: {}, expect_status: [200] }]);
    r = one('gavmyneb', 'P29', { entity_setup: { method: 'POST', path: '/api/v1/topics', body: {} }, steps: [], final_verify: { db_query: 'SELECT 1 AS x', expected: { x: 1 } } });
    assert.deepEqual(r.issues, []);
    r = one('gavmyneb', 'P29', { workflow: { trigger: 'POST /api/v1/courses/:course_id/content_migrations' }, expected_states: ['created'], terminal: 'imported' });
    assert.deepEqual(r.issues, []);
    assert.equal(r.step.type, 'PUBLISHED_STUB');
  });
});
