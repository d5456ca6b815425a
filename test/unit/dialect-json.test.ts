import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { P06 } from '../../src/primitives/p06-json-schema-match';
import { P07 } from '../../src/primitives/p07-json-value-assert';
import { P15 } from '../../src/primitives/p15-status-code-assert';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { checkDag } from '../../src/tasks/validate-dag';

/**
 * The P06/P07/P15 published dialects, one family of spellings at a time, on small DAGs of our own:
 * the canonical step each spelling becomes, the spelling record it leaves, and load issues.
 */

type Step = { type: string; inputs: Record<string, unknown>; notes?: Record<string, unknown> };
/** Issues of the P06/P07/P15 steps only: the fixture's P04 save keys belong to the HTTP dialect. */
function mine(dag: { nodes: unknown[] }, issues: { path: string }[]) {
  return issues.filter((i) => {
    const m = /nodes\[(\d+)\]\.primitive_chain\[(\d+)\]/.exec(i.path);
    const s = m ? (dag.nodes[+m[1]] as { primitive_chain: Step[] }).primitive_chain[+m[2]] : undefined;
    return !m || ['P06', 'P07', 'P15'].includes(String(s?.type));
  });
}
function norm(task: string, chain: unknown[], at = chain.length - 1) {
  const raw = { nodes: [{ id: 'N', prereqs: [], scoring: { method: 'binary', maxScore: 1, category: 'API' }, primitive_chain: chain }] };
  const r = normalizePublishedDag(raw, { task, file: 'dag.json' });
  const node = r.dag.nodes[0] as { primitive_chain: Step[] };
  const step = node.primitive_chain[at];
  const schema = { P06, P07, P15 }[step.type as 'P06' | 'P07' | 'P15'];
  const parsed = schema?.schema.safeParse(step.inputs);
  return { step, issues: r.issues, spellings: r.spellings.map((s) => s.spelling), schemaOk: parsed?.success ?? false, schemaError: parsed && !parsed.success ? JSON.stringify(parsed.error.issues[0]) : '' };
}
const p07 = (task: string, inputs: Record<string, unknown>, before: unknown[] = [{ type: 'P04', inputs: { path: '/x' } }]) => norm(task, [...before, { type: 'P07', inputs }]);
const one = (task: string, a: Record<string, unknown>, before?: unknown[]) => {
  const r = p07(task, { assertions: [a] }, before);
  assert.deepEqual(r.issues, [], JSON.stringify(r.issues));
  assert.ok(r.schemaOk, r.schemaError);
  return { list: r.step.inputs.assertions as Record<string, unknown>[], spellings: r.spellings, step: r.step };
};

