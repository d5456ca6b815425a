import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CATALOGUE } from '../../src/primitives/catalogue';
import { P01 } from '../../src/primitives/p01-file-exists';
import { P02 } from '../../src/primitives/p02-file-content-match';
import { P03 } from '../../src/primitives/p03-file-count';
import { P12, serviceForContainer } from '../../src/primitives/p12-docker-exec';
import { findPrimitive } from '../../src/primitives/registry';
import { schemaIssues } from '../fixtures/primitives/harness';
import { corpusOpt, publishedTask } from '../helpers/published';

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const publishedDag = () => path.join(publishedTask('task_aoiwqoiq'), 'check', 'task_aoiwqoiq_e', 'evaluate', 'dag.json');
const MINE = ['P01', 'P02', 'P03', 'P04', 'P06', 'P07', 'P08', 'P09', 'P10', 'P12', 'P15'];

describe('catalogue', () => {
  test('every primitive is registered under its id and name, with a strict object schema', () => {
    for (const id of MINE) {
      const p = findPrimitive(id);
      assert.ok(p, id);
      assert.equal(findPrimitive(p.name), p);
      assert.ok(CATALOGUE.includes(p));
      const issues = schemaIssues(p, { __definitely_not_a_key: 1 });
      assert.ok(issues.some((i) => i.code === 'unrecognized_keys' && i.keys?.includes('__definitely_not_a_key')), `${id} rejects unknown keys`);
    }
  });
});

describe('published aoiwqoiq dag.json', () => {
  test('every usage of P01–P04, P06–P10, P12, P15 parses with our schemas', corpusOpt('task_aoiwqoiq'), () => {
    const dag = JSON.parse(fs.readFileSync(publishedDag(), 'utf8')) as { nodes: { id: string; primitive_chain: { type: string; inputs?: Record<string, unknown> }[] }[] };
    const failures: string[] = [];
    const counts: Record<string, number> = {};
    for (const node of dag.nodes) {
      node.primitive_chain.forEach((step, i) => {
        if (!MINE.includes(step.type)) return;
        counts[step.type] = (counts[step.type] ?? 0) + 1;
        const p = findPrimitive(step.type)!;
        for (const issue of schemaIssues(p, step.inputs ?? {})) failures.push(`${node.id}#${i} ${step.type} ${issue.path.join('.')}: ${issue.message}`);
      });
    }
    assert.deepEqual(failures, []);
    // the file holds these many usages; a silent drop of a type would show here
    assert.deepEqual(counts, { P01: 4, P02: 3, P03: 3, P04: 197, P06: 10, P07: 49, P08: 88, P09: 1, P10: 9, P12: 71, P15: 142 });
  });
});

describe('schemas of the file and exec primitives', () => {
  test('P01/P02 need path or path_any_of; P02 regex must compile', () => {
    assert.ok(schemaIssues(P01, { type: 'file' }).length > 0);
    assert.ok(schemaIssues(P01, { path: 'x', type: 'symlink' }).length > 0);
    assert.ok(schemaIssues(P02, { pattern: 'x' }).length > 0);
    assert.deepEqual(schemaIssues(P02, { path: 'x', match_type: 'regex', pattern: '(unclosed' })[0].path, ['pattern']);
    assert.deepEqual(schemaIssues(P02, { path: 'x', pattern: 'y', case_insensitive: true })[0].keys, ['case_insensitive']);
  });
  test('P03 bounds', () => {
    assert.deepEqual(schemaIssues(P03, { min_expected: 5, max_expected: 2 })[0].path, ['max_expected']);
    assert.ok(schemaIssues(P03, { min_expected: -1 }).length > 0);
  });
  test('P12 rejects conflicting keys', () => {
    assert.deepEqual(schemaIssues(P12, { command: 'x', timeout: 5, timeout_seconds: 5 })[0].path, ['timeout_seconds']);
    assert.deepEqual(schemaIssues(P12, { command: 'x', expect_exit_code: 0, expect_success: true })[0].path, ['expect_success']);
    assert.deepEqual(schemaIssues(P12, { command: 'x', capture_stdout_as: 'a b' })[0].path, ['capture_stdout_as']);
  });
  test('serviceForContainer', () => {
    const services = ['app', 'db', 'redis', 'app-worker'];
    assert.equal(serviceForContainer('db', services, 'app'), 'db');
    assert.equal(serviceForContainer('task_aoiwqoiq-app', services, 'app'), 'app');
    assert.equal(serviceForContainer('task_aoiwqoiq_db', services, 'app'), 'db');
    assert.equal(serviceForContainer('lago-smoke-redis', services, 'app'), 'redis');
    assert.equal(serviceForContainer('proj-app-worker', services, 'app'), 'app-worker', 'longest suffix wins');
    assert.equal(serviceForContainer('lago-smoke-api', services, 'app'), 'app', 'unknown → app service');
    assert.equal(serviceForContainer('redisdb', services, 'app'), 'app', 'suffix needs a - or _ separator');
    assert.equal(serviceForContainer('x-db', undefined, 'app'), 'app', 'no service list: only the app');
  });
});
