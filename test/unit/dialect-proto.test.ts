import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { findPrimitive } from '../../src/primitives/registry';
import { repoRoot } from '../../src/paths';

const FIXTURES = JSON.parse(readFileSync(join(repoRoot(), 'test', 'fixtures', 'dialect-proto', 'dags.json'), 'utf8')) as Record<string, { id: string }[]>;

interface Step {
  type: string;
  inputs: Record<string, any>;
  notes?: Record<string, unknown>;
}

/** Normalize one task's fixture nodes; every canonical step must meet its primitive's schema. */
function load(task: string) {
  const r = normalizePublishedDag({ nodes: FIXTURES[task] }, { task, file: `${task}.json` });
  assert.deepEqual(r.issues, [], `${task}: ${JSON.stringify(r.issues)}`);
  const nodes = new Map<string, Step[]>();
  for (const n of r.dag.nodes as { id: string; primitive_chain: Step[] }[]) {
    for (const s of n.primitive_chain) {
      const p = findPrimitive(s.type);
      assert.ok(p, `${task}/${n.id}: ${s.type} is a catalogue primitive`);
      const parsed = p.schema.safeParse(s.inputs);
      assert.ok(parsed.success, `${task}/${n.id} ${s.type}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues)}`);
    }
    nodes.set(n.id, n.primitive_chain);
  }
  const spellings = new Set(r.spellings.map((s) => `${s.primitive}: ${s.spelling} → ${s.canonical}`));
  return { nodes, spellings, step: (id: string, i = 0) => nodes.get(id)![i] };
}