describe('operator words (operator / op / match_type / match / type)', () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>[], string][] = [
    ['qmjfeopc', { path: '$.a', op: '==', expected: 1 }, [{ path: '$.a', operator: 'equals', expected: 1 }], 'assertions[].op: "=="'],
    ['qmjfeopc', { path: '$.a', op: '>=', expected: 2 }, [{ path: '$.a', operator: 'gte', expected: 2 }], 'assertions[].op: ">="'],
    ['ychlukjm', { path: '$.a', operator: 'ne', expected: 0 }, [{ path: '$.a', operator: 'not_equals', expected: 0 }], 'assertions[].operator: "ne"'],
    ['ychlukjm', { path: '$.a', operator: 'not_null', expected: true }, [{ path: '$.a', operator: 'exists' }], 'assertions[].operator: "not_null"'],
    ['jtbxfpny', { path: '$.a', match_type: 'greater_than', expected: 0 }, [{ path: '$.a', operator: 'gt', expected: 0 }], 'assertions[].match_type: "greater_than"'],
    ['jtbxfpny', { path: '$.a', match_type: 'exists', expected: null }, [{ path: '$.a', operator: 'exists' }], 'assertions[].match_type: "exists"'],
    ['lgzivily', { path: '$.a', match_type: 'min_value', expected: 1 }, [{ path: '$.a', operator: 'gte', expected: 1 }], 'assertions[].match_type: "min_value"'],
    ['rjhcjrst', { path: '$.a', expected: null, match: 'strict_null' }, [{ path: '$.a', operator: 'equals', expected: null }], 'assertions[].match: "strict_null"'],
    ['rjhcjrst', { path: '$.d', expected: '2026-02', match: 'starts_with' }, [{ path: '$.d', operator: 'starts_with', expected: '2026-02' }], 'assertions[].match: "starts_with"'],
    ['ubsmhopy', { path: '$.t', operator: 'is_null' }, [{ path: '$.t', operator: 'not_exists' }], 'assertions[].operator: "is_null"'],
    ['cvyocaao', { path: '$.k', operator: 'array_min_length', expected: 2 }, [{ path: '$.k', operator: 'min_length', expected: 2 }], 'assertions[].operator: "array_min_length"'],
    ['ghmkznee', { path: '$', operator: 'is_object' }, [{ path: '$', operator: 'is_type', expected: 'object' }], 'assertions[].operator: "is_object"'],
    ['ychlukjm', { path: '$.x', operator: 'one_of', expected: [null, ''] }, [{ path: '$.x', operator: 'in', expected: [null, ''], optional: true }], 'assertions[].operator: "one_of"'],
    ['ychlukjm', { path: '$.a.n', operator: 'eq_path', expected: '$.b.n' }, [{ path: '$.a.n', operator: 'equals', expected_path: '$.b.n' }], 'assertions[].operator: "eq_path"'],
    ['gmdnohlg', { path: '$.m', expected: null, operator: 'eq_or_empty' }, [{ path: '$.m', operator: 'empty', optional: true }], 'assertions[].operator: "eq_or_empty"'],
    ['ubsmhopy', { path: '$.data', operator: 'not_contains_id', expected: '{{cid}}' }, [{ path: '$.data', operator: 'no_element', where: [{ path: '$.id', operator: 'equals', expected: '{{cid}}' }] }], 'assertions[].operator: "not_contains_id"'],
    ['ubsmhopy', { path: '$', operator: 'contains_text', expected: '31 days' }, [{ path: '$', source: 'text', operator: 'contains', expected: '31 days' }], 'assertions[].operator: "contains_text"'],
    ['kmasmnil', { path: '$.o', expected: '{{org}}', type: 'exists' }, [{ path: '$.o', operator: 'exists' }, { path: '$.o', operator: 'equals', expected: '{{org}}' }], 'assertions[].type: "exists"'],
    ['rjhcjrst', { path: '$..code', match_type: 'any_match', expected: 'EUR' }, [{ path: '$..code', operator: 'equals', expected: 'EUR', matches: 'any' }], 'assertions[].match_type: "any_match"'],
    ['rjhcjrst', { path: '$.rate', expected_numeric: 1.08, tolerance: 0.01, match_type: 'numeric_string' }, [{ path: '$.rate', operator: 'numeric_string', expected: 1.08, tolerance: 0.01 }], 'assertions[].expected_numeric'],
    ['gmdnohlg', { path: '$.d', expected: '2030-12-31', operator: 'regex_match', pattern: '^\\d{4}' }, [{ path: '$.d', operator: 'regex', expected: '^\\d{4}' }], 'assertions[].expected beside pattern'],
    ['cvyocaao', { path: '$.iss', expected: 'http://h/realms/master', operator: 'contains', match: 'realms/master' }, [{ path: '$.iss', operator: 'contains', expected: 'realms/master' }], 'assertions[].match (substring)'],
  ];
  for (const [task, a, want, spelling] of cases) {
    test(`${task} ${JSON.stringify(a)}`, () => {
      const r = one(task, a);
      assert.deepEqual(r.list, want);
      assert.ok(r.spellings.includes(spelling), `${spelling} not in ${JSON.stringify(r.spellings)}`);
    });
  }
  test('an unknown operator word is a load issue naming the key', () => {
    const r = p07('x', { assertions: [{ path: '$.a', operator: 'roughly', expected: 1 }] });
    assert.deepEqual(r.issues.map((i) => [i.path, i.message]), [['nodes[0].primitive_chain[1].inputs.assertions[0].operator', 'unknown operator "roughly"']]);
  });
});

