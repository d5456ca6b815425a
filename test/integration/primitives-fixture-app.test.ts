/**
 * Acceptance 3: a small fixture app + DAG that uses every primitive. The app (test/fixtures/
 * fixture-app/app.ts) runs on the host, its database in a PostgreSQL container, its workspace in a
 * container (bind-mounted, so each variant rewrites files in place), the judge is the fake
 * Anthropic server on 127.0.0.1 and the browser is Debian's Chromium. The right app passes every
 * node; each broken variant fails exactly the nodes it is meant to (BREAKS), their dependents are
 * SKIPPED_DEPENDENCY and every other node still passes.
 *
 * To stay quick, variants that do not target the two browser nodes run the DAG without them (no
 * other node depends on them; the full DAG, browser included, runs for the right app and for the
 * UI variants).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import pino from 'pino';
import { clearJudgeMemoryCache, createJudge, type Judge } from '../../src/judge/judge-port';
import { launchChromium } from '../../src/primitives/browser-common';
import { rolesPort } from '../../src/primitives/auth/provider';
import { manifestExtras } from '../../src/primitives/auth/task-roles';
import { runNode } from '../../src/primitives/run-chain';
import type { NodeOutcome } from '../../src/model/scores';
import { scoreTask } from '../../src/scoring/task-score';
import { loadNativeTask } from '../../src/tasks/load-native';
import { planOf } from '../../src/tasks/plan';
import type { Task } from '../../src/model/task';
import { DagScheduler } from '../../src/dag/scheduler';
import { BREAKS, QUALITY_MARKER, schemaSql, startFixtureApp, writeWorkspace, type Break } from '../fixtures/fixture-app/app';
import { BASE_IMAGE, containerEnv, PG_PASSWORD, startContainer, startPostgres, type TestContainer, type TestPostgres } from '../fixtures/primitives/container-env';
import { startFakeJudge, type FakeJudgeServer } from '../fakes/fake-anthropic-judge';

const TASK_DIR = resolve(__dirname, '../../../test/fixtures/fixture-app/task');
const UI_NODES = ['UI_RENDERS', 'UI_LAYOUT_JUDGE'];

let pg: TestPostgres;
let ws: TestContainer;
let wsDir: string;
let artifacts: string;
let browser: Browser;
let fake: FakeJudgeServer;
let judge: Judge;
let task: Task;
let runs = 0;

before(async () => {
  wsDir = mkdtempSync(join(tmpdir(), 'sb-fixture-ws-'));
  artifacts = mkdtempSync(join(tmpdir(), 'sb-fixture-art-'));
  const loaded = loadNativeTask(TASK_DIR);
  assert.deepEqual(loaded.issues, [], 'the fixture task validates');
  task = loaded.task!;
  [pg, ws, browser, fake] = await Promise.all([
    startPostgres(),
    startContainer(BASE_IMAGE, ['-v', `${wsDir}:/app`]),
    launchChromium(),
    startFakeJudge((call) => {
      if (call.images > 0) {
        const good = /<h1>Fixture Items<\/h1>/.test(call.text) && /class="item"/.test(call.text);
        return { text: JSON.stringify({ score: good ? 5 : 0, reasoning: good ? 'heading, items and navigation' : 'no item list' }) };
      }
      const good = call.text.includes(QUALITY_MARKER);
      return { text: good ? '```json\n{"score": 4, "reasoning": "layers are separated"}\n```' : 'I would give it 0 out of 4: no structure.' };
    }),
  ]);
  clearJudgeMemoryCache();
  judge = createJudge({ provider: 'anthropic', apiKey: 'sk-fixture-judge', baseUrl: fake.url, model: 'fixture-judge', cacheDir: null });
});

after(async () => {
  await Promise.all([pg?.remove(), ws?.remove(), browser?.close(), fake?.close()]);
  rmSync(wsDir, { recursive: true, force: true });
  rmSync(artifacts, { recursive: true, force: true });
});

/** Set up the variant (workspace, schema, server) and evaluate the DAG as the workflow would, 4 nodes at a time (or `parallelism`). */
async function evaluate(broken?: Break, parallelism = 4): Promise<Map<string, NodeOutcome & { stepMessages: string[] }>> {
  writeWorkspace(wsDir, broken);
  await pg.sql(schemaSql(broken));
  const app = await startFixtureApp({ pgPort: pg.port, pgPassword: PG_PASSWORD, workspaceDir: wsDir, broken });
  try {
    const withUi = !broken || BREAKS[broken].some((n) => (UI_NODES as readonly string[]).includes(n));
    const t: Task = withUi ? task : { ...task, dag: { ...task.dag, nodes: task.dag.nodes.filter((n) => !UI_NODES.includes(n.id)) } };
    const sched = new DagScheduler(planOf(t));
    const byId = new Map(t.dag.nodes.map((n) => [n.id, n]));
    const out = new Map<string, NodeOutcome & { stepMessages: string[] }>();
    const runId = `r${++runs}`;
    const extras = manifestExtras(task);
    const running = new Map<string, Promise<void>>();
    while (!sched.done()) {
      for (const o of sched.takeBlocked()) out.set(o.nodeId, { ...o, stepMessages: [] });
      for (const p of sched.takeReady(parallelism - running.size)) {
        const node = byId.get(p.id)!;
        const env = containerEnv(ws, { services: { db: pg.container }, baseUrl: app.url, sql: pg.sql, workspace: '/app' });
        Object.assign(env, {
          artifactsDir: join(artifacts, runId, p.id),
          taskDir: task.dir,
          log: pino({ level: 'silent' }),
          judge,
          browser: async () => browser,
          roles: rolesPort(extras.roles, { baseUrl: app.url, appService: 'app', exec: (s, c, o) => env.exec(s, c, o), cacheKey: `fixture-${runId}` }),
        });
        const vars = { run_id: runId, base_url: app.url, ...task.variables, ...sched.contextFor(p.id) };
        const t0 = Date.now();
        const job = runNode(node, env, { judgeEnabled: true, vars }).then((run) => {
          const o: NodeOutcome = { nodeId: p.id, status: run.status, score: run.score, maxScore: p.maxScore, method: p.method, category: p.category, subcategory: p.subcategory, message: run.message, exports: run.exports, durationMs: Date.now() - t0 };
          if (process.env.FIXTURE_TIMING) console.error(`${runId} ${p.id} ${o.durationMs}ms`);
          sched.complete(o);
          out.set(p.id, { ...o, stepMessages: run.steps.map((s) => `${s.type}: ${s.message}`) });
        });
        running.set(p.id, job.finally(() => running.delete(p.id)));
      }
      if (running.size === 0) {
        if (sched.done()) break;
        throw new Error('stalled');
      }
      await Promise.race(running.values());
    }
    return out;
  } finally {
    await app.close();
  }
}

