// SAASBENCH_SNAPSHOT_KEEP during an agent phase (src/snapshots/agent-snapshots.ts): older snapshots
// leave the store, and the run's list (report.json agentRun.snapshots) keeps them marked deleted.
// The container side is a fake sandbox answering the one archive exec with a plain tar.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { agentSnapshots } from '../../src/snapshots/agent-snapshots';
import { listSnapshots } from '../../src/snapshots/rollout-snapshot';
import { snapshotStore } from '../../src/snapshots/factory';
import { packEntries } from '../../src/sandbox/tar';
import type { SandboxBackend } from '../../src/sandbox/backend';
import type { AgentContext, AgentDriver } from '../../src/agents/types';
import type { SupervisionState } from '../../src/agents/supervisor';

async function tarOf(files: Record<string, string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of packEntries([], { extra: Object.entries(files).map(([name, content]) => ({ name, content: Buffer.from(content) })) })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

test('SAASBENCH_SNAPSHOT_KEEP=1: only the newest snapshot stays in the store; the run lists all three, the older two marked deleted', async () => {
  const env = { SAASBENCH_SNAPSHOT_DIR: mkdtempSync(join(tmpdir(), 'snap-keep-')), SAASBENCH_SNAPSHOT_KEEP: '1' };
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const sandbox = {
      // archiveIn's one exec: each script's exit code in `codes`, then its archive as 0, 1, …
      execBytes: async (_c: string, cmd: string[]) => {
        const n = (cmd[2].match(/echo \$\? >>/g) ?? []).length;
        const files: Record<string, string> = { codes: '0\n'.repeat(n) };
        for (let k = 0; k < n; k++) files[String(k)] = `part ${k}`;
        return { exitCode: 0, stdout: await tarOf(files), stderr: '', timedOut: false };
      },
    } as unknown as SandboxBackend;
    const ctx = { sandbox, rolloutKey: 'keep-test', model: 'm', container: 'app', workspace: '/w', task: { environment: {} }, stack: { services: {} } } as unknown as AgentContext;
    const driver = { name: 'noop', sessionPaths: [] } as unknown as AgentDriver;
    const state = { priorAgentMs: 0, attemptStartedAt: 0, lastBeatAt: 0, history: [] } as unknown as SupervisionState;
    const snaps = agentSnapshots(ctx, driver, 'app', { everySeconds: 0.001, beat: () => undefined, log: pino({ level: 'silent' }) });
    for (let i = 0; i < 2; i++) {
      await new Promise((r) => setTimeout(r, 5));
      await snaps.onPoll(state);
    }
    assert.ok(await snaps.final(state), 'the final snapshot was taken');
    assert.deepEqual(snaps.taken.map((m) => [m.seq, m.final, m.deleted ?? false]), [[1, false, true], [2, false, true], [3, true, false]]);
    assert.deepEqual((await listSnapshots(snapshotStore(), 'keep-test')).map((s) => s.seq), [3], 'the store keeps the newest only');
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
    Object.assign(process.env, saved);
  }
});