describe('assertion shapes and the expected_* family', () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>[]][] = [
    ['sgdoserd', { path: '$.t', exists: true, min_length: 26 }, [{ path: '$.t', operator: 'exists' }, { path: '$.t', operator: 'min_length', expected: 26 }]],
    ['sgdoserd', { path: '$.t', not_exists: true }, [{ path: '$.t', operator: 'not_exists' }]],
    ['sgdoserd', { path: '$.id', regex: '^api\\.' }, [{ path: '$.id', operator: 'regex', expected: '^api\\.' }]],
    ['sgdoserd', { path: '$', type: 'object_or_array' }, [{ path: '$', operator: 'is_type', expected: ['object', 'array'] }]],
    ['orghjavi', { path: '$.x', match_regex: 'max-age' }, [{ path: '$.x', operator: 'regex', expected: 'max-age' }]],
    ['rjhcjrst', { path: '$.x', expected_present: false }, [{ path: '$.x', operator: 'not_exists' }]],
    ['rjhcjrst', { path: '$.tok', predicate: 'string_min_length', value: 20 }, [{ path: '$.tok', operator: 'is_type', expected: 'string' }, { path: '$.tok', operator: 'min_length', expected: 20 }]],
    ['rjhcjrst', { path: '$.per_page', expected: 100, tolerance_max: 100 }, [{ path: '$.per_page', operator: 'lte', expected: 100 }]],
    ['rjhcjrst', { path: '$.n', type: 'integer', min_value: 0, optional: true }, [{ path: '$.n', optional: true, operator: 'is_type', expected: 'integer' }, { path: '$.n', optional: true, operator: 'gte', expected: 0 }]],
    ['rjhcjrst', { path: '$.a.from_code', expected: 'EUR', optional_aliases: ['from', 'x.from'] }, [{ path: '$.a.from_code', or_paths: ['$.a.from', '$.x.from'], operator: 'equals', expected: 'EUR' }]],
    ['xayqujrv', { path: '$.key', _regex: '^[a-f0-9]{40}$', _type: 'string' }, [{ path: '$.key', operator: 'is_type', expected: 'string' }, { path: '$.key', operator: 'regex', expected: '^[a-f0-9]{40}$' }]],
    ['dfhjkeb', { path: '$.u.id', expected_not_null: true }, [{ path: '$.u.id', operator: 'exists' }]],
    ['dfhjkeb', { path: '$.list', expected_length: 1 }, [{ path: '$.list', operator: 'length', expected: 1 }]],
    ['dfhjkeb', { path: '$.n', expected_gte: 1 }, [{ path: '$.n', operator: 'gte', expected: 1 }]],
    ['dfhjkeb', { path: '$.t', expected_in: ['a', 'b'] }, [{ path: '$.t', operator: 'in', expected: ['a', 'b'] }]],
    ['uybznoms', { path: '$.docs[*].v', expected_all_gt: 15 }, [{ path: '$.docs[*].v', operator: 'gt', expected: 15, matches: 'each' }]],
    ['uybznoms', { path: '$.docs[*].h', expected_all_false_or_absent: true }, [{ path: '$.docs[*].h', operator: 'equals', expected: false, matches: 'each', optional: true }]],
    ['uybznoms', { path: '$.rows[*].c', expected_contains: ['a', 'b'] }, [{ path: '$.rows[*].c', operator: 'contains_all', expected: ['a', 'b'], matches: 'list' }]],
    ['uybznoms', { path: '$.docs[*].n', expected_not_contains: 'T1' }, [{ path: '$.docs[*].n', operator: 'not_contains', expected: 'T1', matches: 'list' }]],
    ['uybznoms', { path: '$.docs', expected_sorted_by: 'name', order: 'desc' }, [{ path: '$.docs', operator: 'sorted', expected: { by: 'name', order: 'desc' } }]],
    ['uybznoms', { path: '$.gone', expected_absent: true }, [{ path: '$.gone', operator: 'absent' }]],
    ['uybznoms', { path: '$.docs.length', expected_equals: '$.total' }, [{ path: '$.docs.length', operator: 'equals', expected_path: '$.total' }]],
    ['orghjavi', { path: '$.body_text', expected_type: 'string', expected_min_length: 1 }, [{ path: '$', source: 'text', operator: 'is_type', expected: 'string' }, { path: '$', source: 'text', operator: 'min_length', expected: 1 }]],
    ['ychlukjm', { path: '$.urn', expected_pattern: 'urn:li:.*' }, [{ path: '$.urn', operator: 'regex', expected: 'urn:li:.*' }]],
    ['fpumriig', { path: '$.m[0]', contains: 'mandatory' }, [{ path: '$.m[0]', operator: 'contains', expected: 'mandatory' }]],
    ['cqfnbfay', { path: '$.x', equals: 3 }, [{ path: '$.x', operator: 'equals', expected: 3 }]],
  ];
  for (const [task, a, want] of cases) test(`${task} ${JSON.stringify(a)}`, () => assert.deepEqual(one(task, a).list, want));
  test('an unknown assertion key is a load issue; a nested note is kept as a step note', () => {
    const r = p07('x', { assertions: [{ path: '$.a', expected: 1, frobnicate: true, _round26_test_bug_fix: 'why' }] });
    assert.deepEqual(r.issues.map((i) => i.message), ['unknown assertion key "frobnicate"']);
    assert.deepEqual(r.step.notes, { _assertion_notes: { 'inputs.assertions[0]': { _round26_test_bug_fix: 'why' } } });
  });
});

