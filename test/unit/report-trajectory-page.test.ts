// The trajectory view on the whole rollout page: a hostile transcript renders inert, the timeline's
// Vega-Lite spec (provision / agent split into LLM, governor waits and tools / evaluation / persist)
// and its SVG, the gateway log's numbers, and a run folder without any trajectory still renders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderRolloutHtml } from '../../src/report/html/rollout-html';
import { gatewayHtml, timelineSegments, timelineSpec } from '../../src/report/html/trajectory-section';
import type { GatewayLogEntry } from '../../src/model/gateway-log';

const FIX = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'trajview');
const cell = (score: number, maxScore: number) => ({ score, maxScore, pct: maxScore ? (100 * score) / maxScore : null, nodes: 1, passed: score ? 1 : 0, failed: score ? 0 : 1, skippedDependency: 0, skippedLlm: 0, error: 0 });
const TIMINGS = { provisionMs: 10_000, agentMs: 100_000, evaluationMs: 20_000, totalMs: 135_000 };

/** A run folder with a minimal report.json (what persistResults writes, the fields the page reads). */
function runDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trajview-page-'));
  mkdirSync(join(dir, 'agent'));
  writeFileSync(
    join(dir, 'report.json'),
    JSON.stringify({
      workflowId: 'wf-1', rolloutKey: 'k', task: 'task-x', agent: 'claude-code', model: 'model-a', repeat: 0, sweep: 's', host: 'h',
      overall: cell(1, 2), nonLlm: cell(1, 2), judgeDroppedMaxScore: 0, byBackbone: { Deploy: cell(1, 1), API: cell(0, 1) }, byCategory: { api: cell(1, 2) }, byTrajectory: {},
      statusCounts: { PASSED: 1, FAILED: 1 }, agentRun: { exitReason: 'completed', message: 'done' }, timings: TIMINGS,
    }),
  );
  return dir;
}

const gw = (t: number, ms: number, x: Partial<GatewayLogEntry> = {}): GatewayLogEntry => ({ t: new Date(Date.UTC(2026, 11, 1, 10, 0, 0) + t).toISOString(), ms, status: 200, protocol: 'anthropic', inTok: 100, outTok: 10, ...x });

