import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CATALOGUE } from '../../src/primitives/catalogue';
import { catalogue, findPrimitive } from '../../src/primitives/registry';
import { appUrl } from '../../src/primitives/browser-common';
import { classify } from '../../src/primitives/p14-permission-check';
import { statistic } from '../../src/primitives/p16-response-time-check';
import { indexMatches } from '../../src/primitives/p11-db-index-check';
import { makePng, fileBytes } from '../../src/primitives/p23-file-upload-download';
import { publishedIds } from '../../src/primitives/published-id-capture';
import { entityOf } from '../../src/primitives/p05-api-crud';
import { sampleFiles, rubricText } from '../../src/primitives/p17-llm-judge';
import { absorbCookies, cookieHeader, parseSetCookie, splitJoinedSetCookie } from '../../src/primitives/auth/cookies';
import { RolesSchema } from '../../src/model/roles';
import { schemaIssues } from '../fixtures/primitives/harness';
import { corpusOpt, publishedTask } from '../helpers/published';

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const publishedDag = () => path.join(publishedTask('task_aoiwqoiq'), 'check', 'task_aoiwqoiq_e', 'evaluate', 'dag.json');

const ALL = ['P01', 'P02', 'P03', 'P04', 'P05', 'P06', 'P07', 'P08', 'P09', 'P10', 'P11', 'P12', 'P13', 'P14', 'P15', 'P16', 'P17', 'P21', 'P23', 'P24', 'P26', 'P27', 'P28', 'P29', 'SCREENSHOT', 'RENDER_DOM'];
const p = (id: string) => findPrimitive(id)!;
const ok = (id: string, inputs: unknown) => assert.deepEqual(schemaIssues(p(id), inputs).map((i) => `${i.path.join('.')}: ${i.message}`), [], `${id} ${JSON.stringify(inputs)}`);
const bad = (id: string, inputs: unknown, at?: string) => {
  const issues = schemaIssues(p(id), inputs);
  assert.ok(issues.length > 0, `${id} should reject ${JSON.stringify(inputs)}`);
  if (at !== undefined) assert.ok(issues.some((i) => i.path.join('.') === at), `${id}: expected an issue at "${at}", got ${JSON.stringify(issues.map((i) => i.path.join('.')))}`);
};