describe('expected sentinels are read only in the forks that used them', () => {
  test('jzssnoqp / kmasmnil / pkvwdnhj / dfhjkeb words', () => {
    assert.deepEqual(one('jzssnoqp', { path: '$.id', expected: 'is_integer' }).list, [{ path: '$.id', operator: 'is_type', expected: 'integer' }]);
    assert.deepEqual(one('jzssnoqp', { path: '$.u', expected: 'regex:^[0-9a-f]+$' }).list, [{ path: '$.u', operator: 'regex', expected: '^[0-9a-f]+$' }]);
    assert.deepEqual(one('kmasmnil', { path: '$.id', expected: 'exists' }).list, [{ path: '$.id', operator: 'exists' }]);
    assert.deepEqual(one('kmasmnil', { path: '$.d', expected: 'has_exactly_keys', keys: ['a', 'b'] }).list, [{ path: '$.d', operator: 'has_exactly_keys', expected: ['a', 'b'] }]);
    assert.deepEqual(one('kmasmnil', { path: '$.id', expected: 'matches_regex', pattern: '^[a-z]{3}$' }).list, [{ path: '$.id', operator: 'regex', expected: '^[a-z]{3}$' }]);
    assert.deepEqual(one('pkvwdnhj', { path: '$.m', expected: 'contains:exists' }).list, [{ path: '$.m', operator: 'contains', expected: 'exists' }]);
    assert.deepEqual(one('pkvwdnhj', { path: '$.r', expected: 'array' }).list, [{ path: '$.r', operator: 'is_type', expected: 'array' }]);
    assert.deepEqual(one('dfhjkeb', { path: '$.c', expected: 'not_null' }).list, [{ path: '$.c', operator: 'exists' }]);
  });
  test('elsewhere the same strings are values', () => {
    assert.deepEqual(one('aoiwqoiq', { path: '$.s', expected: 'not_null' }).list, [{ path: '$.s', operator: 'equals', expected: 'not_null' }]);
    assert.deepEqual(one('kmasmnil', { path: '$.type', expected: 'number' }).list, [{ path: '$.type', operator: 'equals', expected: 'number' }]);
  });
});

describe('captures', () => {
  test('capture_as / store_as / save_as / operator store_as + key; a path-only assertion must exist', () => {
    assert.deepEqual(one('ygamciur', { path: '$.data.id', operator: 'exists', capture_as: 'wsId' }).list, [{ path: '$.data.id', operator: 'exists', capture_as: 'wsId' }]);
    const s = one('dfhjkeb', { path: '$.c.id', store_as: 'cid' });
    assert.deepEqual(s.list, [{ path: '$.c.id', operator: 'exists', capture_as: 'cid' }]);
    assert.ok(s.spellings.includes('assertions[].store_as') && s.spellings.includes('assertions[].(no check)'));
    assert.deepEqual(one('jtbxfpny', { path: '$.r[0].id', match_type: 'exists', save_as: 'dbid' }).list, [{ path: '$.r[0].id', operator: 'exists', capture_as: 'dbid' }]);
    assert.deepEqual(one('cvyocaao', { path: '$.access_token', operator: 'store_as', key: 'tok' }).list, [{ path: '$.access_token', operator: 'exists', capture_as: 'tok' }]);
  });
  test('the fixture DAG: array_find + capture_field, or_path alternatives, and the capture used by the next step', () => {
    const raw = JSON.parse(readFileSync(resolve(__dirname, '../../../test/fixtures/published-dialects/json-checks.dag.json'), 'utf8'));
    const r = normalizePublishedDag(raw, { task: 'ygamciur', file: 'json-checks.dag.json' });
    assert.deepEqual(mine(r.dag, r.issues), []);
    const c = checkDag(r.dag, 'json-checks.dag.json');
    assert.deepEqual(mine(r.dag, c.issues), []);
    const step = (r.dag.nodes[2] as { primitive_chain: Step[] }).primitive_chain[1];
    assert.deepEqual(step.inputs, {
      assertions: [{ path: '$.data', operator: 'has_element', where: [{ path: '$.name', operator: 'contains', expected: 'Dev' }, { path: '$.active', operator: 'equals', expected: true }], capture_as: 'roleId', capture_path: '$.id' }],
      any_of: [{ path: '$.data', operator: 'is_type', expected: 'array' }, { path: '$.error', operator: 'contains', expected: 'already' }],
    });
  });
});

