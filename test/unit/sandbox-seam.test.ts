// Real code driven through the sandbox seam against the in-memory backend (test/helpers/
// memory-backend.ts): if any of it still reached Docker directly, or assumed app ports on
// 127.0.0.1, these would fail here, where no Docker engine is involved.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import pino from 'pino';
import { installIntoContainer } from '../../src/agents/install';
import { oracleAgent } from '../../src/agents/oracle';
import { prepareWorkspace } from '../../src/activities/prepare-workspace';
import { envFromStack, appUrlOf } from '../../src/primitives/env-from-stack';
import { P01 } from '../../src/primitives/p01-file-exists';
import { P02 } from '../../src/primitives/p02-file-content-match';
import { P12 } from '../../src/primitives/p12-docker-exec';
import { loadCompose, setSandboxBackend, SandboxInfraError } from '../../src/sandbox';
import { loadRunnableTask } from '../../src/tasks/load';
import { repoRoot } from '../../src/paths';
import { makeCtx, runPrimitive } from '../fixtures/primitives/harness';
import { MemoryBackend, ok, type ExecCall } from '../helpers/memory-backend';
import { withTransientExecFaults } from '../helpers/faulty-backend';

const log = pino({ level: 'silent' });
const tmp = mkdtempSync(join(tmpdir(), 'sb-seam-'));
after(() => {
  setSandboxBackend(undefined);
  rmSync(tmp, { recursive: true, force: true });
});

/** The few shell commands the code under test sends, answered from the in-memory files. */
function scripted({ cmd, files }: ExecCall) {
  const text = cmd.join(' ');
  const stat = /stat -c %s (\S+) 2>\/dev\/null \|\| echo 0/.exec(text);
  if (stat) return ok(`${files.get(stat[1])?.data.length ?? 0}\n`);
  const kind = /if \[ -d '([^']+)' \]; then echo dir; elif \[ -e '([^']+)' \]/.exec(text);
  if (kind) {
    const p = posix.normalize(kind[1]);
    const isDir = [...files.keys()].some((f) => f.startsWith(`${p}/`));
    return ok(isDir ? 'dir\n' : files.has(p) ? 'file\n' : '');
  }
  if (cmd[0] === 'bash' && cmd[2] === 'echo hello-from-app') return ok('hello-from-app\n');
  return undefined;
}

const task = loadRunnableTask(join(repoRoot(), 'tasks', 'helpdesk'));

async function memStack(mem: MemoryBackend, key: string) {
  return mem.up({ rolloutKey: key, taskId: task.id, project: loadCompose(task.environment.composeFile), images: {} });
}

test('agent install path: the pinned binary is streamed in once, read-only, and skipped when already there', async () => {
  const mem = new MemoryBackend(scripted);
  const bin = join(tmp, 'codex');
  writeFileSync(bin, Buffer.alloc(5000, 7));
  const resolved = { agent: 'codex', name: 'codex', version: '0.128.0', path: bin, size: 5000, source: 'env' as const };
  assert.equal(await installIntoContainer(mem, 'app-1', resolved), '/opt/saasbench/bin/codex');
  const f = mem.fs('app-1').get('/opt/saasbench/bin/codex');
  assert.equal(f?.data.length, 5000);
  assert.equal(f?.mode, 0o555);
  const writes = () => mem.calls.filter((c) => c.op === 'writeFile').length;
  assert.equal(writes(), 1);
  await installIntoContainer(mem, 'app-1', resolved); // an activity retry
  assert.equal(writes(), 1, 'a binary of the same size is not copied again');
});

