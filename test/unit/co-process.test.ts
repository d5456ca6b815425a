import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { coRun } from '../../src/co-process';

test('coRun: stdout and stderr apart, exit codes, stdin, quoting, a missing binary', async () => {
  const r = await coRun('sh', ['-c', 'echo out; echo err >&2; exit 3']);
  assert.deepEqual(r, { ok: false, code: 3, stdout: 'out\n', stderr: 'err\n' });
  const cat = await coRun('cat', [], { input: "line 1\n'quoted' $HOME `x`\n" });
  assert.equal(cat.stdout, "line 1\n'quoted' $HOME `x`\n", 'stdin verbatim, nothing expanded');
  const args = await coRun('printf', ['%s|', "a b", "it's", '$(id)']);
  assert.equal(args.stdout, "a b|it's|$(id)|");
  const missing = await coRun('saasbench-no-such-binary', []);
  assert.equal(missing.ok, false);
  assert.equal(missing.code, 127);
  assert.match(missing.stderr, /not found/);
});

test('coRun: requests run one at a time and each gets its own answer; a timeout restarts the shell', async () => {
  const many = await Promise.all(Array.from({ length: 20 }, (_, k) => coRun('sh', ['-c', `sleep 0.0${k % 3}; printf ${k}`])));
  assert.deepEqual(many.map((r) => r.stdout), Array.from({ length: 20 }, (_, k) => String(k)));
  const slow = await coRun('sleep', ['5'], { timeoutMs: 200 });
  assert.equal(slow.ok, false);
  assert.match(slow.stderr, /timed out after 200 ms/);
  assert.equal((await coRun('echo', ['again'])).stdout, 'again\n', 'the next request gets a new shell');
  const big = await coRun('head', ['-c', '300000', '/dev/zero']);
  assert.equal(big.stdout.length, 300000);
});

test('coRun: the command shell does not keep its process alive', () => {
  const mod = join(__dirname, '..', '..', 'src', 'co-process.js');
  const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(mod)}).coRun('echo', ['hi']).then((x) => console.log(x.stdout.trim()))`], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'hi');
});
