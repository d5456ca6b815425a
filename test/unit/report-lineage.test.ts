// The rollout page's "Snapshots, moves and forks" section, from a report.json with every field of it:
// a host move, the parent (a sibling run folder: a relative link), two forks (one sibling, one in
// another runs folder: shown by key), two snapshots, governor waits; hostile text stays escaped;
// a plain rollout gets no section.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderRolloutHtml } from '../../src/report/html/rollout-html';
import { lineageSection, rolloutRef } from '../../src/report/html/lineage-section';

const cell = (score: number, maxScore: number) => ({ score, maxScore, pct: maxScore ? (100 * score) / maxScore : null, nodes: 1, passed: score ? 1 : 0, failed: score ? 0 : 1, skippedDependency: 0, skippedLlm: 0, error: 0 });
const EVIL = '<script>alert(1)</script>';

function report(extra: Record<string, unknown>): string {
  return JSON.stringify({
    workflowId: 'wf-child', rolloutKey: 'k-child', task: 'task-x', agent: 'codex', model: 'model-a', repeat: 0, sweep: 's', host: 'h2',
    overall: cell(1, 2), nonLlm: cell(1, 2), judgeDroppedMaxScore: 0, byBackbone: { Deploy: cell(1, 1) }, byCategory: { api: cell(1, 2) }, byTrajectory: {},
    statusCounts: { PASSED: 1, FAILED: 1 }, timings: { provisionMs: 1000, agentMs: 2000, evaluationMs: 3000, totalMs: 6000 },
    ...extra,
  });
}

test('moves, fork links, snapshots and governor waits render; sibling run folders are linked, others named by key', async () => {
  const runs = mkdtempSync(join(tmpdir(), 'lineage-'));
  const dir = join(runs, 'task-x__codex__model-a__r0__abc');
  mkdirSync(dir);
  const elsewhere = mkdtempSync(join(tmpdir(), 'lineage-other-'));
  writeFileSync(
    join(dir, 'report.json'),
    report({
      agentRun: {
        exitReason: 'completed', message: 'done',
        snapshots: [
          { id: 'k-child/1', rolloutKey: 'k-child', seq: 1, takenAt: Date.UTC(2026, 11, 1, 10, 0, 0), host: 'h1', agentSeconds: 120, final: false, bytes: { workspace: 2048, database: 3 * 1024 * 1024, session: 512 }, deleted: true },
          { id: 'k-child/2', rolloutKey: 'k-child', seq: 2, takenAt: Date.UTC(2026, 11, 1, 10, 5, 0), host: 'h2', agentSeconds: 300, final: true, bytes: { workspace: 4096 } },
        ],
        governor: { waits: 7, waitSeconds: 42.5 },
      },
      moves: [{ fromHost: 'h1', toHost: 'h2', snapshot: 'k-child/1', reason: `heartbeat lost ${EVIL}`, secondsLost: 65, downSeconds: 90, at: 1 }],
      parent: { workflowId: 'wf-parent', rolloutKey: 'k-parent', snapshot: 'k-parent/3', runDir: join(runs, 'task-x__claude-code__model-a__r0__def') },
      children: [
        { workflowId: 'wf-fork-1', rolloutKey: 'k-fork-1', agent: 'claude-code', model: 'model-b', snapshot: 'k-child/2', runDir: join(runs, 'fork one') },
        { workflowId: 'wf-fork-2', rolloutKey: 'k-fork-2', agent: 'codex', model: 'model-c', snapshot: 'k-child/2', runDir: join(elsewhere, 'fork-two') },
      ],
    }),
  );
  const html = await renderRolloutHtml(dir);
  const section = html.slice(html.indexOf('id="lineage"'), html.indexOf('<h2>By backbone'));
  assert.ok(section.length > 0, 'the section is on the page, before the score tables');
  assert.match(section, /forked from<\/dt><dd><a href="\.\.\/task-x__claude-code__model-a__r0__def\/report\.html">k-parent<\/a>.*k-parent\/3/);
  assert.match(section, /<a href="\.\.\/fork%20one\/report\.html">k-fork-1<\/a>/, 'a sibling fork: relative link, encoded');
  assert.match(section, /<code>k-fork-2<\/code>/, 'a fork elsewhere: its key');
  assert.doesNotMatch(section, /fork-two/, 'no link into another runs folder');
  assert.match(section, /forks \(2\)/);
  assert.match(section, /<code>h1<\/code> → <code>h2<\/code>/);
  assert.match(section, /heartbeat lost &lt;script&gt;/);
  assert.doesNotMatch(html, /<script/);
  assert.match(section, /Snapshots \(2\)/);
  assert.match(section, /k-child\/2<\/code> <span class="small">final/);
  assert.match(section, /k-child\/1<\/code> <span class="small">deleted \(SAASBENCH_SNAPSHOT_KEEP\)/);
  assert.doesNotMatch(section, /k-child\/2<\/code>[^<]*<span class="small">final<\/span> <span class="small">deleted/, 'a kept snapshot is not marked');
  assert.match(section, /2026-12-01T10:00:00Z/);
  assert.match(section, /workspace 2\.0 KiB, database 3\.0 MiB, session 512 B/);
  assert.match(section, />3\.0 MiB</, 'the total size of snapshot 1');
  assert.match(section, /7 request\(s\) waited/);
});

test('a plain rollout has no such section; a move without a snapshot says the agent started over', async () => {
  const runs = mkdtempSync(join(tmpdir(), 'lineage-plain-'));
  writeFileSync(join(runs, 'report.json'), report({ agentRun: { exitReason: 'completed', message: 'done', governor: { waits: 0, waitSeconds: 0 } }, moves: [], parent: null }));
  const html = await renderRolloutHtml(runs);
  assert.doesNotMatch(html, /id="lineage"/);
  const s = lineageSection('/runs/a', { moves: [{ fromHost: 'a', toHost: 'b', snapshot: null, reason: 'gone', secondsLost: 1, downSeconds: 2, at: 0 }] });
  assert.match(s, /none: the agent started over/);
  assert.doesNotMatch(s, /rate governor/);
});

test('rolloutRef: no link to itself, to a missing run folder, or across folders', () => {
  const ref = { workflowId: 'w', rolloutKey: 'k' };
  assert.doesNotMatch(rolloutRef('/runs/a', ref), /href/);
  assert.doesNotMatch(rolloutRef('/runs/a', { ...ref, runDir: '/runs/a' }), /href/);
  assert.doesNotMatch(rolloutRef('/runs/a', { ...ref, runDir: '/elsewhere/b' }), /href/);
  assert.match(rolloutRef('/runs/a', { ...ref, runDir: '/runs/b/' }), /href="\.\.\/b\/report\.html"/);
});