describe('targets: headers, text, status, saved responses, command results, SQL rows', () => {
  test('headers in every spelling, lower-cased', () => {
    for (const [task, p, name] of [['sgdoserd', 'headers.Token', 'token'], ['gmdnohlg', '$.headers.OC-ETag', 'oc-etag'], ['orghjavi', "$.headers['WWW-Authenticate']", 'www-authenticate'], ['pkvwdnhj', '$._headers.Content-Type', 'content-type']]) {
      assert.deepEqual(one(task, { path: p, exists: true }).list, [{ path: `$['${name}']`, source: 'headers', operator: 'exists' }], p);
    }
  });
  test('$.status_code is the status only in the forks whose response carried it; elsewhere a body field', () => {
    assert.deepEqual(one('gmdnohlg', { path: '$.status_code', operator: 'in', expected: [200, 302] }).list, [{ path: '$', source: 'status', operator: 'in', expected: [200, 302] }]);
    assert.deepEqual(one('sgdoserd', { path: '$.status_code', expected: 404 }).list, [{ path: '$.status_code', operator: 'equals', expected: 404 }]);
  });
  test('gmdnohlg $.api.… also tries $.ocs.…; egsszeqg __meta fields; key[?f=v] filters', () => {
    assert.deepEqual(one('gmdnohlg', { path: '$.api.data.id', operator: 'exists' }).list, [{ path: '$.api.data.id', or_paths: ['$.ocs.data.id'], operator: 'exists' }]);
    assert.deepEqual(one('egsszeqg', { path: '$.__meta.response_wrapper', expected: 'data[]', tolerance: null }).list, [{ path: '$', source: 'envelope', operator: 'equals', expected: 'data[]' }]);
    assert.deepEqual(one('egsszeqg', { path: '$.__meta.content_type', expected: 'text/html' }).list, [{ path: '$', source: 'media_type', operator: 'equals', expected: 'text/html' }]);
    assert.deepEqual(one('egsszeqg', { path: '$.data[?id={{kid}}].label', expected: 'L' }).list, [{ path: "$.data[?(@.id=='{{kid}}')].label", operator: 'equals', expected: 'L' }]);
  });
  test('saved responses: "<name>.$…" and "$.<name>…" read the saved document', () => {
    const raw = JSON.parse(readFileSync(resolve(__dirname, '../../../test/fixtures/published-dialects/json-checks.dag.json'), 'utf8'));
    const r = normalizePublishedDag(raw, { task: 'rjhcjrst', file: 'f' });
    const s = (r.dag.nodes[0] as { primitive_chain: Step[] }).primitive_chain[3];
    assert.deepEqual(s.inputs.assertions, [
      { path: '$.meta.total', body: '{{left}}', operator: 'equals', expected_path: '$.meta.total', expected_body: '{{right}}' },
      { path: '$.id', body: '{{right}}', operator: 'equals', expected_path: '$.id', expected_body: '{{left}}' },
      { path: "$['x-trace']", source: 'headers', operator: 'exists' },
      { path: "$['x-trace']", source: 'headers', operator: 'min_length', expected: 8 },
      { path: '$.items[*].name', operator: 'not_contains', expected: 'secret', matches: 'each' },
    ]);
    assert.deepEqual(s.notes, { _assertion_notes: { 'inputs.assertions[3]': { _check: 'no leak' } } });
  });
  test('after a P12: the command result ({{previous}}) or its stdout as JSON; P15 command_exit_code becomes a P07', () => {
    const raw = JSON.parse(readFileSync(resolve(__dirname, '../../../test/fixtures/published-dialects/json-checks.dag.json'), 'utf8'));
    const r = normalizePublishedDag(raw, { task: 'ychlukjm', file: 'f' });
    assert.deepEqual(mine(r.dag, r.issues), []);
    const chain = (r.dag.nodes[1] as { primitive_chain: Step[] }).primitive_chain;
    assert.deepEqual(chain[1].inputs, { body: '{{previous}}', assertions: [{ path: '$.exit_code', operator: 'equals', expected: 0 }, { path: '$.output', operator: 'regex', expected: 'usage', ignore_case: true }] });
    assert.deepEqual(chain[3].inputs, { body: '{{previous.stdout}}', parse_json: true, assertions: [{ path: '$.hp', operator: 'gt', expected: 0 }] });
    assert.deepEqual(chain[4], { type: 'P07', inputs: { body: '{{previous}}', assertions: [{ path: '$.exit_code', operator: 'equals', expected: 0 }] } });
    assert.deepEqual(mine(r.dag, checkDag(r.dag, 'f').issues), []);
  });
  test('after a P08 in the first-row forks: $.cnt → $.rows[0].cnt, $[1].v → $.rows[1].v; other forks keep $.rows', () => {
    const sql = [{ type: 'P08', inputs: { sql: 'SELECT 1' } }];
    assert.deepEqual(one('ychlukjm', { path: '$.cnt', operator: 'gt', expected: 0 }, sql).list, [{ path: '$.rows[0].cnt', operator: 'gt', expected: 0 }]);
    assert.deepEqual(one('ychlukjm', { path: '$[1].v', operator: 'exists' }, sql).list, [{ path: '$.rows[1].v', operator: 'exists' }]);
    assert.deepEqual(one('jzssnoqp', { path: '$.rows[0].x', operator: 'exists' }, sql).list, [{ path: '$.rows[0].x', operator: 'exists' }]);
    assert.deepEqual(one('mjobbzsi', { path: '$.output_int', operator: 'gte', expected: 6 }, [{ type: 'P12', inputs: { command: 'x' } }]).list, [{ path: '$.stdout', as_number: true, operator: 'gte', expected: 6 }]);
  });
});