describe('catalogue', () => {
  test('every published primitive type P01–P17, P21, P23, P24, P26–P29, SCREENSHOT, RENDER_DOM is registered by id and name, strict', () => {
    for (const id of ALL) {
      const prim = findPrimitive(id);
      assert.ok(prim, id);
      assert.equal(findPrimitive(prim.name), prim, `${id} by name ${prim.name}`);
      assert.ok(catalogue().includes(prim));
      const issues = schemaIssues(prim, { __definitely_not_a_key: 1 });
      assert.ok(issues.some((i) => i.code === 'unrecognized_keys' || /unknown|Unrecognized/i.test(i.message)), `${id} rejects unknown keys: ${JSON.stringify(issues)}`);
    }
    assert.equal(new Set(CATALOGUE.map((x) => x.id)).size, CATALOGUE.length);
    // types the published files reuse for different things stay unknown (a load-time error)
    for (const t of ['P18', 'P19', 'P20', 'P22', 'P25']) assert.equal(findPrimitive(t), undefined, t);
  });

  test('every step of the published aoiwqoiq dag.json parses with our schemas (all types, all keys)', corpusOpt('task_aoiwqoiq'), () => {
    const dag = JSON.parse(fs.readFileSync(publishedDag(), 'utf8')) as { nodes: { id: string; primitive_chain: { type: string; inputs?: Record<string, unknown> }[] }[] };
    const failures: string[] = [];
    const counts: Record<string, number> = {};
    for (const node of dag.nodes) {
      node.primitive_chain.forEach((step, i) => {
        counts[step.type] = (counts[step.type] ?? 0) + 1;
        const prim = findPrimitive(step.type);
        if (!prim) return failures.push(`${node.id}#${i}: unknown type ${step.type}`);
        for (const issue of schemaIssues(prim, step.inputs ?? {})) failures.push(`${node.id}#${i} ${step.type} ${issue.path.join('.')}: ${issue.message}`);
      });
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(counts, { P01: 4, P02: 3, P03: 3, P04: 197, P06: 10, P07: 49, P08: 88, P09: 1, P10: 9, P11: 4, P12: 71, P13: 137, P14: 9, P15: 142, P17: 22, P23: 2, SCREENSHOT: 14 });
  });

  test('mnmtxiwb input shapes (upstream-harness.md §3.1) parse', () => {
    ok('P05', { resource: '/api/v1/customers', identifier_field: 'external_id', response_root: 'customer', update_method: 'PUT', update_to_base: true, create_body: { customer: { external_id: 'c1', name: 'A' } }, update_body: { customer: { external_id: 'c1', name: 'B' } }, expected_read_fields: ['name'], expected_create_status: 200, expected_delete_status: 200, skip_delete: false });
    ok('P05', { resource: '/api/v1/plans', create_body: { plan: { code: 'p' } }, skip_delete: true, update_method: 'POST' });
    ok('P13', { method: 'jwt', role: 'admin' });
    ok('P13', { method: 'api_key', role: 'admin' });
    ok('P14', { role: 'admin', action: 'GET /api/v1/customers', expected_result: 'allowed', expected_status: 200 });
    ok('P17', { rubric_id: 'R', evidence_type: 'code_files', files_to_sample: ['app/'], sample_strategy: 'first', rubric: 'x', score_range: [0, 5] });
  });
});

describe('schemas: contradictions and wrong types are load-time errors', () => {
  test('P05', () => {
    bad('P05', { create_body: {} }, 'resource');
    bad('P05', { resource: 'customers', create_body: {} }, 'resource');
    bad('P05', { resource: '/x', create_body: {}, id_field: 'id', identifier_field: 'uuid' }, 'identifier_field');
    bad('P05', { resource: '/x', create_body: {}, update_path: '/x/1' }, 'update_path');
    bad('P05', { resource: '/x', create_body: {}, update_method: 'DELETE' }, 'update_method');
  });
  test('P11', () => {
    ok('P11', { table: 'posts', expected_indexes: [{ columns: ['topic_id', 'post_number'], unique: true }, 'index_posts_on_user_id'] });
    ok('P11', { table: 'posts', indexes: ['topic_id'] });
    bad('P11', { table: 'posts' });
    bad('P11', { table: 'posts', expected_indexes: [{ columns: [] }] });
    bad('P11', { table: 'posts', expected_indexes: [{ cols: ['a'] }] });
    bad('P11', { table: 'posts', indexes: ['(unclosed'] });
  });
  test('P13', () => {
    bad('P13', {}, 'role');
    bad('P13', { role: 'admin', method: 'telepathy' }, 'method');
  });
  test('P14', () => {
    bad('P14', { action: 'DELETE /t/1.json' }, 'expected_result');
    bad('P14', { action: 'FROB /x', expected_result: 'denied' }, 'action');
    bad('P14', { action: 'GET /x', method: 'GET', path: '/x', expected_result: 'denied' }, 'action');
    bad('P14', { action: 'GET /x', expected_result: 'denied', expected_status: 200 }, 'expected_status.0');
    bad('P14', { action: 'GET /x', expected_result: 'allowed', expected_status: 403 }, 'expected_status.0');
    bad('P14', { action: 'GET /x', expected_result: 'allowed', denied_codes_extend: [409], allowed_codes_extend: [409] }, 'allowed_codes_extend');
    bad('P14', { action: 'GET /x', expected_result: 'maybe' }, 'expected_result');
  });
  test('P16', () => {
    ok('P16', { max_ms: 500 });
    ok('P16', { path: '/x', samples: 5, statistic: 'p95', max_ms: 200, max_ratio: 2, baseline_path: '/y' });
    bad('P16', { max_ms: 500, samples: 3 }, 'samples');
    bad('P16', { path: '/x', samples: 3, repeat: 3 }, 'repeat');
    bad('P16', { path: '/x', max_ratio: 2 }, 'max_ratio');
    bad('P16', { path: '/x', statistic: 'mode' }, 'statistic');
  });
  test('P21', () => {
    ok('P21', { log_path: 'log/production.log', pattern: 'Completed 200', tail_lines: 500 });
    bad('P21', { log_path: 'x.log', pattern: '(', match_type: 'regex' }, 'pattern');
    bad('P21', { pattern: 'x' }, 'log_path');
    bad('P21', { log_path: 'x', pattern: 'y', expect_match: false, min_matches: 3 }, 'min_matches');
  });
  test('P23', () => {
    bad('P23', { upload: { path: '/u', field_name: 'a', file_field: 'b' } }, 'upload.file_field');
    bad('P23', { upload: { path: '/u', file_size_kb: 1, file_content: 'x' } }, 'upload.file_content');
    bad('P23', { upload: { path: '/u' }, expect_failure: true, acceptable_statuses: [200] }, 'acceptable_statuses');
    bad('P23', { upload: { path: '/u' }, expect_failure: true, download: { url_from: '$.url' } }, 'download');
    bad('P23', { upload: { path: '/u' }, download: {} }, 'download');
  });
  test('P27', () => {
    ok('P27', { trigger_path: '/x', verify_sql: 'SELECT 1', wait_seconds: 1 });
    ok('P27', { trigger_path: '/x', register: { path: '/hooks', body: { url: '{webhook_url}' } }, receiver: { path: '/wh' } });
    bad('P27', { trigger_path: '/x' }, 'receiver');
    bad('P27', { trigger_path: '/x', verify_sql: 'SELECT 1', register: { path: '/hooks', body: { url: '{webhook_url}' } } }, 'receiver');
    bad('P27', { trigger_path: '/x', receiver: {}, verify_condition: '>=2' }, 'verify_condition');
  });
  test('P17', () => {
    bad('P17', { evidence_type: 'screenshot' });
    bad('P17', { prompt: 'x', evidence_type: 'screenshot', evidence_source: 'codebase' }, 'evidence_source');
    bad('P17', { prompt: 'x', score_range: [0, 5], max_score: 6 }, 'max_score');
    bad('P17', { prompt: 'x', evidence_type: 'screenshot', files_to_sample: ['a'] }, 'files_to_sample');
    bad('P17', { prompt: 'x', score_range: [5, 1] }, 'score_range');
    ok('P17', { prompt: 'x', evidence_type: 'code_files', evidence_source: 'codebase' });
  });
  test('SCREENSHOT / RENDER_DOM', () => {
    ok('SCREENSHOT', { url: '/', steps: [{ action: 'wait', ms: 10 }, { action: 'press_key', key: 'Escape' }], login_as: { role: 'admin' } });
    bad('SCREENSHOT', { url: '/', steps: [{ action: 'hover', selector: 'a' }] }, 'steps.0.action');
    bad('SCREENSHOT', { url: '/', steps: [{ action: 'click' }] });
    bad('SCREENSHOT', { url: '/', viewport: { width: 10, height: 900 } }, 'viewport.width');
    bad('SCREENSHOT', { url: '/', out_dir: '/tmp' });
    ok('RENDER_DOM', { url: '/', expect_text: ['Items'], max_chars: 5000 });
    bad('RENDER_DOM', { url: '/', full_page: true });
  });
});

describe('helpers', () => {
  test('appUrl maps paths and loopback URLs onto the app, refuses other hosts', () => {
    assert.equal(appUrl('/x?y=1', 'http://127.0.0.1:5000'), 'http://127.0.0.1:5000/x?y=1');
    assert.equal(appUrl('http://localhost:8020/u/a/summary', 'http://127.0.0.1:5000'), 'http://127.0.0.1:5000/u/a/summary');
    assert.equal(appUrl('http://localhost:8020/t/5', 'http://127.0.0.1:5000/base'), 'http://127.0.0.1:5000/base/t/5');
    assert.throws(() => appUrl('https://example.com/', 'http://127.0.0.1:5000'), /not the app/);
  });
  test('P14 classification', () => {
    const d = { strict_denied_codes_only: false, denied_codes_extend: [], allowed_codes_extend: [] };
    assert.equal(classify(404, d), 'denied');
    assert.equal(classify(422, d), 'denied');
    assert.equal(classify(404, { ...d, strict_denied_codes_only: true }), 'neither');
    assert.equal(classify(422, { ...d, strict_denied_codes_only: true, denied_codes_extend: [422] }), 'denied');
    assert.equal(classify(302, d), 'allowed');
    assert.equal(classify(500, d), 'neither');
    assert.equal(classify(409, { ...d, allowed_codes_extend: [409] }), 'allowed');
  });
  test('P16 statistics', () => {
    assert.equal(statistic([5, 1, 3], 'median'), 3);
    assert.equal(statistic([4, 1, 3, 2], 'median'), 2.5);
    assert.equal(statistic([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'p90'), 9);
    assert.equal(statistic([1, 9], 'max'), 9);
    assert.equal(statistic([1, 2], 'mean'), 1.5);
  });
  test('P11 matching: leading key columns in order; exact; unique; names', () => {
    const ix = { name: 'idx_posts_topic', unique: true, primary: false, definition: '', columns: ['topic_id', 'post_number'] };
    assert.ok(indexMatches(ix, { columns: ['topic_id'] }));
    assert.ok(indexMatches(ix, { columns: ['TOPIC_ID', 'post_number'], exact: true, unique: true }));
    assert.ok(!indexMatches(ix, { columns: ['post_number'] }));
    assert.ok(!indexMatches(ix, { columns: ['topic_id'], exact: true }));
    assert.ok(!indexMatches({ ...ix, unique: false }, { columns: ['topic_id'], unique: true }));
    assert.ok(indexMatches(ix, 'idx_posts_topic'));
  });
  test('P23 files: a valid PNG of about the size asked; text and binary sizes exact', () => {
    const png = makePng(1024);
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.ok(png.length > 900 && png.length < 1400, String(png.length));
    assert.equal(fileBytes({ content_type: 'application/octet-stream', file_size_kb: 50 }).length, 51_200);
    assert.equal(fileBytes({ content_type: 'text/plain', file_size_kb: 2 }).length, 2048);
  });
  test('published id capture rules', () => {
    assert.deepEqual(publishedIds(201, { id: 7, topic_id: 3, title: 'x', post_number: 1 }), { id: 7, topic_id: 3 });
    assert.deepEqual(publishedIds(200, { category: { id: 5, name: 'c', parent_category_id: 2 } }), { category_id: 5, category: { id: 5, name: 'c', parent_category_id: 2 }, parent_category_id: 2 });
    assert.deepEqual(publishedIds(200, { post: { id: 9, topic_id: 4 } }), { post_id: 9, post: { id: 9, topic_id: 4 }, topic_id: 4, id: 9 });
    assert.deepEqual(publishedIds(200, [{ id: 1 }, { id: 2 }]), { id: 1 });
    assert.deepEqual(publishedIds(404, { id: 1 }), {});
    assert.deepEqual(publishedIds(200, 'text'), {});
  });
  test('P05 entity lookup', () => {
    assert.deepEqual(entityOf({ id: 1 }, 'id'), { id: 1 });
    assert.deepEqual(entityOf({ item: { id: 1 } }, 'id'), { id: 1 });
    assert.equal(entityOf({ a: { id: 1 }, b: { id: 2 } }, 'id'), undefined);
    assert.deepEqual(entityOf({ customer: { lago_id: 'x' } }, 'lago_id', 'customer'), { lago_id: 'x' });
  });
  test('P17 sampling: explicit files and globs first, then directories round-robin; tail; limit', () => {
    const tree = ['app/', 'app/models/', 'app/models/a.rb', 'app/models/b.rb', 'app/controllers/', 'app/controllers/x.rb', 'app/controllers/y.rb', 'config/', 'config/routes.rb', 'node_modules/', 'node_modules/z.js', 'README.md'];
    assert.deepEqual(sampleFiles(tree, { files_to_sample: ['config/routes.rb', 'app/models/', 'app/controllers/'] }), ['config/routes.rb', 'app/models/a.rb', 'app/controllers/x.rb', 'app/models/b.rb', 'app/controllers/y.rb']);
    assert.deepEqual(sampleFiles(tree, { files_to_sample: ['app/**/*.rb'], sample_limit: 2 }), ['app/controllers/x.rb', 'app/controllers/y.rb']);
    assert.deepEqual(sampleFiles(tree, { files_to_sample: ['app/models/'], sample_strategy: 'tail', sample_limit: 1 }), ['app/models/b.rb']);
    assert.deepEqual(sampleFiles(tree, {}).slice(0, 2), ['README.md', 'config/routes.rb']);
    assert.deepEqual(sampleFiles(tree, { files_to_sample: ['missing/'] }), []);
    assert.equal(rubricText({ rubric_prompt: 'Score 0-5.', prompt: 'Look at the header.' } as never, undefined), 'Score 0-5.\n\nWhat to look for:\nLook at the header.');
  });
  test('cookies: Set-Cookie parsing, joined headers, deletion, paths', () => {
    const lines = splitJoinedSetCookie('sid=abc; Path=/; HttpOnly, pref=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/app');
    assert.equal(lines.length, 2);
    let jar = absorbCookies([], lines);
    assert.equal(cookieHeader(jar, '/app/x'), 'pref=1; sid=abc');
    assert.equal(cookieHeader(jar, '/other'), 'sid=abc');
    jar = absorbCookies(jar, ['sid=; Max-Age=0; Path=/']);
    assert.equal(cookieHeader(jar, '/'), '');
    assert.deepEqual(parseSetCookie('a="q"; path=/'), { name: 'a', value: 'q', path: '/', expires: undefined });
  });
  test('roles schema: one credential kind at least, seed needs send, send needs a token source', () => {
    const r = (x: unknown) => RolesSchema.safeParse({ admin: x }).success;
    assert.ok(r({ login: { path: '/login', body: { u: '{{username}}' } } }));
    assert.ok(r({ api_key: { headers: { 'X-Key': 'k' } } }));
    assert.ok(r({ seed: { command: 'echo t' }, send: { headers: { Authorization: 'Bearer {{token}}' } } }));
    assert.ok(r({ anonymous: true }));
    assert.ok(!r({}));
    assert.ok(!r({ seed: { command: 'echo t' } }));
    assert.ok(!r({ api_key: { headers: { a: 'b' } }, send: { headers: { a: 'b' } } }));
    assert.ok(!r({ login: { path: 'login' } }));
    assert.ok(!r({ login: { path: '/login', csrf: { path: '/csrf', token: { from: 'body', path: '$.t' } } } }));
  });
});
