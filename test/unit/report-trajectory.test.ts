// The rollout page's trajectory view, rendered from ATIF files of our own shaped like each agent's
// export (test/fixtures/trajview): turns, tool calls with outputs, per-turn tokens and cost,
// attempt / resume markers, truncation and the turn cap, and the ATIF writer's output read back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AtifFileSchema, readTrajectoryInputs, type AtifFile } from '../../src/report/html/trajectory-read';
import { DEFAULT_VIEW, renderTurns, type TrajectoryViewOptions } from '../../src/report/html/trajectory-html';
import { trajectorySection } from '../../src/report/html/trajectory-section';
import { toAtif } from '../../src/agents/trajectory/atif';
import { emptyTotals, type Trajectory } from '../../src/agents/trajectory/types';

const FIX = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'trajview');
const load = (name: string): AtifFile => AtifFileSchema.parse(JSON.parse(readFileSync(join(FIX, `${name}.atif.json`), 'utf8')));
/** the ids of the steps rendered, in order */
const stepIds = (html: string) => [...html.matchAll(/<div class="turn src-\w+" id="step-(\d+)">/g)].map((m) => Number(m[1]));
/** the HTML of one rendered step */
const stepHtml = (html: string, id: number) => {
  const from = html.indexOf(`id="step-${id}"`);
  assert.ok(from >= 0, `step ${id} rendered`);
  const next = html.indexOf('<div class="turn ', from + 1);
  return html.slice(from, next < 0 ? undefined : next);
};