test('prepareWorkspace and the oracle write the PRD, knowledge base and solution through the factory backend', async () => {
  const mem = new MemoryBackend(scripted);
  setSandboxBackend(mem);
  const stack = await memStack(mem, 'seam1');
  const app = stack.services.app.container;
  const runDir = mkdtempSync(join(tmp, 'run-'));
  await prepareWorkspace({ ref: { rolloutKey: 'seam1', workflowId: 'w', taskDir: task.dir, taskHash: task.hash, runDir, stack }, agent: 'oracle', model: 'none' });
  assert.match(mem.text(app, '/app/task.md') ?? '', /\S/);
  assert.ok(mem.text(app, '/app/knowledge_base.json'));
  await oracleAgent.prepare!({ rolloutKey: 'seam1', sandbox: mem, task, stack, container: app, workspace: '/app', model: 'none', runDir, prompt: '', log });
  assert.ok(mem.text(app, '/app/start.sh'), 'the reference solution landed in the workspace');
  assert.equal(mem.calls.filter((c) => c.op === 'copyDir').length, 1);
});

test('primitives P01, P02 and P12 run through envFromStack on the in-memory backend; URLs come from the backend host', async () => {
  const mem = new MemoryBackend(scripted, '10.77.0.5');
  const stack = await memStack(mem, 'seam2');
  const app = stack.services.app.container;
  await mem.writeFiles(app, '/app', [{ path: 'config/settings.yml', content: 'feature_x: enabled\n' }]);
  const env = envFromStack(task, stack, join(tmp, 'artifacts'), log, mem);
  assert.equal(env.baseUrl, `http://10.77.0.5:${stack.services.app.ports['8080/tcp']}`);
  assert.equal(appUrlOf(task, stack, mem), env.baseUrl);
  const run = (p: Parameters<typeof runPrimitive>[0], input: Record<string, unknown>) => runPrimitive(p, input, makeCtx(env));
  assert.equal((await run(P01, { path: 'config/settings.yml' })).passed, true);
  assert.equal((await run(P01, { path: 'config/missing.yml' })).passed, false);
  assert.equal((await run(P02, { path: 'config/settings.yml', pattern: 'feature_x: enabled' })).passed, true);
  assert.equal((await run(P02, { path: 'config/settings.yml', pattern: 'feature_y' })).passed, false);
  const p12 = await run(P12, { command: 'echo hello-from-app', expect_stdout_contains: 'hello-from-app' });
  assert.equal((await run(P12, { command: 'echo hello-from-app', expect_stdout_contains: 'goodbye' })).passed, false);
  assert.equal(p12.passed, true, p12.message);
  assert.ok(mem.calls.some((c) => c.op === 'exec' && c.container === app && c.detail.includes('echo hello-from-app')));
});

test('withTransientExecFaults: the next N execs throw a retryable sandbox error, then calls pass through', async () => {
  const mem = new MemoryBackend(scripted);
  const faults = withTransientExecFaults(mem, 2);
  for (let i = 0; i < 2; i++) {
    await assert.rejects(faults.backend.exec('c', ['bash', '-c', 'echo hello-from-app']), (e: Error) => e instanceof SandboxInfraError && e.nonRetryable === false && /injected transient fault/.test(e.message));
  }
  assert.equal((await faults.backend.exec('c', ['bash', '-c', 'echo hello-from-app'])).stdout, 'hello-from-app\n');
  assert.equal(faults.injected, 2);
  assert.equal(faults.remaining, 0);
  await faults.backend.writeFiles('c', '/x', [{ path: 'y', content: 'z' }]);
  assert.equal(mem.text('c', '/x/y'), 'z', 'other operations reach the wrapped backend');
});

test('extractArchive (re-scoring restores a workspace snapshot) unpacks a gzipped tar into the directory', async () => {
  const src = mkdtempSync(join(tmp, 'ws-'));
  writeFileSync(join(src, 'server.js'), 'listen(8080)\n');
  const tgz = join(tmp, 'ws.tar.gz');
  execFileSync('tar', ['-C', src, '-czf', tgz, '.']);
  const mem = new MemoryBackend();
  await mem.extractArchive('app', '/app', readFileSync(tgz));
  assert.equal(mem.text('app', '/app/server.js'), 'listen(8080)\n');
});
