// The bad-input corpus (test/bad-input/, see its README): every case runs the real CLI
// (`node dist/src/cli/main.js …`) on a malformed task manifest, DAG, compose file, knowledge base,
// sweep file or command line, and must give ONE error line naming the file and the JSON path, with
// the expected text and a non-zero exit — before anything starts: TEMPORAL_ADDRESS points at a
// closed port (a connection attempt would fail differently), no run folder appears, and after the
// corpus no Docker resource of it remains.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../src/paths';
import { labelledLeftovers } from '../helpers/docker';

const ROOT = repoRoot();
const CORPUS = join(ROOT, 'test', 'bad-input');
const TINY = join(ROOT, 'test', 'fixtures', 'tasks', 'tiny');
const MAIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');

interface Expected {
  what: string;
  command: string[];
  exit: number;
  /** "command line", or a path relative to the case folder or to its task folder */
  file: string;
  /** JSON path (or flag) the error names; "" when it is about the whole file */
  path: string;
  /** regex the error line must match */
  error: string;
  remove?: string[];
}

let work: string;
let runsDir: string;
let closedAddress: string;
const cases = readdirSync(CORPUS)
  .filter((n) => statSync(join(CORPUS, n)).isDirectory())
  .sort();

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'saasbench-bad-input-'));
  runsDir = join(work, 'runs');
  cpSync(join(TINY), join(work, '.tiny'), { recursive: true });
  // a port nobody listens on: a CLI that tried to reach Temporal would fail with a connection error
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  closedAddress = `127.0.0.1:${(s.address() as net.AddressInfo).port}`;
  await new Promise<void>((r) => s.close(() => r()));
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the corpus has at least 30 cases, each with an expected.json', () => {
  assert.ok(cases.length >= 30, `${cases.length} cases`);
  for (const c of cases) assert.ok(existsSync(join(CORPUS, c, 'expected.json')), c);
});

/** Copy a case: the tiny task (id bad-input) overlaid with the case's task/ files; {task} {case} {repo} substituted. */
function materialize(name: string): { dir: string; expected: Expected } {
  const dir = join(work, name);
  const task = join(dir, 'task');
  cpSync(join(work, '.tiny'), task, { recursive: true });
  const manifest = join(task, 'task.yaml');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(/^id: tiny$/m, 'id: bad-input'));
  const sub = (s: string) => s.split('{task}').join(task).split('{case}').join(dir).split('{repo}').join(ROOT);
  const copy = (from: string, to: string) => {
    for (const n of readdirSync(from)) {
      const src = join(from, n);
      const dst = join(to, n);
      if (statSync(src).isDirectory()) {
        cpSync(src, dst, { recursive: true, filter: () => true });
        for (const f of walk(dst)) writeFileSync(f, sub(readFileSync(f, 'utf8')));
      } else writeFileSync(dst, sub(readFileSync(src, 'utf8')));
    }
  };
  copy(join(CORPUS, name), dir);
  const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Expected;
  for (const r of expected.remove ?? []) rmSync(join(task, r), { recursive: true, force: true });
  expected.command = expected.command.map(sub);
  return { dir, expected };
}

function walk(d: string): string[] {
  return readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
}

/** The error lines of a CLI run: `tasks validate` lists them under "N problem(s):", the others print them to stderr. */
function errorLines(command: string[], stdout: string, stderr: string): { lines: string[]; header?: string } {
  if (command[0] === 'tasks' && command[1] === 'validate') {
    const m = /^(\d+ problems?):\n([\s\S]*)$/m.exec(stdout);
    const lines = m ? m[2].split('\n').map((l) => l.trim()).filter(Boolean) : [];
    return { lines, header: m?.[1] };
  }
  const lines = stderr
    .split('\n')
    .map((l) => l.trim().replace(/^saasbench: /, ''))
    .filter((l) => l && !/^\(saasbench <command> --help/.test(l));
  return { lines };
}

for (const name of cases) {
  test(`bad input ${name}`, () => {
    const { dir, expected } = materialize(name);
    const r = spawnSync(process.execPath, [MAIN, ...expected.command], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, TEMPORAL_ADDRESS: closedAddress, SAASBENCH_RUNS_DIR: runsDir, SAASBENCH_LOG_LEVEL: 'warn', SAASBENCH_TASKS_BASE: dir },
    });
    const show = `\n--- ${expected.what}\n$ saasbench ${expected.command.join(' ')}\nexit ${r.status}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
    assert.equal(r.status, expected.exit, `exit code${show}`);
    const { lines, header } = errorLines(expected.command, r.stdout, r.stderr);
    if (header !== undefined) assert.equal(header, '1 problem', `one problem${show}`);
    assert.equal(lines.length, 1, `exactly one error line${show}`);
    const line = lines[0];
    const files = expected.file === 'command line' ? ['command line'] : [join(dir, 'task', expected.file), join(dir, expected.file)];
    const file = files.find((f) => line.startsWith(`${f}: `) || line.startsWith(`${f} (node`));
    assert.ok(file, `the error names the file (${files.join(' or ')})${show}`);
    if (expected.path) assert.ok(line.startsWith(`${file}: ${expected.path}`) && /^[:( ]/.test(line.slice(`${file}: ${expected.path}`.length)), `the error names the JSON path ${expected.path}${show}`);
    assert.match(line, new RegExp(expected.error), `the expected text${show}`);
    assert.doesNotMatch(r.stdout + r.stderr, /ECONNREFUSED|TransportError|Failed to connect|\n\s+at /, `no connection attempt, no stack trace${show}`);
    assert.ok(!existsSync(runsDir) || readdirSync(runsDir).length === 0, `no run folder left behind${show}`);
  });
}

test('after the corpus: no labelled Docker resource of it and no run folder remains', () => {
  assert.deepEqual(labelledLeftovers('saasbench.task=bad-input'), []);
  assert.ok(!existsSync(runsDir) || readdirSync(runsDir).length === 0);
});
