import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { checkDag } from '../../src/tasks/validate-dag';
import { loadAnyTask } from '../../src/tasks/load';
import { corpusOpt, publishedTasks } from '../helpers/published';

const repoRoot = resolve(__dirname, '..', '..', '..');
const FIXTURE = join(repoRoot, 'test', 'fixtures', 'published-p13', 'steps.json');
const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
  cases: { task: string; in: Record<string, unknown>; out: Record<string, unknown>; notes?: Record<string, unknown>; spelling?: string }[];
  errors: { in: Record<string, unknown>; path: string }[];
};

/** One published node holding one P13 step, normalized and checked with the canonical schemas. */
function load(task: string, inputs: Record<string, unknown>) {
  const raw = { nodes: [{ id: 'N', prereqs: [], primitive_chain: [{ type: 'P13', inputs }], scoring: { category: 'Authentication', method: 'binary', maxScore: 1 } }] };
  const norm = normalizePublishedDag(raw, { task, file: 'dag.json' });
  const check = checkDag(norm.dag, 'dag.json', undefined, { allowZeroMaxScore: true });
  return { norm, issues: [...norm.issues, ...check.issues], step: check.dag.nodes[0]?.chain[0] };
}

describe('P13 dialect: each published family maps onto the canonical step', () => {
  for (const c of fixture.cases) {
    test(`${c.task}: ${JSON.stringify(c.in).slice(0, 90)}`, () => {
      const { norm, issues, step } = load(c.task, c.in);
      assert.deepEqual(issues, []);
      assert.equal(step.type, 'P13');
      assert.deepEqual(step.inputs, c.out);
      if (c.notes) assert.deepEqual(step.notes, c.notes);
      if (c.spelling) assert.ok(norm.spellings.some((s) => s.primitive === 'P13' && s.spelling === c.spelling && s.task === c.task), `spelling "${c.spelling}" recorded (got ${norm.spellings.map((s) => s.spelling).join(' | ')})`);
    });
  }
});

describe('P13 dialect: what it cannot honour is an issue at the published path', () => {
  for (const e of fixture.errors) {
    test(JSON.stringify(e.in), () => {
      const { issues } = load('t1', e.in);
      assert.ok(issues.some((i) => i.path === `nodes[0].primitive_chain[0].${e.path}`), `an issue at ${e.path}; got ${issues.map((i) => `${i.path}: ${i.message}`).join(' | ')}`);
    });
  }
  test('the same method means what each task\'s evaluator made of it', () => {
    assert.equal(load('gmdnohlg', { role: 'a', method: 'bearer' }).step.inputs.method, 'basic');
    assert.equal(load('t1', { role: 'a', method: 'bearer' }).step.inputs.method, 'bearer');
    assert.equal(load('qmjfeopc', { role: 'a', method: 'api_key' }).step.inputs.method, 'login');
    assert.equal(load('t1', { role: 'a', method: 'api_key' }).step.inputs.method, 'api_key');
  });
});

describe('P13 across the published corpus', () => {
  test('no load issue of a P13 step remains in any published task', corpusOpt(), () => {
    const left: string[] = [];
    for (const dir of publishedTasks()) {
      const r = loadAnyTask(dir);
      for (const i of r.issues) {
        const m = /nodes\[(\d+)\]\.primitive_chain\[(\d+)\]/.exec(i.path);
        if (!m) continue;
        const raw = JSON.parse(readFileSync(i.file, 'utf8')) as { nodes: { primitive_chain: { type?: string; primitive?: string }[] }[] };
        const s = raw.nodes[Number(m[1])].primitive_chain[Number(m[2])];
        if ((s.type ?? s.primitive) === 'P13') left.push(`${dir}: ${i.path}: ${i.message}`);
      }
    }
    assert.deepEqual(left, []);
  });
});