describe('step-level shapes', () => {
  test('mnmtxiwb assertion shorthand: json_path_exists, regex_match, jwt_decode', () => {
    assert.deepEqual(p07('mnmtxiwb', { assertion: 'json_path_exists', path: '$.t' }).step.inputs, { assertions: [{ path: '$.t', operator: 'exists' }] });
    assert.deepEqual(p07('mnmtxiwb', { assertion: 'regex_match', path: '$.t', pattern: '^eyJ' }).step.inputs, { assertions: [{ path: '$.t', operator: 'regex', expected: '^eyJ' }] });
    const j = p07('mnmtxiwb', { assertion: 'jwt_decode', algorithm: 'HS256', claims: { sub: 'uuid_format', exp: 'future_timestamp_3h' } });
    assert.ok(j.schemaOk, j.schemaError);
    assert.deepEqual(j.step.inputs, { assertions: [{ path: '$.data.loginUser.token', operator: 'jwt', expected: { algorithm: 'HS256', claims: { sub: 'uuid', exp: { future_within_seconds: 10800 } } } }] });
    assert.ok(j.spellings.includes('assertion: "jwt_decode"'));
    assert.deepEqual(p07('mnmtxiwb', { assertion: 'jwt_decode', claims: { exp: 'someday' } }).issues.map((i) => i.message), ['unknown claim check "someday"']);
  });
  test('ychlukjm: one assertion at the step level', () => {
    const r = p07('ychlukjm', { path: '$.n', operator: 'gte', expected: 1, _round26_strict_fix: 'note' });
    assert.deepEqual(r.step, { type: 'P07', inputs: { assertions: [{ path: '$.n', operator: 'gte', expected: 1 }] }, notes: { _round26_strict_fix: 'note' } });
  });
  test('assertions_any_of, header_assertions, accept_non_json, allow_empty_body', () => {
    const r = p07('xayqujrv', { assertions: [], assertions_any_of: [{ path: '$', _type: 'array' }], allow_empty_body: true, accept_non_json: true });
    assert.ok(r.schemaOk, r.schemaError);
    assert.deepEqual(r.step.inputs, { allow_non_json: true, assertions: [], any_of: [{ path: '$', operator: 'is_type', expected: 'array' }], allow_empty_body: true });
    const h = p07('rjhcjrst', { header_assertions: [{ header: 'Content-Type', match_type: 'regex', pattern: '^application/pdf' }, { header: 'Content-Disposition', expected: 'Attachment' }] });
    assert.deepEqual(h.step.inputs.assertions, [
      { source: 'headers', path: "$['content-type']", operator: 'regex', expected: '^application/pdf' },
      { source: 'headers', path: "$['content-disposition']", operator: 'contains', expected: 'Attachment', ignore_case: true },
    ]);
  });
  test('response: "{{step_N}}" naming the latest response is the default subject; another step is an issue; a variable becomes body', () => {
    const before = [{ type: 'P13', inputs: { role: 'admin' } }, { type: 'P04', inputs: { path: '/a' } }, { type: 'P15', inputs: { response: '{{step_1}}', expected_status: 200 } }];
    const ok = norm('gmdnohlg', [...before, { type: 'P07', inputs: { response: '{{step_1}}', assertions: [{ path: '$.a', operator: 'exists' }] } }]);
    assert.deepEqual(ok.issues, []);
    assert.deepEqual(ok.step.inputs, { assertions: [{ path: '$.a', operator: 'exists' }] });
    assert.deepEqual((norm('gmdnohlg', before, 2).step.inputs), { expected_status: 200 });
    const bad = norm('gmdnohlg', [...before, { type: 'P07', inputs: { response: '{{step_0}}', assertions: [] } }]);
    assert.match(bad.issues[0].message, /not the chain's latest response \(step 1, P04\)/);
    assert.deepEqual(p07('cqfnbfay', { response: '{{clone}}', assertions: [{ path: '$.id', op: 'not_null' }] }).step.inputs, { body: '{{clone}}', assertions: [{ path: '$.id', operator: 'exists' }] });
  });
});

describe('iyjruvfz and ididetxj spellings', () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>[]][] = [
    ['iyjruvfz', { header: 'Location', expected_contains_one_of: ['/login', '/auth'], alternative_status: [200, 308], comment: 'c' }, [{ path: "$['location']", source: 'headers', or_status: [200, 308], operator: 'contains_any', expected: ['/login', '/auth'] }]],
    ['iyjruvfz', { header: 'Set-Cookie', expected_regex_all: ['HttpOnly', 'Path=/'] }, [{ path: "$['set-cookie']", source: 'headers', operator: 'regex', expected: 'HttpOnly' }, { path: "$['set-cookie']", source: 'headers', operator: 'regex', expected: 'Path=/' }]],
    ['iyjruvfz', { path: '$.data.uid', expected_pattern: '^[a-z]+$', store_as: '${PREV_UID}' }, [{ path: '$.data.uid', operator: 'regex', expected: '^[a-z]+$', capture_as: 'PREV_UID' }]],
    ['iyjruvfz', { path: '$.data[*].id', expected_includes: '${EVENT_TYPE_ID}' }, [{ path: '$.data[*].id', operator: 'contains', expected: '{{EVENT_TYPE_ID}}', matches: 'list' }]],
    ['iyjruvfz', { path: '$[0]', expected_one_of_keys: ['result', 'error'] }, [{ path: '$[0]', operator: 'has_any_key', expected: ['result', 'error'] }]],
    ['iyjruvfz', { min_response_size: 1000 }, [{ path: '$', source: 'size', operator: 'gte', expected: 1000 }]],
    ['iyjruvfz', { path: '$.exp', expected_in_range_seconds_from_now: [3500, 3700] }, [{ path: '$.exp', operator: 'seconds_from_now', expected: [3500, 3700] }]],
    ['iyjruvfz', { path: '$.data', expected_type: 'object', expected_max_length: 0 }, [{ path: '$.data', operator: 'is_type', expected: 'object' }, { path: '$.data', operator: 'max_length', expected: 0 }]],
    ['iyjruvfz', { path: '$.data', expected_keys_match_regex: '^\\d{4}$' }, [{ path: '$.data.*~', operator: 'regex', expected: '^\\d{4}$', matches: 'each', optional: true }]],
    ['iyjruvfz', { path: '$.data.uid', expected_equals_previous_uid: true }, [{ path: '$.data.uid', operator: 'equals', expected_path: '$.data.uid', expected_response: 1 }]],
    ['iyjruvfz', { path: '$.h', expected_one_of: [15, 16] }, [{ path: '$.h', operator: 'in', expected: [15, 16] }]],
    ['iyjruvfz', { path: ['$.data.uid', '$.data[0].uid'], expected_type: 'string' }, [{ path: '$.data.uid', or_paths: ['$.data[0].uid'], operator: 'is_type', expected: 'string' }]],
    ['iyjruvfz', { path: '$._response_time_ms', expected_max: 5000 }, [{ path: '$', source: 'elapsed_ms', operator: 'lte', expected: 5000 }]],
    ['hhrdixum', { path_any_of: ['$.detail', '$.errors'], exists: true, regex_in_str: 'locked' }, [{ path: '$.detail', or_paths: ['$.errors'], operator: 'exists' }, { path: '$.detail', or_paths: ['$.errors'], operator: 'regex', expected: 'locked', stringify: true }]],
    ['hhrdixum', { path: '$.price', expected: '5.000000', tolerance_str: true }, [{ path: '$.price', operator: 'equals', expected: 5, as_number: true, tolerance: 0.000001 }]],
    ['hhrdixum', { path: '$', deep_equal: {} }, [{ path: '$', operator: 'equals', expected: {} }]],
    ['kmasmnil', { path: '$.status_codes_match', expected: true }, [{ path: '$', source: 'status', operator: 'equals', expected_path: '$', expected_response: 1 }]],
  ];
  for (const [task, a, want] of cases) test(`${task} ${JSON.stringify(a)}`, () => assert.deepEqual(one(task, a).list, want));
  test('gavmyneb: assert words, $.body.…, empty_or_absent, array_min_length, alternate_paths; row values after a SQL step', () => {
    assert.deepEqual(one('gavmyneb', { path: '$.body.status', assert: 'equals', value: 'ok', expected_present: true }).list, [{ path: '$.status', operator: 'exists' }, { path: '$.status', operator: 'equals', expected: 'ok' }]);
    assert.deepEqual(one('gavmyneb', { path: '$.errors', empty_or_absent: true }).list, [{ path: '$.errors', operator: 'empty', optional: true }]);
    assert.deepEqual(one('gavmyneb', { path: '$', array_min_length: 3 }).list, [{ path: '$', operator: 'min_length', expected: 3 }]);
    assert.deepEqual(one('gavmyneb', { path: '$.s', expected: 'u', alternate_paths: ['$.c.s'] }).list, [{ path: '$.s', or_paths: ['$.c.s'], operator: 'equals', expected: 'u' }]);
    const sql = [{ type: 'P08', inputs: { sql: 'SELECT DISTINCT visibility_level FROM attachments' } }];
    assert.deepEqual(one('gavmyneb', { path: '$.rows', assert: 'subset_of', allowed: ['a', 'b'] }, sql).list, [{ path: '$.rows[*].visibility_level', operator: 'in', expected: ['a', 'b'], matches: 'each' }]);
    const grouped = [{ type: 'P08', inputs: { sql: 'SELECT workflow_state, COUNT(*) c FROM media GROUP BY 1' } }];
    assert.deepEqual(one('gavmyneb', { path: '$.rows', assert: 'contains_state', values: ['active'] }, grouped).list, [{ path: '$.rows[*].workflow_state', operator: 'contains_all', expected: ['active'], matches: 'list' }]);
    assert.deepEqual(p07('gavmyneb', { assertions: [{ path: '$.rows', assert: 'subset_of', allowed: ['a'] }] }).issues.map((i) => i.message), ['subset_of reads the rows of a SQL step before it']);
  });
  test('a comment-only assertion checks nothing; ididetxj or_header is an alternative', () => {
    const r = p07('iyjruvfz', { assertions: [{ comment: 'placeholder' }] });
    assert.deepEqual(r.step.inputs, { assertions: [] });
    assert.deepEqual(r.step.notes, { _assertion_notes: { 'inputs.assertions[0]': { comment: 'placeholder' } } });
    const h = p07('ididetxj', { assertions: [{ or_path: '$.data', exists: true }, { or_header: 'Date', exists: true }] });
    assert.deepEqual(h.step.inputs, { assertions: [], any_of: [{ path: '$.data', operator: 'exists' }, { path: "$['date']", source: 'headers', operator: 'exists' }] });
  });
});