function descendants(ids: readonly string[]): Set<string> {
  const out = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const n of task.dag.nodes) {
      if (out.has(n.id) || ids.includes(n.id)) continue;
      if (n.prereqs.some((p) => ids.includes(p) || out.has(p))) {
        out.add(n.id);
        grew = true;
      }
    }
  }
  return out;
}

const show = (m: Map<string, NodeOutcome & { stepMessages: string[] }>, ids: Iterable<string>) => [...ids].map((id) => `${id}: ${m.get(id)?.status} ${m.get(id)?.message} | ${m.get(id)?.stepMessages.join(' | ')}`).join('\n');

describe('the fixture app against its DAG (every primitive)', () => {
  test('the DAG uses every primitive of the catalogue', () => {
    const types = new Set(task.dag.nodes.flatMap((n) => n.chain.map((s) => s.type)));
    for (const t of ['P01', 'P02', 'P03', 'P04', 'P05', 'P06', 'P07', 'P08', 'P09', 'P10', 'P11', 'P12', 'P13', 'P14', 'P15', 'P16', 'P17', 'P21', 'P23', 'P27', 'SCREENSHOT', 'RENDER_DOM']) assert.ok(types.has(t), t);
  });

  test('the right app passes every node, judge nodes included', async () => {
    const out = await evaluate();
    const notPassed = [...out.values()].filter((o) => o.status !== 'PASSED').map((o) => o.nodeId);
    assert.deepEqual(notPassed, [], show(out, notPassed));
    assert.equal(out.size, task.dag.nodes.length);
    const score = scoreTask([...out.values()], {});
    assert.equal(score.overall.pct, 100);
    assert.equal(out.get('UI_LAYOUT_JUDGE')!.score, 5);
    assert.equal(out.get('ARCH_JUDGE')!.score, 4);
    assert.ok(fake.calls.some((c) => c.images === 1 && /a list showing the items/.test(c.text)), 'the UI rubric came from rubric_file, with the screenshot attached');
  });

  test('evaluation order cannot change results: one node at a time and four at a time agree (the task declares parallelSafe)', async () => {
    assert.equal(task.parallelSafe, true);
    const seq = await evaluate(undefined, 1);
    const par = await evaluate(undefined, 4);
    const view = (m: Map<string, NodeOutcome>) => [...m.values()].map((o) => `${o.nodeId} ${o.status} ${o.score}`).sort();
    assert.deepEqual(view(par), view(seq));
  });

  for (const broken of Object.keys(BREAKS) as Break[]) {
    test(`broken: ${broken} → costs points on ${BREAKS[broken].join(', ')} and nothing else`, async () => {
      const out = await evaluate(broken);
      const intended: string[] = [...BREAKS[broken]];
      // a binary node FAILS (its dependents are skipped); a weighted one keeps partial credit (PASSED, fewer points)
      const failing = intended.filter((id) => task.dag.nodes.find((n) => n.id === id)!.scoring.method !== 'weighted');
      const skipped = descendants(failing);
      const problems: string[] = [];
      for (const [id, o] of out) {
        if (intended.includes(id)) {
          const weighted = !failing.includes(id);
          const ok = weighted ? o.status === 'PASSED' && o.score > 0 && o.score < o.maxScore : o.status === 'FAILED' && o.score === 0;
          if (!ok) problems.push(`${id}: ${o.status} ${o.score}/${o.maxScore}, expected ${weighted ? 'partial credit' : 'FAILED'} — ${o.message}`);
          continue;
        }
        const want = skipped.has(id) ? 'SKIPPED_DEPENDENCY' : 'PASSED';
        if (o.status !== want || (want === 'PASSED' && o.score !== o.maxScore)) problems.push(`${id}: ${o.status} ${o.score}/${o.maxScore}, expected ${want} — ${o.message} | ${o.stepMessages.join(' | ')}`);
      }
      for (const id of intended) if (!out.has(id)) problems.push(`${id} did not run`);
      assert.deepEqual(problems, []);
    });
  }
});
