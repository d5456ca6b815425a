import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { formatIssue, type InputIssue } from '../../src/errors';
import { loadNativeTask } from '../../src/tasks/load-native';
import { checkPlaceholders } from '../../src/tasks/placeholders';
import { checkDag } from '../../src/tasks/validate-dag';
import { runNode } from '../../src/primitives/run-chain';
import { httpEnv } from '../fixtures/primitives/harness';

let tmp: string;
let n = 0;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sb-malformed-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

const step = (type: string, inputs: Record<string, unknown>) => ({ type, inputs });
const node = (id: string, prereqs: string[], chain: unknown[]) => ({ id, prereqs, primitive_chain: chain, scoring: { category: 'API', subcategory: 'X', method: 'binary', maxScore: 1 } });
const health = (id: string, prereqs: string[] = []) => node(id, prereqs, [step('P04', { path: '/health' }), step('P15', { expected_status: 200 })]);

/** Write a native task folder around `nodes` and load it the way every command does. */
function load(nodes: unknown[], extra: Record<string, unknown> = {}): InputIssue[] {
  const dir = join(tmp, `t${++n}`);
  mkdirSync(join(dir, 'evaluation'), { recursive: true });
  mkdirSync(join(dir, 'environment'), { recursive: true });
  writeFileSync(join(dir, 'task.md'), '# PRD\n');
  writeFileSync(join(dir, 'prompt.md'), 'Build it.\n');
  writeFileSync(join(dir, 'environment', 'docker-compose.yml'), 'services:\n  app:\n    image: x\n');
  writeFileSync(join(dir, 'evaluation', 'dag.json'), JSON.stringify({ nodes }));
  writeFileSync(
    join(dir, 'task.yaml'),
    YAML.stringify({ id: `t${n}`, title: 'malformed', environment: { compose: 'environment/docker-compose.yml', appService: 'app', appPort: 8080 }, evaluation: { dag: 'evaluation/dag.json' }, variables: { owner_email: 'o@x.test' }, ...extra }),
  );
  return loadNativeTask(dir).issues;
}

/** Exactly one issue, naming the node and the JSON path. */
function one(issues: InputIssue[], nodeId: string, path: string, message: RegExp): void {
  assert.equal(issues.length, 1, issues.map(formatIssue).join('\n'));
  assert.equal(issues[0].nodeId, nodeId);
  assert.equal(issues[0].path, path);
  assert.match(issues[0].message, message);
  assert.match(formatIssue(issues[0]), new RegExp(`dag\\.json: ${path.replace(/[[\]().]/g, '\\$&')} \\(node ${nodeId}\\): `));
}

describe('malformed DAGs: one clear error naming the node and the JSON path (acceptance 5)', () => {
  test('a cycle', () => {
    one(load([health('A', ['C']), health('B', ['A']), health('C', ['B'])]), 'A', 'nodes[0].prereqs', /dependency cycle: A -> (B -> C|C -> B) -> A/);
  });
  test('an unknown prereq', () => {
    one(load([health('A'), health('B', ['A', 'NOPE'])]), 'B', 'nodes[1].prereqs[1]', /unknown prereq "NOPE"/);
  });
  test('an unknown primitive', () => {
    one(load([health('A'), node('B', ['A'], [step('P99', {})])]), 'B', 'nodes[1].primitive_chain[0].type', /unknown primitive type "P99"/);
  });
  test('a wrong input type', () => {
    one(load([node('A', [], [step('P16', { path: '/x', samples: 'many' })])]), 'A', 'nodes[0].primitive_chain[0].inputs.samples', /number/i);
  });
  test('an unresolvable placeholder', () => {
    one(
      load([health('A'), node('B', ['A'], [step('P13', { role: 'admin' }), step('P14', { action: 'DELETE /tickets/{{ticket_id}}', expected_result: 'denied' })])]),
      'B',
      'nodes[1].primitive_chain[1].inputs.action',
      /placeholder \{\{ticket_id\}\} is produced by no earlier step of this chain, none of its prereqs \(A\), no task variable and no builtin/,
    );
  });
});