describe('P06 and P15 dialects', () => {
  test('P06 field_types, root, response, _check_response_header; egsszeqg unwraps data', () => {
    const r = norm('ygamciur', [{ type: 'P04', inputs: { path: '/x' } }, { type: 'P06', inputs: { required_fields: ['id'], field_types: { id: 'int', tags: 'list' }, root: '$.data' } }]);
    assert.deepEqual(r.issues, []);
    assert.ok(r.schemaOk, r.schemaError);
    assert.deepEqual(r.step.inputs, { required_fields: ['id'], field_types: { id: 'integer', tags: 'array' }, root: 'data' });
    const h = norm('xayqujrv', [{ type: 'P04', inputs: { path: '/x' } }, { type: 'P06', inputs: { required_fields: [], _check_response_header: 'X-App-Version' } }]);
    assert.deepEqual(h.step.inputs, { required_fields: [], required_headers: ['X-App-Version'] });
    const p = norm('pkvwdnhj', [{ type: 'P04', inputs: { path: '/x' } }, { type: 'P06', inputs: { response: '{{from_P04}}', required_fields: ['a'], field_types: {} } }]);
    assert.deepEqual(p.step.inputs, { required_fields: ['a'], field_types: {} });
    assert.deepEqual(norm('egsszeqg', [{ type: 'P04', inputs: { path: '/x' } }, { type: 'P06', inputs: { required_fields: ['m'] } }]).step.inputs, { required_fields: ['m'], unwrap: ['data'] });
    assert.deepEqual(norm('x', [{ type: 'P06', inputs: { required_fields: ['a'], field_types: { a: 'uuid' } } }]).issues.map((i) => i.message), ['unknown type name "uuid"']);
    assert.deepEqual(norm('ididetxj', [{ type: 'P04', inputs: { path: '/x' } }, { type: 'P06', inputs: { required_keys_min_count: 10 } }]).step.inputs, { min_keys: 10, required_fields: [] });
  });
  test('P15 command_exit_code needs a P12 before it', () => {
    const r = norm('sgdoserd', [{ type: 'P04', inputs: { path: '/x' } }, { type: 'P15', inputs: { command_exit_code: 0 } }]);
    assert.deepEqual(r.issues.map((i) => i.message), ['command_exit_code needs a P12 before it in the chain']);
  });
});