test('a hostile transcript renders inert: <script>, attributes and closing tags are escaped everywhere', async () => {
  const dir = runDir();
  const evil = '</pre></details><script>alert(1)</script><img src=x onerror="alert(2)">';
  const atif = {
    schema_version: 'ATIF-v1.4', session_id: `s${evil}`, agent: { name: `a${evil}`, version: '1', model_name: `m${evil}` },
    steps: [
      { step_id: 1, source: 'agent', model_name: evil, message: `hello ${evil}`, reasoning_content: evil,
        tool_calls: [{ tool_call_id: `id${evil}`, function_name: `Bash${evil}`, arguments: { command: `echo ${evil}` } }, { tool_call_id: 'c2', function_name: 'Write', arguments: { [evil]: evil } }],
        observation: { results: [{ source_call_id: `id${evil}`, content: `${evil}${'y'.repeat(2000)}${evil}` }, { content: evil }] }, extra: { attempt: 1 } },
    ],
    extra: { saasbench: { attempts: [{ attempt: 1, exitReason: 'failed', exitCode: 1, seconds: 1, transient: evil }, { attempt: 2, exitReason: 'completed', exitCode: 0, seconds: 1, transient: null }] } },
  };
  writeFileSync(join(dir, 'trajectory.atif.json'), JSON.stringify(atif));
  writeFileSync(join(dir, 'agent', 'gateway-log.jsonl'), `${JSON.stringify(gw(0, 500, { protocol: evil }))}\n`);
  const html = await renderRolloutHtml(dir);
  assert.doesNotMatch(html, /<script/i, 'no script element on the page');
  assert.doesNotMatch(html, /<img src=x/i);
  assert.doesNotMatch(html, /onerror="/);
  const section = html.slice(html.indexOf('id="agent-run"'));
  assert.ok(section.split('&lt;script&gt;alert(1)&lt;/script&gt;').length - 1 >= 10, 'the text is shown, escaped, wherever it came from');
  // the markup the page itself opens is still balanced: the hostile </details></pre> closed nothing
  const count = (re: RegExp) => (section.match(re) ?? []).length;
  assert.equal(count(/<details/g), count(/<\/details>/g));
  assert.equal(count(/<pre/g), count(/<\/pre>/g));
});

test('timeline: phases in order, agent time split from the gateway log, requests placed by time, attempts', () => {
  const log = [gw(0, 20_000, { waitMs: 5_000 }), gw(30_000, 10_000), gw(40_050, 10_000), gw(90_000, 5_000, { status: 529, inTok: 0, outTok: 0, retries: 2 })];
  const history = [{ attempt: 1, exitReason: 'failed', exitCode: 1, seconds: 30, transient: 'overloaded' }, { attempt: 2, exitReason: 'completed', exitCode: 0, seconds: 70, transient: null }];
  const seg = timelineSegments(TIMINGS, log, history);
  const row = (r: string) => seg.filter((x) => x.row === r).map((x) => [x.phase, x.start, x.end]);
  assert.deepEqual(row('rollout'), [['provision', 0, 10], ['agent', 10, 110], ['evaluation', 110, 130], ['persist & other', 130, 135]]);
  // LLM = Σ(ms − wait) = 15 + 10 + 10 + 5 = 40 s; governor waits 5 s; the rest is tools and the agent's own work
  assert.deepEqual(row('agent time (summed)'), [['LLM (gateway)', 10, 50], ['governor wait', 50, 55], ['tools & agent-side', 55, 110]]);
  // by time from the agent's start: the wait, then the call; the two requests 50 ms apart merge into one bar
  assert.deepEqual(row('LLM calls (by time)'), [['governor wait', 10, 15], ['LLM (gateway)', 15, 30], ['LLM (gateway)', 40, 60.05], ['LLM (gateway)', 100, 105]]);
  assert.deepEqual(row('attempts'), [['attempt (failed)', 10, 40], ['attempt', 40, 110]]);
  const spec = timelineSpec(seg) as { encoding: Record<string, { field?: string; sort?: string[]; scale?: { domain: string[]; range: string[] } }>; data: { values: unknown[] } };
  assert.equal(spec.encoding.x.field, 'start');
  assert.equal(spec.encoding.x2.field, 'end');
  assert.deepEqual(spec.encoding.y.sort, ['rollout', 'agent time (summed)', 'attempts', 'LLM calls (by time)']);
  assert.deepEqual(spec.encoding.color.scale!.domain, ['provision', 'agent', 'evaluation', 'persist & other', 'LLM (gateway)', 'governor wait', 'tools & agent-side', 'attempt', 'attempt (failed)']);
  assert.equal(spec.data.values.length, seg.length);
  // no gateway log: the agent phase cannot be split; one attempt: no attempts row
  const bare = timelineSegments({ ...TIMINGS, totalMs: 130_000 }, null, history.slice(1));
  assert.deepEqual(bare.map((x) => x.row), ['rollout', 'rollout', 'rollout', 'agent time (summed)']);
  // a long run with thousands of requests stays a bounded number of bars
  const many = Array.from({ length: 5000 }, (_, i) => gw(i * 2_000, 1_500));
  const long = timelineSegments({ provisionMs: 0, agentMs: 10_000_000, evaluationMs: 0, totalMs: 10_000_000 }, many, []);
  assert.ok(long.filter((x) => x.row === 'LLM calls (by time)').length <= 800);
});

test('gateway section: totals of the log (LLM time, retries, governor waits, non-2xx, cost) and the relay stats', () => {
  const log = [gw(0, 20_000, { waitMs: 5_000, costUsd: 0.25 }), gw(30_000, 10_000, { retries: 2, costUsd: 0.5 }), gw(40_000, 1_000, { status: 529, inTok: 0, outTok: 0 })];
  const html = gatewayHtml({ atif: null, gateway: log, relay: { requests: 4, statusCounts: { 200: 2, 529: 1 }, upstreamErrors: 0, rejected: 1, translated: 0 }, problems: [] });
  assert.match(html, /relay: 4 requests · statuses 200×2 529×1 · upstream errors 0 · rejected 1/);
  assert.match(html, /gateway log: 3 model requests · LLM time 26s · retries 2 · governor waits 1 \(5s\) · non-2xx 1 · cost \$0.75/);
  assert.match(html, /<td class="num">\+30s<\/td><td class="num">10s<\/td><td class="num">200<\/td><td>anthropic<\/td><td class="num">100<\/td><td class="num">10<\/td><td class="num">2<\/td><td class="num">—<\/td><td class="num">\$0.50<\/td>/);
  const capped = gatewayHtml({ atif: null, gateway: Array.from({ length: 130 }, (_, i) => gw(i * 1000, 10)), relay: null, problems: [] }, 50);
  assert.match(capped, /first and last 50 of 130/);
  assert.match(capped, /… 30 requests elided …/);
  assert.equal((capped.match(/<tr>/g) ?? []).length, 1 + 50 + 1 + 50);
});

test('the full page: timeline chart as inline SVG, the agent run section linked; a run without a trajectory still renders', async () => {
  const dir = runDir();
  cpSync(join(FIX, 'claude-code.atif.json'), join(dir, 'trajectory.atif.json'));
  writeFileSync(join(dir, 'agent', 'gateway-log.jsonl'), [gw(0, 4000), gw(6000, 3000, { status: 529 })].map((e) => JSON.stringify(e)).join('\n') + '\n');
  const html = await renderRolloutHtml(dir);
  assert.match(html, /<a href="#agent-run">the agent's run<\/a>/);
  assert.match(html, /<h2 id="agent-run">Agent run<\/h2>/);
  assert.equal((html.match(/<svg /g) ?? []).length, 3, 'backbone, category and timeline charts');
  assert.match(html, /Where the time went/);
  assert.match(html, /governor waits 0/);
  assert.match(html, /id="step-6"/);
  const bare = runDir();
  const html2 = await renderRolloutHtml(bare);
  assert.match(html2, /no trajectory.atif.json in this run folder/);
  assert.equal((html2.match(/<svg /g) ?? []).length, 3, 'the timeline from report.json timings alone');
});