describe('placeholders that do resolve at load time', () => {
  test('captures of transitive prereqs, store_as objects, capture_stdout_as, earlier steps, variables and builtins', () => {
    const issues = load([
      node('CREATE', [], [step('P04', { method: 'POST', path: '/tickets', body: { owner: '{{owner_email}}', run: '{{run_id}}' }, capture: { ticket_id: '$.id' } })]),
      node('MID', ['CREATE'], [step('P08', { sql: 'SELECT * FROM tickets WHERE id = {{ticket_id}}', store_as: 'row' }), step('P12', { command: 'echo ok', capture_stdout_as: 'token' })]),
      node('USE', ['MID'], [
        step('P04', { path: '/tickets/{{ticket_id}}?r={{row.id}}&t={{token}}&c={{CREATE.ticket_id}}', headers: { 'X-Base': '{{base_url}}' } }),
        step('P04', { method: 'POST', path: '/x', headers: { 'X-CSRF': '{{previous.csrf}}' } }),
        step('P07', { assertions: [{ path: '$.status', expected: '{{last_status}}' }] }),
      ]),
    ]);
    assert.deepEqual(issues, []);
    const wrongNs = load([
      node('CREATE', [], [step('P04', { method: 'POST', path: '/tickets', capture: { ticket_id: '$.id' } })]),
      node('USE', ['CREATE'], [step('P04', { path: '/t/{{CREATE.other}}' })]),
    ]);
    one(wrongNs, 'USE', 'nodes[1].primitive_chain[0].inputs.path', /\{\{CREATE\.other\}\}/);
  });

  test('a capture of a node that is not an ancestor does not count; nor does a later step of the same chain', () => {
    const dag = {
      nodes: [
        node('CREATE', [], [step('P04', { method: 'POST', path: '/t', capture: { tid: '$.id' } })]),
        node('SIBLING', [], [step('P04', { path: '/t/{{tid}}' })]),
        node('SELF', [], [step('P04', { path: '/t/{{later}}' }), step('P04', { path: '/t', capture: { later: '$.id' } })]),
      ],
    };
    const c = checkDag(dag, 'dag.json');
    const issues = checkPlaceholders(c.dag, dag.nodes, { file: 'dag.json', variables: [] });
    assert.deepEqual(issues.map((i) => [i.nodeId, i.path]), [['SIBLING', 'nodes[1].primitive_chain[0].inputs.path'], ['SELF', 'nodes[2].primitive_chain[0].inputs.path']]);
    // with the published id capture, id-like names may come from an earlier HTTP response
    const compat = checkPlaceholders(c.dag, dag.nodes, { file: 'dag.json', variables: [], publishedIdCapture: true });
    assert.deepEqual(compat.map((i) => i.nodeId), ['SIBLING', 'SELF'], 'tid / later are not id-like');
  });

  test('compat.unresolved_placeholders: runtime turns the error into a note; the step still fails at run time naming the variable', async () => {
    const issues = load([node('A', [], [step('P04', { path: '/t/{{nope}}' })])], { compat: { unresolved_placeholders: 'runtime' } });
    assert.deepEqual(issues, []);
    const c = checkDag({ nodes: [node('A', [], [step('P04', { path: '/t/{{nope}}' })])] }, 'dag.json');
    const run = await runNode(c.dag.nodes[0], httpEnv('http://127.0.0.1:9'), { judgeEnabled: false, vars: {} });
    assert.equal(run.status, 'FAILED');
    assert.match(run.message, /unresolved placeholder: \{\{nope\}\}/);
  });

  test('an undeclared role is not a load-time error (P13 fails at run time, naming the role)', async () => {
    const c = checkDag({ nodes: [node('A', [], [step('P13', { role: 'admin' })])] }, 'dag.json');
    const run = await runNode(c.dag.nodes[0], httpEnv('http://127.0.0.1:9'), { judgeEnabled: false, vars: {} });
    assert.equal(run.status, 'FAILED');
    assert.match(run.message, /role "admin" has no credentials declared/);
  });
});