describe('P18 → BROWSER_INTERACT, per task', () => {
  test('kmasmnil actions: login becomes the Formbricks form steps; cookies, status and URL assertions map one to one', () => {
    const { step, spellings } = load('kmasmnil');
    const s = step('K1');
    assert.equal(s.type, 'BROWSER_INTERACT');
    assert.equal(s.inputs.anonymous, true);
    const actions = s.inputs.steps.map((x: { action: string }) => x.action);
    assert.deepEqual(actions.slice(0, 9), ['goto', 'wait_for_load', 'wait', 'click_if_present', 'wait', 'fill', 'fill', 'click', 'wait']);
    assert.deepEqual(s.inputs.steps[5], { action: 'fill', selector: '#email', value: '{{admin_email}}' });
    assert.deepEqual(s.inputs.steps[9], { action: 'get_cookie', name: 'sid', store_as: 'kept' });
    assert.deepEqual(s.inputs.steps.slice(10, 13).map((x: { action: string }) => x.action), ['goto', 'wait_for_load', 'clear_cookies']);
    assert.deepEqual(s.inputs.steps[13], { action: 'set_cookie', name: 'sid', value_from: 'kept' }, 'the kept cookie is read when the step runs, not templated before');
    assert.deepEqual(s.inputs.steps.at(-2), { action: 'assert_status', status: 200 });
    assert.deepEqual(s.inputs.steps.at(-1), { action: 'assert_url_contains', value: '/auth/login' });
    assert.ok([...spellings].some((x) => x.startsWith('P18: actions[]')));
    const a = step('K1', 1);
    assert.equal(a.type, 'DOM_ASSERT');
    assert.deepEqual(a.inputs.assertions, [{ selector: 'table, .list', visibility: 'visible' }, { selector: 'form', exists: true }]);
  });

  test('mjobbzsi steps: navigate/type/wait.timeout are renamed; fake media; the DOM check reads exists and hidden_or_reduced', () => {
    const { step, spellings } = load('mjobbzsi');
    const s = step('M1');
    assert.equal(s.inputs.fake_media, true);
    assert.deepEqual(s.inputs.steps, [
      { action: 'goto', url: 'http://localhost:8026/room' },
      { action: 'wait', ms: 500 },
      { action: 'click', selector: '#join' },
      { action: 'fill', selector: '#msg', value: 'hi' },
      { action: 'press', key: 'Enter' },
      { action: 'mouse_move', x: 5, y: 6 },
      { action: 'screenshot', name: 'room' },
    ]);
    assert.ok(spellings.has('P18: steps[].action: type (text) → fill (value)'));
    assert.deepEqual(step('M1', 1).inputs.assertions, [{ selector: '#root', exists: true }, { selector: '.toolbar', visibility: 'hidden_or_faded' }]);
    const shot = step('M2');
    assert.equal(shot.type, 'SCREENSHOT');
    assert.deepEqual(shot.inputs.steps, [{ action: 'mouse_move' }, { action: 'wait', ms: 700 }, { action: 'press', key: 'c' }]);
    assert.ok(spellings.has('SCREENSHOT: actions[] → steps[]'));
  });

  test('rjhcjrst: step comments become notes; P19 assertions take textContains + i18nFallback, minCount, attribute + valueRegex', () => {
    const { step } = load('rjhcjrst');
    const s = step('R1');
    assert.deepEqual(s.inputs.steps.at(-1), { action: 'wait', ms: 100 });
    assert.deepEqual(s.notes, { _step_notes: { 'inputs.steps[3].comment': 'hydration' } });
    const a = step('R1', 1);
    assert.equal(a.inputs.url, '/dashboard');
    assert.deepEqual(a.inputs.assertions, [
      { selector: 'nav', exists: true },
      { selector: 'h1', text_any: ['Dashboard', 'Panel'], case_insensitive: true },
      { selector: 'li', min_count: 2 },
      { selector: 'html', attribute: 'lang', value_regex: '^de' },
    ]);
    assert.deepEqual(a.notes, { _assertion_notes: { '0.comment': 'either layout' } });
  });

  test('xayqujrv: url + wait_ms, no_auth → anonymous, otherwise the admin with its token in cookie "t"; duplicated selectors are checked once', () => {
    const { step } = load('xayqujrv');
    assert.deepEqual(step('X1').inputs, { url: '/login', wait_until: 'load', timeout_ms: 25000, settle_ms: 4000, min_html_chars: 1000, fail_on_error_title: true, anonymous: true });
    assert.deepEqual(step('X2').inputs.login_as, { role: 'admin' });
    assert.equal(step('X2').inputs.token_cookie, 't');
    assert.equal(step('X2').inputs.settle_ms, 10000, 'wait_ms is capped at 10 s as the evaluator did');
    assert.deepEqual(step('X1', 1).inputs.assertions, [{ selector: 'html, body', exists: true }, { selector: '#app', exists: true }]);
    assert.deepEqual(step('X2', 1).inputs.token_cookie, 't');
  });

  test('ychlukjm: url + wait_for', () => {
    const { step } = load('ychlukjm');
    assert.deepEqual(step('Y1').inputs, { url: '{{base_url}}/search', wait_until: 'domcontentloaded', settle_ms: 3000, wait_for_selector: 'body' });
  });
});

