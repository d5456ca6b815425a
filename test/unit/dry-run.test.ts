import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { dryRunTask } from '../../src/evaluation/dry-run';
import { dryRunCommand } from '../../src/cli/tasks-dry-run';
import { loadTaskOrThrow } from '../../src/tasks/load-native';
import { repoRoot } from '../../src/paths';

const helpdesk = () => loadTaskOrThrow(join(repoRoot(), 'tasks', 'helpdesk'));

test('dry run: every node DRY_RUN with score 0 and its maxScore in the denominator; variables resolved, captures named', () => {
  const task = helpdesk();
  const r = dryRunTask(task);
  assert.equal(r.outcomes.length, task.dag.nodes.length);
  assert.ok(r.outcomes.every((o) => o.status === 'DRY_RUN' && o.score === 0));
  const total = task.dag.nodes.reduce((a, n) => a + n.scoring.maxScore, 0);
  assert.equal(r.score.overall.maxScore, total, 'DRY_RUN keeps its maxScore in the denominator');
  assert.equal(r.score.overall.pct, 0);
  const all = r.nodes.flatMap((n) => n.steps);
  const text = JSON.stringify(all.map((s) => s.inputs));
  assert.ok(text.includes(String(task.variables.owner_email)), 'task variables are resolved');
  assert.ok(!text.includes('{{owner_email}}'));
  const pendingSources = all.flatMap((s) => Object.values(s.pending));
  assert.ok(pendingSources.length > 0, 'the helpdesk DAG captures ids at run time');
  assert.ok(pendingSources.every((src) => src.startsWith('captured by')), `every capture is traced to its producer: ${[...new Set(pendingSources)].join(' | ')}`);
});

test('tasks dry-run prints the table and one node on request; an unknown node is exit 1', () => {
  const dir = join(repoRoot(), 'tasks', 'helpdesk');
  const run = (o: { node?: string }) => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (b: Buffer) => (text += b));
    return { code: dryRunCommand(dir, o, out), text };
  };
  const all = run({});
  assert.equal(all.code, 0);
  assert.match(all.text, /every node DRY_RUN/);
  assert.match(all.text, /TOTAL \(S_t\)/);
  const one = run({ node: helpdesk().dag.nodes[1].id });
  assert.match(one.text, /prereqs:/);
  assert.equal(run({ node: 'NO_SUCH_NODE' }).code, 1);
});
