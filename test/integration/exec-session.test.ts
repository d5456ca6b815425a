// The agent phase's exec channel (src/sandbox/exec-session.ts, session-backend.ts): a launch that
// keeps its exec open answers later execs exactly as fresh execs would; when the channel is gone
// (the agent killed its shell) execs fall back to Docker; close() leaves nothing running.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Docker from 'dockerode';
import { dockerBackend } from '../../src/sandbox/docker-backend';
import { sessionBackend } from '../../src/sandbox/session-backend';

const docker = new Docker();
let id = '';

before(async () => {
  const c = await docker.createContainer({ Image: 'saasbench/base:bookworm', Cmd: ['sleep', 'infinity'], Labels: { 'saasbench.test': 'exec-session' }, HostConfig: { Init: true } });
  await c.start();
  id = c.id;
});

after(async () => {
  if (id) await docker.getContainer(id).remove({ force: true });
});

const loops = async () => (await dockerBackend().exec(id, ['bash', '-c', 'grep -l saasbench-sessio[n] /proc/[0-9]*/cmdline 2>/dev/null | grep -v self | wc -l'])).stdout.trim();

test('execs through the launch channel answer as fresh execs: codes, streams, bytes, quoting', async () => {
  const plain = dockerBackend();
  const sb = sessionBackend(plain);
  try {
    const d = await sb.execDetached(id, 'exit 0', { controlDir: '/tmp/.saasbench/s1', settleMs: 2000, env: { AGENT_ONLY: 'launch' } });
    assert.equal(d.exited?.exitCode, 0);
    assert.ok(d.session?.open, 'the launch exec is still open');
    const cmds: string[][] = [
      ['bash', '-c', 'echo "out $0"; echo err >&2; exit 7', "it's \"quoted\" $HOME"],
      ['printf', '%s', 'no newline'],
      ['bash', '-c', 'yes 0123456789abcdef | head -c 300000'],
      ['sh', '-c', 'cat /nonexistent'],
      // the launch's environment is the agent's, not the channel's
      ['bash', '-c', 'echo "[${AGENT_ONLY:-}]" "$PATH"'],
    ];
    for (const cmd of cmds) assert.deepEqual(await sb.exec(id, cmd), await plain.exec(id, cmd), cmd.join(' '));
    const bin = await sb.execBytes(id, ['bash', '-c', 'printf "\\x00\\x01\\xff\\n\\x00"']);
    assert.deepEqual(bin.stdout, Buffer.from([0, 1, 255, 10, 0]));
    // several at once are answered in turn
    const many = await Promise.all([1, 2, 3, 4, 5].map((n) => sb.exec(id, ['bash', '-c', `sleep 0.0${n}; echo ${n}`])));
    assert.deepEqual(many.map((r) => r.stdout), ['1\n', '2\n', '3\n', '4\n', '5\n']);
    // an exec with its own environment takes the ordinary path (and still works)
    assert.equal((await sb.exec(id, ['bash', '-c', 'echo $X'], { env: { X: 'own' } })).stdout, 'own\n');
    assert.equal(await loops(), '1');
  } finally {
    sb.close();
  }
  for (let i = 0; i < 50 && (await loops()) !== '0'; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await loops(), '0', 'close() ended the channel in the container');
});

test('the agent kills the channel: execs fall back to Docker; a command past its time gives the channel up', async () => {
  const sb = sessionBackend(dockerBackend());
  try {
    await sb.execDetached(id, 'sleep 30', { controlDir: '/tmp/.saasbench/s2', settleMs: 50 });
    await dockerBackend().exec(id, ['bash', '-c', 'for f in /proc/[0-9]*/cmdline; do grep -q saasbench-sessio[n] "$f" 2>/dev/null && kill -9 "$(basename "$(dirname "$f")")"; done; true']);
    for (let i = 0; i < 50 && (await loops()) !== '0'; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await loops(), '0', 'the channel is gone');
    const r = await sb.exec(id, ['bash', '-c', 'echo still here']);
    assert.deepEqual({ code: r.exitCode, out: r.stdout }, { code: 0, out: 'still here\n' });

    await sb.execDetached(id, 'sleep 30', { controlDir: '/tmp/.saasbench/s3', settleMs: 50 });
    const slow = await sb.exec(id, ['sleep', '5'], { timeoutMs: 300 });
    assert.equal(slow.timedOut, true);
    assert.equal((await sb.exec(id, ['echo', 'after'])).stdout, 'after\n');
  } finally {
    sb.close();
  }
});

// Provision opens the launch's exec ahead (src/sandbox/exec-warm.ts): the launch runs in it, with
// the environment it was given; a waiting shell that died is replaced by a fresh exec.
test('a launch takes the exec opened ahead of it; a dead one is replaced by a fresh exec', async () => {
  let before: string[] = [];
  const running = async () => {
    const ids = (await docker.getContainer(id).inspect()).ExecIDs ?? [];
    const live = await Promise.all(ids.map(async (x) => ((await docker.getExec(x).inspect().catch(() => null))?.Running ? x : null)));
    // an earlier test's channel may still run a command past its time: only new execs count
    return live.filter((x): x is string => x !== null && !before.includes(x)).sort();
  };
  const waitFor = async (ok: (ids: string[]) => boolean) => {
    for (let i = 0; i < 60; i++) {
      const ids = await running();
      if (ok(ids)) return ids;
      await new Promise((r) => setTimeout(r, 50));
    }
    return running();
  };
  before = await running();
  dockerBackend().prewarm!(id);
  const waiting = await waitFor((ids) => ids.length === 1);
  assert.equal(waiting.length, 1, 'one exec waits');
  const value = `it's "quoted" $HOME\nline two`;
  const sb = sessionBackend(dockerBackend());
  try {
    const d = await sb.execDetached(id, 'printf "%s" "$W"; exit 3', { controlDir: '/tmp/.saasbench/w1', settleMs: 2000, env: { W: value } });
    assert.equal(d.exited?.exitCode, 3);
    assert.deepEqual(await running(), waiting, 'the launch and its channel are that exec');
    assert.equal((await dockerBackend().readFile(id, '/tmp/.saasbench/w1/stdout.log'))?.toString('utf8'), value);
    assert.equal((await sb.exec(id, ['bash', '-c', 'echo "[${W:-}]"'])).stdout, '[]\n', 'the channel has not the launch environment');
  } finally {
    sb.close();
  }
  await waitFor((ids) => ids.length === 0);
  dockerBackend().prewarm!(id);
  assert.equal((await waitFor((ids) => ids.length === 1)).length, 1);
  await dockerBackend().exec(id, ['bash', '-c', 'for f in /proc/[0-9]*/cmdline; do grep -q "eval \\"\\$boo[t]\\"" "$f" 2>/dev/null && kill -9 "$(basename "$(dirname "$f")")"; done; true']);
  await waitFor((ids) => ids.length === 0);
  const again = sessionBackend(dockerBackend());
  try {
    const d = await again.execDetached(id, 'exit 0', { controlDir: '/tmp/.saasbench/w2', settleMs: 2000 });
    assert.equal(d.exited?.exitCode, 0, 'launched by a fresh exec');
  } finally {
    again.close();
  }
});