test('Claude Code-like: every turn, its tool calls and outputs, tokens and cost per turn, a retry marker', () => {
  const html = renderTurns(load('claude-code'));
  assert.deepEqual(stepIds(html), [1, 2, 3, 4, 5, 6]);
  const s2 = stepHtml(html, 2);
  assert.match(s2, /<span class="tool">Read<\/span>/);
  assert.match(s2, /&quot;file_path&quot;: &quot;\/app\/task.md&quot;/, 'arguments without a command are shown as JSON');
  assert.match(s2, /<pre class="out"># Notes service\nGET \/notes returns a list.<\/pre>/);
  assert.match(s2, /in 1,200 \(cached 800\) · out 35 · cost \$0.0123/);
  const s5 = stepHtml(html, 5);
  assert.match(s5, /<pre class="cmd">npm test<\/pre>/, 'a command is shown as the command');
  assert.match(s5, /st-FAILED">error<\/span> <span class="small">exit 1/);
  assert.match(s5, /in 1,500 · out 60 · cost —/, 'no cost on the step: a dash');
  assert.match(stepHtml(html, 3), /tokens — · cost —/);
  assert.match(stepHtml(html, 1), /<pre class="say">Build the notes service/);
  const marks = [...html.matchAll(/<div class="attempt-mark am-(\w+)"><b>attempt (\d)<\/b> — ([^<]*)/g)].map((m) => [m[1], m[2], m[3]]);
  assert.deepEqual(marks, [
    ['start', '1', 'first attempt'],
    ['retry', '2', 'retry after a transient failure: overloaded: API Error: 529 Overloaded.'],
  ]);
  assert.ok(html.indexOf('attempt 2</b>') > html.indexOf('id="step-3"') && html.indexOf('attempt 2</b>') < html.indexOf('id="step-4"'), 'the marker sits where attempt 2 begins');
});

test('Codex-like: reasoning behind <details>, tool calls without per-turn usage show dashes, system steps kept', () => {
  const a = load('codex');
  const html = renderTurns(a);
  assert.deepEqual(stepIds(html), [1, 2, 3, 4, 5]);
  const s2 = stepHtml(html, 2);
  assert.match(s2, /<details class="more"><summary>reasoning \(46 characters\)<\/summary><pre>Look around the workspace/);
  assert.match(s2, /<pre class="cmd">ls -la \/app<\/pre>/);
  assert.match(s2, /<span class="small">exit 0<\/span>/);
  assert.doesNotMatch(s2, /st-FAILED/);
  assert.match(s2, /tokens — · cost —/);
  assert.match(stepHtml(html, 3), /<span class="tool">apply_patch<\/span>[\s\S]*no output recorded/);
  assert.match(stepHtml(html, 4), /badge src-system">system[\s\S]*warning: sandbox denied a write/);
  assert.doesNotMatch(html, /attempt-mark/, 'one attempt: no markers');
  const sec = trajectorySection({ atif: a, gateway: null, relay: null, problems: [] }, undefined);
  assert.match(sec.html, /in 9,000 \(cached 4,000\) · out 700 · cost —/, 'totals from final_metrics; no cost reported');
  assert.match(sec.html, /3 agent turns · 2 tool calls · 5 steps/);
  assert.equal(sec.timeline, null, 'no timings: no timeline');
});

test('OpenHands-like: timestamps, a resume marker after a lost process, standalone observations, total cost', () => {
  const a = load('openhands');
  const html = renderTurns(a);
  assert.deepEqual(stepIds(html), [1, 2, 3, 4]);
  assert.match(stepHtml(html, 2), /2026-12-01T10:00:05.000Z/);
  assert.match(stepHtml(html, 2), /<pre class="cmd">cd \/app &amp;&amp; npm install<\/pre>[\s\S]*added 12 packages/);
  assert.match(html, /am-resume"><b>attempt 2<\/b> — resumed the session after the agent process was lost<span class="small"> · ended completed \(exit 0\) after 200s/);
  assert.match(html, /am-start"><b>attempt 1<\/b> — first attempt<span class="small"> · ended infrastructure after 300s/);
  assert.match(stepHtml(html, 3), /observation<\/div><pre class="out">a standalone observation/);
  const sec = trajectorySection({ atif: a, gateway: null, relay: null, problems: [] }, undefined).html;
  assert.match(sec, /cost \$0.42/);
  assert.match(sec, /<td class="num">1<\/td><td>infrastructure<\/td><td class="num">—<\/td><td class="num">300s<\/td><td>process lost without an exit record<\/td>/);
  assert.match(sec, /no gateway log/);
});

const tiny: TrajectoryViewOptions = { headTurns: 5, tailTurns: 3, preview: 100, outputMax: 1000, budgetChars: 5000 };

function bigTrajectory(turns: number, outputChars: number): AtifFile {
  const steps = Array.from({ length: turns }, (_, i) => ({
    step_id: i + 1,
    source: 'agent' as const,
    message: `turn ${i + 1}`,
    tool_calls: [{ tool_call_id: `c${i + 1}`, function_name: 'Bash', arguments: { command: `echo ${i + 1}` } }],
    observation: { results: [{ source_call_id: `c${i + 1}`, content: `${'x'.repeat(outputChars - 4)}END!` }] },
    metrics: { prompt_tokens: 10, completion_tokens: 2 },
    extra: { attempt: i < turns / 2 ? 1 : 2 },
  }));
  return { schema_version: 'ATIF-v1.4', session_id: 's', agent: { name: 'x', version: '1' }, steps };
}

test('a long run: first and last turns with the elided ones counted; the cap is said on the page', () => {
  const html = renderTurns(bigTrajectory(300, 10), tiny);
  assert.deepEqual(stepIds(html), [1, 2, 3, 4, 5, 298, 299, 300]);
  assert.match(html, /<b>292 turns elided<\/b> \(steps 6–297: 292 tool calls, tokens in 2,920 \/ out 584, attempts 1, 2\)/);
  assert.match(html, /showing the first 5 and last 3 of 300 turns/);
  assert.ok(html.indexOf('turns elided') < html.indexOf('attempt 2</b>'), 'the attempt that began inside the elided part is marked at the next shown turn');
  const small = renderTurns(bigTrajectory(8, 10), tiny);
  assert.deepEqual(stepIds(small), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.doesNotMatch(small, /elided|showing the first/);
  const full = renderTurns(bigTrajectory(3000, 2000));
  assert.equal(stepIds(full).length, DEFAULT_VIEW.headTurns + DEFAULT_VIEW.tailTurns);
  assert.ok(full.length < 600_000, `a 3000-turn run renders to ${full.length} characters`);
});

test('outputs: a preview, the rest behind "show all" up to a cap, and none expanded past the page budget', () => {
  const html = renderTurns(bigTrajectory(8, 3000), tiny);
  const s1 = stepHtml(html, 1);
  assert.match(s1, new RegExp(`<pre class="out">x{100}</pre><details class="more"><summary>show all \\(3,000 characters, 1 lines\\)</summary><pre class="out">x{900}</pre><div class="small">… 2,000 more characters cut`));
  assert.doesNotMatch(s1, /END!/, 'the tail past outputMax is not on the page');
  // 5000 budget / 900 per output: the 6th output still gets 500, then the rest show previews only
  assert.match(stepHtml(html, 6), /<pre class="out">x{500}<\/pre>/);
  assert.match(stepHtml(html, 7), /… 2,900 more characters not shown \(page size cap reached/);
  assert.doesNotMatch(stepHtml(html, 7), /<details/);
  const short = renderTurns(bigTrajectory(1, 50), tiny);
  assert.match(short, /<pre class="out">x{46}END!<\/pre>/);
  assert.doesNotMatch(short, /<details/);
});

test('the ATIF writer\'s own output reads back and renders (format unchanged, attempts from extra.saasbench)', () => {
  const t: Trajectory = {
    schema: 'saasbench.trajectory/v1', agent: 'claude-code', agentVersion: '1.0', model: 'm', sessionIds: ['s1'], prompt: 'do it',
    steps: [{ kind: 'agent', attempt: 1, text: 'ok', toolCalls: [{ id: 'c1', name: 'Bash', input: { command: 'make' }, command: 'make', output: 'built', exitCode: 2, isError: true }], usage: { inputTokens: 50, outputTokens: 5, cachedInputTokens: 20 } }],
    totals: { ...emptyTotals(), inputTokens: 50, outputTokens: 5, cachedInputTokens: 20, costUsd: 0.5 },
    attempts: [{ attempt: 1, completed: true, error: null, events: 3 }], finalText: 'ok',
  };
  const dir = mkdtempSync(join(tmpdir(), 'trajview-'));
  const history = [{ attempt: 1, exitReason: 'completed', exitCode: 0, seconds: 3, transient: null }];
  writeFileSync(join(dir, 'trajectory.atif.json'), JSON.stringify(toAtif(t, { saasbench: { attempts: history } })));
  const inp = readTrajectoryInputs(dir);
  assert.deepEqual(inp.problems, []);
  assert.ok(inp.atif);
  const html = trajectorySection(inp, undefined).html;
  assert.match(html, /<span class="tool">Bash<\/span> <span class="small">c1<\/span> <span class="badge st-FAILED">error<\/span> <span class="small">exit 2<\/span><\/div><pre class="cmd">make<\/pre><div class="small">output<\/div><pre class="out">built<\/pre>/);
  assert.match(html, /in 50 \(cached 20\) · out 5 · cost —/);
  assert.match(html, /cost \$0.50/);
});

test('files that do not parse are named on the page with their JSON path, not a broken report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trajview-'));
  mkdirSync(join(dir, 'agent'));
  writeFileSync(join(dir, 'trajectory.atif.json'), JSON.stringify({ schema_version: 'ATIF-v1.4', session_id: 's', agent: { name: 'a', version: '1' }, steps: [{ step_id: 1, source: 'robot', message: 'x' }] }));
  writeFileSync(join(dir, 'agent', 'gateway-log.jsonl'), '{"t":"2026-12-01T00:00:00Z","ms":5,"status":200,"protocol":"chat","inTok":1,"outTok":1}\n{"t":"x","ms":-1,"status":200,"protocol":"chat","inTok":1,"outTok":1}\n{"t":"2026-12-0');
  writeFileSync(join(dir, 'agent', 'relay-stats.json'), '{oops');
  const inp = readTrajectoryInputs(dir);
  assert.equal(inp.atif, null);
  assert.equal(inp.gateway?.length, 1);
  assert.match(inp.problems.join('\n'), /trajectory.atif.json: steps\[0\].source: /);
  assert.match(inp.problems.join('\n'), /agent\/gateway-log.jsonl line 2: ms: /);
  assert.match(inp.problems.join('\n'), /agent\/gateway-log.jsonl: 1 line\(s\) not JSON/);
  assert.match(inp.problems.join('\n'), /agent\/relay-stats.json: not JSON/);
  const html = trajectorySection(inp, undefined).html;
  assert.match(html, /<p class="problem">trajectory.atif.json: steps\[0\].source/);
  assert.match(html, /no trajectory.atif.json/);
});
