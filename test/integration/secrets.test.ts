// Acceptance 3 of issue 7: API keys reach only the process that needs them. Unique keys are planted
// in the worker's environment — the agent's provider key, the judge's key, and two that nothing
// should use — then a real rollout runs: Claude Code through its relay (the fake Anthropic server
// checks the real key arrives there), the LLM judge on the llm-judge node (a fake judge checks its
// key), and an agent that dumps its environment, every process's environment and its home into the
// workspace. Afterwards no key appears in any file of the run folder (compressed snapshots included),
// in the judge cache, in the worker's log (debug level), or in the workflow's history (payloads
// decoded). Traffic goes only to 127.0.0.1 and to the containers the rollout created.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { repoRoot } from '../../src/paths';
import type { RolloutResult } from '../../src/model/rollout';
import { startFakeAnthropic } from '../fakes/fake-anthropic';
import type { FakeServer } from '../fakes/fake-common';
import { TINY_BUILD } from '../fixtures/agents/scripts';
import { labelledFor } from '../helpers/docker';
import { rolloutInput, runRolloutWorkflow, statusesOf } from '../helpers/rollout';
import { devServer } from '../helpers/temporal';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

const ROOT = repoRoot();
const stamp = `${process.pid}-${Date.now().toString(36)}`;
const KEYS = {
  agent: `sk-ant-agent-planted-${stamp}-4c1d`,
  judge: `sk-ant-judge-planted-${stamp}-77e0`,
  generic: `sk-ant-generic-planted-${stamp}-0b9a`,
  openai: `sk-proj-openai-planted-${stamp}-d2f8`,
};

let env: TestWorkflowEnvironment;
let worker: WorkerProcess;
let agentLlm: FakeServer;
let judge: http.Server;
const judgeAuth: string[] = [];
let work: string;
let result: RolloutResult;

/** A fake Anthropic judge: answers every messages.create with a verdict; records whether the judge key came. */
async function startJudge(): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const k = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer\s+/i, '');
      judgeAuth.push(k === KEYS.judge ? 'ok' : `${req.method} ${req.url}: ${Object.entries(KEYS).find(([, v]) => v === k)?.[0] ?? (k ? 'another credential' : 'no credential')}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'msg_judge', type: 'message', role: 'assistant', model: 'judge-fake', content: [{ type: 'text', text: '{"score": 2, "reasoning": "small and readable"}' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The agent: builds the app, then tries every way to see a key it was never given, and keeps what it found. */
const EXFILTRATE = [
  TINY_BUILD.commands[0],
  'env | sort > /app/env-dump.txt; cat /app/env-dump.txt',
  "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; done | sort -u > /app/proc-environ.txt; grep -i -E 'key|token|secret' /app/proc-environ.txt",
  'grep -r -a -h -o -E "sk-[A-Za-z0-9_-]{10,}" /root /app /tmp /etc 2>/dev/null | sort -u | head -20; ls -la /root /root/.claude 2>&1 | head -30',
];

before(
  async () => {
    work = mkdtempSync(join(tmpdir(), 'saasbench-secrets-'));
    agentLlm = await startFakeAnthropic({ script: { commands: EXFILTRATE, finalText: 'Done.' }, requireKey: KEYS.agent });
    const j = await startJudge();
    judge = j.server;
    env = await devServer();
    worker = await startWorkerProcess({
      address: env.address,
      hostId: 'secrets-itest',
      runsDir: join(work, 'runs'),
      env: {
        SAASBENCH_LOG_LEVEL: 'debug',
        SAASBENCH_MODELS_FILE: join(ROOT, 'test', 'fixtures', 'agents', 'models.json'),
        SAASBENCH_ANTHROPIC_BASE_URL: agentLlm.url,
        SAASBENCH_ANTHROPIC_API_KEY: KEYS.agent,
        ANTHROPIC_API_KEY: KEYS.generic,
        SAASBENCH_OPENAI_API_KEY: KEYS.openai,
        SAASBENCH_JUDGE_API_KEY: KEYS.judge,
        SAASBENCH_JUDGE_BASE_URL: j.url,
        SAASBENCH_JUDGE_CACHE: join(work, 'judge-cache'),
        SAASBENCH_AGENT_CLI_RETRIES: '0',
      },
    });
  },
  { timeout: 300_000 },
);

after(
  async () => {
    await worker?.kill('SIGTERM').catch(() => undefined);
    await env?.teardown();
    await agentLlm?.close();
    judge?.close();
  },
  { timeout: 120_000 },
);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

test('a rollout with planted keys: the keys are used where they belong and appear nowhere else', { timeout: 900_000 }, async () => {
  const input = rolloutInput(join(ROOT, 'test', 'fixtures', 'tasks', 'tiny'), 'claude-code', { model: 'fake-claude', evaluation: { parallelism: 4, judge: { enabled: true, model: 'judge-fake' } } });
  result = await runRolloutWorkflow(env, input);
  assert.equal(result.agentRun.exitReason, 'completed', result.agentRun.message);
  assert.equal(statusesOf(result).DEPLOY_HEALTH, 'PASSED');
  assert.equal(statusesOf(result).CODE_QUALITY, 'PASSED', 'the judge ran');
  // positive controls: the keys did their job, at the upstreams
  assert.ok(agentLlm.modelCalls().length >= EXFILTRATE.length && agentLlm.modelCalls().every((c) => c.auth === 'ok'), 'the relay injected the agent key');
  assert.ok(judgeAuth.length >= 1 && judgeAuth.every((a) => a === 'ok'), `the judge sent the judge key: ${judgeAuth.join(', ')}`);
  const traj = readFileSync(join(result.runDir, 'trajectory.json'), 'utf8');
  assert.match(traj, /ANTHROPIC_API_KEY=sk-saasbench-relay-/, 'the agent dumped its environment: it holds the relay token only');
  assert.match(traj, /HTTPS_PROXY=http:\/\//, 'and the egress proxy');
  assert.deepEqual(labelledFor(result.rolloutKey), []);

  const leaks: string[] = [];
  const search = (where: string, text: string) => {
    for (const [name, k] of Object.entries(KEYS)) if (text.includes(k)) leaks.push(`${name} key in ${where}`);
  };
  // every persisted file, snapshots decompressed
  const persisted = [...files(join(work, 'runs')), ...files(join(work, 'judge-cache'))];
  assert.ok(persisted.some((f) => f.endsWith('workspace.tar.gz')), 'the workspace snapshot is among them');
  for (const f of persisted) {
    const buf = readFileSync(f);
    search(f, buf.toString('latin1'));
    if (f.endsWith('.gz')) search(`${f} (decompressed)`, gunzipSync(buf).toString('latin1'));
  }
  const snapshot = gunzipSync(readFileSync(join(result.runDir, 'workspace.tar.gz'))).toString('latin1');
  assert.match(snapshot, /env-dump\.txt[\s\S]*ANTHROPIC_BASE_URL=/, 'the environment dump is in the snapshot');
  // the worker's own log, at debug level
  const log = worker.output();
  assert.match(log, /LLM relay listening/);
  search('the worker log', log);
  // the workflow history, payloads decoded
  const history = historyToJSON(await env.client.workflow.getHandle(result.workflowId).fetchHistory());
  const decoded = [...history.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1], 'base64').toString('utf8')).join('\n');
  assert.ok(decoded.includes(result.rolloutKey) && decoded.includes('agentRun'), 'the payloads were decoded');
  search('the workflow history', history);
  search('the workflow payloads', decoded);
  assert.deepEqual(leaks, []);
});
