/**
 * Issue-5 scenario measured: a long scripted agent runs, the worker is SIGKILLed, a new worker
 * starts. Prints the agent seconds lost (target 0: the same process is re-attached) and the
 * seconds from the new worker's start until supervision resumed (the runAgent retry started).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { config } from '../src/config';
import { connectClient } from '../src/temporal/connection';
import { ensureDevServer, stopDevServer } from '../src/temporal/dev-server';
import { repoRoot } from '../src/paths';
import { rolloutWorkflowId, type RolloutResult } from '../src/model/rollout';
import { rolloutInput } from '../test/helpers/rollout';
import { progressOf, until } from '../test/helpers/wait';
import { startWorkerProcess } from '../test/helpers/worker-process';

const freePort = () =>
  new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-durability-'));
  const server = { port: await freePort(), uiPort: await freePort(), dbFile: join(dir, 'dev.db'), logFile: join(dir, 't.log'), pidFile: join(dir, 'pid'), ignoreTemporalAddress: true };
  const h = await ensureDevServer(server);
  const { client, connection } = await connectClient(h);
  const runsDir = join(dir, 'runs');
  const heartbeatSeconds = 5;
  try {
    const slow = join(repoRoot(), 'test', 'fixtures', 'tasks', 'slow');
    const run = async (kill: boolean) => {
      const a = await startWorkerProcess({ address: h.address, hostId: 'bench', runsDir });
      const input = rolloutInput(slow, 'oracle', { heartbeatSeconds, evaluation: { parallelism: 4, judge: { enabled: false, model: 'x' } } });
      const wf = await client.workflow.start('rolloutWorkflow', { taskQueue: config.sharedQueue(), workflowId: rolloutWorkflowId(input), args: [input] });
      let restartAt = 0;
      let b;
      if (kill) {
        await until('agent phase', async () => (await progressOf(wf)).phase === 'agent');
        await new Promise((r) => setTimeout(r, 3000));
        await a.kill('SIGKILL');
        restartAt = Date.now();
        b = await startWorkerProcess({ address: h.address, hostId: 'bench', runsDir });
      }
      const r: RolloutResult = await wf.result();
      let resumedAt = 0;
      for (const e of (await wf.fetchHistory()).events ?? []) {
        const started = e.activityTaskStartedEventAttributes;
        if (started && (started.attempt ?? 1) > 1 && kill) {
          const t = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.round((e.eventTime?.nanos ?? 0) / 1e6);
          if (t >= restartAt && !resumedAt) resumedAt = t;
        }
      }
      await (b ?? a).kill('SIGTERM');
      if (kill) await a.kill();
      return { r, restartSecs: resumedAt ? (resumedAt - restartAt) / 1000 : NaN };
    };
    const base = await run(false);
    const killed = await run(true);
    const lost = Math.max(0, killed.r.agentRun.agentSeconds - base.r.agentRun.agentSeconds);
    console.log(`scripted agent: ${base.r.agentRun.agentSeconds}s undisturbed, ${killed.r.agentRun.agentSeconds}s with a worker SIGKILL (${killed.r.agentRun.history.length} agent process)`);
    const ticks = readFileSync(join(killed.r.runDir, 'agent', 'attempt-1', 'stdout.log'), 'utf8').split('\n').filter((l) => l.startsWith('tick'));
    const redone = ticks.length - new Set(ticks.map((l) => l.split(' ')[1])).size;
    console.log(`agent seconds lost: ${lost.toFixed(1)} (target 0; re-attach keeps the process); agent steps re-done: ${redone}`);
    console.log(`seconds from worker restart to supervision resumed: ${killed.restartSecs.toFixed(1)} (heartbeat timeout ${heartbeatSeconds}s)`);
    const same = JSON.stringify(base.r.outcomes.map((o) => o.status)) === JSON.stringify(killed.r.outcomes.map((o) => o.status));
    console.log(`node statuses identical to the undisturbed run: ${same ? 'yes' : 'NO'}`);
  } finally {
    await connection.close();
    await stopDevServer(server);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