describe('P19 → DOM_ASSERT spellings of the other tasks', () => {
  test('cqfnbfay authenticate → the admin; without it anonymous', () => {
    const { step } = load('cqfnbfay');
    assert.deepEqual(step('C1').inputs.login_as, { role: 'admin' });
    assert.equal(step('C1', 1).inputs.anonymous, true);
    assert.deepEqual(step('C1', 1).inputs.assertions, [{ selector: 'form', exists: false }]);
  });
  test('lgzivily selector + expect_present; sgdoserd selectors + all_required false → require any', () => {
    assert.deepEqual(load('lgzivily').step('L1').inputs, { assertions: [{ selector: "input[name='authUser']", exists: true }] });
    assert.deepEqual(load('sgdoserd').step('S1').inputs, { require: 'any', assertions: [{ selector: '#root', exists: true }, { selector: 'html', exists: true }] });
  });
  test('gmdnohlg: P19 is a DOM check, P25 was a stub there (PUBLISHED_STUB)', () => {
    const { step } = load('gmdnohlg');
    assert.equal(step('G1').type, 'PUBLISHED_STUB');
    assert.match(step('G1').inputs.reason, /task_gmdnohlg's evaluator: "P25 not fully implemented"/);
    assert.equal(step('G2').type, 'DOM_ASSERT');
  });
});

describe('RENDER_DOM spellings', () => {
  test('login_first → form_login (Keycloak selectors first); no_auth → anonymous; strip_classes, urls canonical; use_landing keeps url', () => {
    const v = load('cvyocaao');
    assert.deepEqual(v.step('V1').inputs.form_login, { url: '{{base_url}}/realms/master/account/', username: 'admin', password: 'admin', username_selectors: ['#username', 'input[name=username]', 'input[type=email]'], password_selectors: ['#password', 'input[name=password]', 'input[type=password]'], submit_selectors: ['#kc-login', 'input[type=submit]', 'button[type=submit]'] });
    assert.equal(load('lzdugafl').step('Z1').inputs.anonymous, true);
    assert.equal(load('jzssnoqp').step('J2').inputs.strip_classes, true);
    assert.deepEqual(load('pkvwdnhj').step('P1').inputs.urls, ['{{base_url}}/a', '{{base_url}}/b']);
    const l = load('lgzivily');
    assert.deepEqual(l.step('L2').inputs, { url: '{{base_url}}/interface/main/tabs/main.php', settle_ms: 100 });
    assert.ok([...l.spellings].some((s) => s.startsWith('RENDER_DOM: use_landing')));
  });
});

describe('P21: a log check or a WebSocket, by its inputs', () => {
  test('xayqujrv: empty pattern without log_path → the app container output kept as evidence', () => {
    const { step } = load('xayqujrv');
    assert.deepEqual(step('X3'), { type: 'P21', inputs: { source: 'container_output', tail_lines: 200 } });
  });
  test('mjobbzsi XMPP: send + expect_message, and steps with expect / expect_any', () => {
    const { step } = load('mjobbzsi');
    assert.deepEqual(step('M3'), { type: 'WEBSOCKET_CHECK', inputs: { url: 'ws://localhost:8026/xmpp-websocket', subprotocols: ['xmpp'], steps: [{ send: '<open/>' }, { expect: { contains: '<open' }, timeout_ms: 4000 }] } });
    assert.deepEqual(step('M4').inputs.steps, [
      { send: '<open/>' },
      { expect: { contains: '<open' }, timeout_ms: 9000 },
      { expect: { contains: 'ANONYMOUS' }, timeout_ms: 9000 },
      { send: '<iq/>' },
      { expect: { any_of: ['jid', '<failure'] }, timeout_ms: 9000 },
    ]);
  });
  test('jzssnoqp ActionCable: subprotocol, subscribe command with a JSON identifier, confirm_subscription', () => {
    const { step } = load('jzssnoqp');
    assert.deepEqual(step('J1').inputs, {
      url: 'ws://localhost:8018/cable',
      subprotocols: ['actioncable-v1-json'],
      steps: [{ send_json: { command: 'subscribe', identifier: '{"channel":"RoomChannel","pubsub_token":"{{tok}}"}' } }, { expect: { json: { type: 'confirm_subscription' } }, timeout_ms: 5000 }],
    });
  });
  test('sgdoserd Mattermost: first event, JSON sends, reply, HTTP trigger + event with channel and data keys; no expectation = any message', () => {
    const { step } = load('sgdoserd');
    assert.deepEqual(step('S2').inputs, { url: '/api/v4/websocket', session: 'chain', steps: [{ expect: { json: { event: 'hello', seq: 0 } }, first: true }] });
    assert.deepEqual(step('S3').inputs.steps, [{ send_json: { action: 'authentication_challenge', seq: 1, data: { token: '{{admin_token}}' } } }, { expect: { json: { status: 'OK', seq_reply: 1 } } }]);
    assert.deepEqual(step('S4').inputs.steps, [{ http: { method: 'POST', path: '/api/v4/posts', body: { channel_id: 'c1' } } }, { expect: { json: { event: 'posted', broadcast: { channel_id: 'c1' } }, has_keys: ['data.post', 'data.team_id'] } }]);
    assert.deepEqual(step('S5').inputs.steps, [{ send_json: { action: 'user_typing', seq: 2 } }, { expect: {} }]);
  });
});

describe('the five later tasks (gavmyneb, ididetxj, iyjruvfz, egsszeqg)', () => {
  test('gavmyneb: tab × times, focus and URL assertions; P19 without url opens /, attr/assert/pattern, visible; P22 token; P25 authorization request', () => {
    const { step } = load('gavmyneb');
    assert.deepEqual(step('GA1').inputs.steps, [{ action: 'goto', url: '/login' }, { action: 'press', key: 'Tab' }, { action: 'press', key: 'Tab' }, { action: 'assert_focus_visible' }, { action: 'assert_url_not_contains', value: '/login' }]);
    assert.deepEqual(step('GA2').inputs, { url: '/', assertions: [{ selector: "script[src*='/dist/']", exists: true }] });
    assert.deepEqual(step('GA2', 1).inputs.assertions, [{ selector: 'html', attribute: 'lang', value_regex: '^en' }, { selector: '#x', visibility: 'visible', text_any: ['Hi'] }]);
    assert.deepEqual(step('GA3').inputs, { endpoint: '/api/graphql', query: '{ a }', variables: {}, expect_no_errors: true, headers: { Authorization: 'Bearer {{admin_token}}' } });
    assert.deepEqual(step('GA4').inputs, { client_id: '{{dev_key}}', redirect_uri: 'http://localhost:9999/cb', scopes: [], authorize_path: '/login/oauth2/auth', flow: 'authorize_request', expect_status: [200, 302] });
    assert.deepEqual(step('GA4').notes, { _token_url_unused: '/login/oauth2/token' });
    assert.deepEqual(step('GA4', 1).inputs, { authorize_path: '/api/lti/authorize_redirect', flow: 'authorize_request', expect_redirect_with: ['id_token', 'state'] });
  });
  test('ididetxj: actions, the admin token cookie, a visible element; the code flow with PKCE and the userinfo check', () => {
    const { step } = load('ididetxj');
    assert.deepEqual(step('ID1').inputs, { url: 'http://localhost:8031/settings', login_as: { role: 'admin' }, token_cookie: 'accessToken', steps: [{ action: 'wait_for_selector', selector: '[role=switch]' }, { action: 'click', selector: '#b' }, { action: 'fill', selector: '#i', value: 'v' }], timeout_ms: 20000 });
    assert.deepEqual(step('ID1', 1).inputs, { assertions: [{ selector: '[role=switch]', visibility: 'visible' }] });
    assert.deepEqual(step('ID2').inputs, { client_id: '{{cid}}', client_secret: '{{csec}}', redirect_uri: 'http://localhost/cb', scopes: ['read', 'write'], authorize_path: '/oauth/authorize', flow: 'authorization_code', token_path: '/oauth/token', pkce: 'S256', token_cookie: 'accessToken', verify: { path: '/api/auth.info', method: 'POST', expect_fields: ['data'] } });
  });
  test('iyjruvfz: texts in the last response; its P25 flows were backdoors or missing → PUBLISHED_STUB; egsszeqg: a refused socket', () => {
    const { step } = load('iyjruvfz');
    assert.deepEqual(step('IY1').inputs, { source_contains_any: ['Sign in', 'Login'], source: 'last_response' });
    assert.match(step('IY1', 1).inputs.reason, /had no flow "pkce_authorization_code"/);
    assert.match(step('IY1', 2).inputs.reason, /backdoors/);
    assert.deepEqual(load('egsszeqg').step('EG1'), { type: 'WEBSOCKET_CHECK', inputs: { url: '/runners/_ws', expect_refused: true } });
  });
});

describe('P22, P_INGEST, P30', () => {
  test('P22 → GRAPHQL_QUERY: path → endpoint, the task\'s default endpoint, store_as; notes kept; a stub task → PUBLISHED_STUB', () => {
    const y = load('ychlukjm');
    const s = y.step('Y2');
    assert.deepEqual(s, { type: 'GRAPHQL_QUERY', inputs: { query: '{ me { urn } }', endpoint: '/api/v2/graphql', store_as: 'me_resp', expect_no_errors: false }, notes: { _round26_schema_fix: 'a note' } });
    assert.deepEqual(y.step('Y2', 1).inputs.endpoint, '/api/v2/graphql');
    assert.deepEqual(y.step('Y2', 1).inputs.variables, { i: { a: 1 } });
    assert.deepEqual(load('fpumriig').step('F1').inputs, { endpoint: '/metadata', query: 'mutation { signUp { ok } }', expect_no_errors: true });
    assert.equal(load('xayqujrv').step('X4').type, 'PUBLISHED_STUB');
  });
  test('P_INGEST → METADATA_INGEST with snake_case inputs', () => {
    const { step, spellings } = load('ychlukjm');
    assert.deepEqual(step('Y3'), { type: 'METADATA_INGEST', inputs: { entity_type: 'dataset', entity_urn: 'urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)', aspect_name: 'datasetProperties', change_type: 'UPSERT', aspect_value: '{"name": "t"}' } });
    assert.ok(spellings.has('P_INGEST: entityUrn → entity_urn'));
  });
  test('lgzivily P25 → OAUTH_FLOW: a registered client, PKCE, the login, the patient to choose, a wrong verifier, a replayed jti', () => {
    const { step } = load('lgzivily');
    assert.deepEqual(step('L3'), { type: 'OAUTH_FLOW', inputs: { token_path: '/oauth2/default/token', register_path: '/oauth2/default/registration', flow: 'authorization_code', authorize_path: '/oauth2/default/authorize', pkce: 'S256', scopes: ['openid'], login: { username: '{{admin_username}}', password: '{{admin_password}}' } } });
    assert.deepEqual([step('L4').inputs.choose, step('L4').inputs.wrong_code_verifier, step('L4').inputs.expect], ['{{puuid}}', true, 'answer']);
    assert.deepEqual(step('L5').inputs, { token_path: '/oauth2/default/token', register_path: '/oauth2/default/registration', flow: 'client_credentials', client_auth: 'private_key_jwt', jwt_alg: 'RS256', scopes: ['system/Patient.r'], assertion_jti: '{{last_jti}}', expect: 'answer' });
  });
  test('P30 → TOTP_CODE reading the named variable', () => {
    assert.deepEqual(load('sgdoserd').step('S6'), { type: 'TOTP_CODE', inputs: { secret: '{{mfa_secret}}', store_as: 'mfa_code' } });
  });
  test('an unknown kmasmnil action and a P19 expectation nobody knows are load issues naming the path', () => {
    const r = normalizePublishedDag({ nodes: [{ id: 'N', primitive_chain: [{ type: 'P18', inputs: { actions: [{ action: 'dance' }] } }, { type: 'P19', inputs: { assertions: [{ selector: 'a', expected: 'glowing' }] } }], scoring: { method: 'binary', maxScore: 1 } }] }, { task: 'kmasmnil', file: 'k.json' });
    assert.deepEqual(r.issues.map((i) => `${i.path}: ${i.message}`), ['nodes[0].primitive_chain[0].inputs.actions[0].action: unknown action "dance"', 'nodes[0].primitive_chain[1].inputs.assertions[0].expected: unknown expectation "glowing" (known: exists, visible)']);
  });
});
