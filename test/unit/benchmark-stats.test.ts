import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { benchmarkStats } from '../../src/benchmark/stats';
import { benchmarkStatsCommand } from '../../src/cli/benchmark-stats';
import { checkDag } from '../../src/tasks/validate-dag';
import { unreachableOf } from '../../src/tasks/unreachable';

const node = (id: string, prereqs: string[], chain: unknown[], method = 'binary', maxScore = 4, category = 'Deployment') => ({ id, prereqs, primitive_chain: chain, scoring: { category, subcategory: 'x', method, maxScore } });
const get = (path: string) => ({ type: 'P04', inputs: { method: 'GET', path } });
const stub = { type: 'PUBLISHED_STUB', inputs: { published_type: 'P20', reason: 'not implemented' } };

test('unreachable maxScore: stubs, placeholders nothing produces, and what depends on them', () => {
  const raw = {
    nodes: [
      node('OK', [], [get('/health')]),
      node('BIN_STUB', [], [get('/a'), stub]),
      node('CHILD', ['BIN_STUB'], [get('/b')], 'binary', 3),
      node('W_HALF', [], [get('/c'), stub], 'weighted', 5),
      node('W_ALL', [], [stub], 'weighted', 2),
      node('W_CHILD', ['W_HALF'], [get('/d')], 'binary', 1),
      node('PH', [], [get('/x/{{nobody_sets_this}}')], 'binary', 6),
    ],
  };
  const c = checkDag(raw, 'dag.json');
  assert.deepEqual(c.issues, []);
  const u = unreachableOf(c.dag, raw.nodes, { variables: [], publishedIdCapture: false });
  // BIN_STUB 4 + CHILD 3 (dependency) + W_HALF 5-2.5 + W_ALL 2 + PH 6; W_CHILD can still run (W_HALF passes with 2.5)
  assert.equal(u.maxScore, 4 + 3 + 2.5 + 2 + 6);
  assert.deepEqual(u.byCause, { stub: 4 + 2.5 + 2, placeholder: 6, dependency: 3 });
  assert.deepEqual(u.nodes.sort(), ['BIN_STUB', 'CHILD', 'PH', 'W_ALL']);
});

test('benchmark stats: per task and total, backbone shares, unmapped categories named, paper figures beside', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-stats-'));
  try {
    const write = (rel: string, text: string) => {
      mkdirSync(dirname(join(dir, rel)), { recursive: true });
      writeFileSync(join(dir, rel), text);
    };
    const task = (id: string, nodes: unknown[]) => {
      write(`task_${id}/tasks/task_${id}/docker/docker-compose.yml`, 'services:\n  app:\n    image: demo/app:1\n    ports: ["8080:8080"]\n');
      write(`task_${id}/check/task_${id}/prompt_for_model.md`, '## Prompt\nBuild it.\n');
      write(`task_${id}/check/task_${id}_e/evaluate/dag.json`, JSON.stringify({ nodes }));
    };
    task('aaa', [node('H', [], [get('/h')], 'binary', 2), node('J', ['H'], [{ type: 'P17', inputs: { rubric_prompt: 'r', evidence_type: 'code_files', score_range: [0, 3] } }], 'llm-judge', 3, 'ArchitectureQuality')]);
    task('bbb', [node('H', [], [get('/h')], 'binary', 5, 'NoSuchFamily')]);
    const s = benchmarkStats(dir);
    assert.equal(s.total.tasks, 2);
    assert.equal(s.total.nodes, 3);
    assert.equal(s.total.maxScore, 10);
    assert.equal(s.total.judgeNodes, 1);
    assert.equal(s.total.backbone.Deploy, 2);
    assert.equal(s.total.backbone.Quality, 3);
    assert.deepEqual(s.total.unmapped, ['NoSuchFamily']);
    assert.equal(s.missing.length, 30, 'aaa/bbb are not published ids');
    const out = new PassThrough();
    let text = '';
    out.on('data', (b: Buffer) => (text += b));
    const code = benchmarkStatsCommand(dir, {}, out);
    assert.equal(code, 1, 'an unmapped category fails the command');
    assert.match(text, /total maxScore\s+10\s+17299\.1\s+-17289\.1/);
    assert.match(text, /unmapped categories: 1 \(NoSuchFamily\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
