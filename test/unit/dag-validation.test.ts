import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { checkDag } from '../../src/tasks/validate-dag';
import { loadAnyTask } from '../../src/tasks/load';
import { repoRoot } from '../../src/paths';
import { corpusOpt, publishedTask } from '../helpers/published';

const node = (id: string, prereqs: string[] = [], extra: Record<string, unknown> = {}) => ({
  id,
  prereqs,
  primitive_chain: [{ type: 'P04', inputs: { method: 'GET', path: '/health' } }],
  scoring: { category: 'Deployment', subcategory: 'Health', method: 'binary', maxScore: 1 },
  ...extra,
});

function issuesOf(nodes: unknown[]) {
  return checkDag({ nodes }, 'dag.json').issues;
}

test('a valid DAG has no issues and keeps file order', () => {
  const r = checkDag({ nodes: [node('A'), node('B', ['A'])] }, 'dag.json');
  assert.deepEqual(r.issues, []);
  assert.deepEqual(r.dag.nodes.map((n) => n.id), ['A', 'B']);
});

test('cycle: named with the node and the path of its prereqs', () => {
  const issues = issuesOf([node('A', ['C']), node('B', ['A']), node('C', ['B'])]);
  assert.equal(issues.length, 1);
  assert.match(issues[0].message, /dependency cycle: A -> C -> B -> A|cycle/);
  assert.equal(issues[0].nodeId, 'A');
  assert.equal(issues[0].path, 'nodes[0].prereqs');
});

test('unknown prereq: node id and JSON path of the bad entry', () => {
  const [i] = issuesOf([node('A'), node('B', ['A', 'NOPE'])]);
  assert.deepEqual({ path: i.path, nodeId: i.nodeId }, { path: 'nodes[1].prereqs[1]', nodeId: 'B' });
  assert.match(i.message, /unknown prereq "NOPE"/);
});

test('unknown primitive type is an error; a published type not yet built is only counted', () => {
  const r = checkDag({ nodes: [node('A', [], { primitive_chain: [{ type: 'P99', inputs: {} }] }), node('B', [], { primitive_chain: [{ type: 'P25', inputs: {} }] })] }, 'dag.json');
  assert.equal(r.issues.length, 1);
  assert.equal(r.issues[0].path, 'nodes[0].primitive_chain[0].type');
  assert.match(r.issues[0].message, /unknown primitive type "P99"/);
  assert.deepEqual(r.unsupported, { P25: 1 });
});

test('wrong input type and unknown input key: path into the inputs', () => {
  const issues = issuesOf([
    node('A', [], { primitive_chain: [{ type: 'P04', inputs: { method: 'GET', path: '/', timeout: 'soon' } }] }),
    node('B', [], { primitive_chain: [{ type: 'P04', inputs: { method: 'GET', path: '/', retries: 3 } }] }),
  ]);
  assert.equal(issues.length, 2);
  assert.equal(issues[0].path, 'nodes[0].primitive_chain[0].inputs.timeout');
  assert.equal(issues[0].nodeId, 'A');
  assert.match(issues[1].path, /^nodes\[1\]\.primitive_chain\[0\]\.inputs/);
  assert.match(issues[1].message, /retries/);
});

test('duplicate ids, bad method, maxScore <= 0 and unknown node keys are each reported', () => {
  const issues = issuesOf([
    node('A'),
    node('A'),
    node('C', [], { scoring: { category: 'X', method: 'vibes', maxScore: 1 } }),
    node('D', [], { scoring: { category: 'X', method: 'binary', maxScore: 0 } }),
    node('E', [], { weight: 3 }),
  ]);
  const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
  assert.match(byPath['nodes[1].id'], /duplicate node id/);
  assert.ok(byPath['nodes[2].scoring.method'], JSON.stringify(issues));
  assert.ok(byPath['nodes[3].scoring.maxScore']);
  assert.match(byPath['nodes[4].weight'], /unknown node key/);
});

test('an llm-judge node needs exactly one P17', () => {
  const [i] = issuesOf([node('J', [], { scoring: { category: 'UI', method: 'llm-judge', maxScore: 3 } })]);
  assert.match(i.message, /exactly one P17/);
});

test('trajectory naming an unknown node is reported', () => {
  const r = checkDag({ nodes: [node('A')], trajectories: { happy_path: { node_ids: ['A', 'GHOST'] } } }, 'dag.json');
  assert.equal(r.issues[0].path, 'trajectories.happy_path.node_ids[1]');
  assert.deepEqual(r.dag.trajectories.happy_path.nodeIds, ['A']);
});

test('the published aoiwqoiq DAG loads: 186 nodes, prereqs, scoring, unsupported types counted', corpusOpt('task_aoiwqoiq'), () => {
  const { task, issues } = loadAnyTask(publishedTask('task_aoiwqoiq'));
  assert.ok(task);
  assert.deepEqual(issues, []);
  assert.equal(task.dag.nodes.length, 186);
  assert.equal(task.dag.nodes.filter((n) => n.scoring.method === 'llm-judge').length, 22);
  assert.equal(Math.round(task.dag.nodes.reduce((a, n) => a + n.scoring.maxScore, 0)), 571);
  assert.equal(task.dag.nodes.filter((n) => n.prereqs.length === 0).length, 57);
  assert.equal(task.dag.trajectories.happy_path.nodeIds.length, 6);
  assert.equal(task.environment.appPort, 8020);
  assert.equal(task.environment.appService, 'app');
  assert.match(task.promptText, /senior full-stack engineer/);
  assert.doesNotMatch(task.promptText, /Tester Workflow/);
});
