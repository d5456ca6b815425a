#!/usr/bin/env node
// Runs every compiled test (dist/test/**/*.test.js) with `node --test --test-concurrency=1`.
// Node 20's --test does not expand globs, so the files are collected here and passed explicitly.
//
//   SAASBENCH_TEST_FILTER=dev-server node scripts/run-tests.js   # substring filter on the path
//   node scripts/run-tests.js --test-reporter=spec               # extra args go to node --test
//
// Compiled tests whose source (test/**/*.test.ts) no longer exists are skipped: tsc never deletes
// stale output, and a deleted test must not keep running from dist/.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const distTest = path.join(root, 'dist', 'test');

function collect(dir) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out = [];
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...collect(p));
    else if (e.isFile() && e.name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const all = collect(distTest).sort();
const live = all.filter((f) => {
  const rel = path.relative(path.join(root, 'dist'), f); // test/.../x.test.js
  const src = path.join(root, rel.replace(/\.js$/, '.ts'));
  return fs.existsSync(src);
});
const filter = process.env.SAASBENCH_TEST_FILTER;
const files = filter ? live.filter((f) => path.relative(root, f).includes(filter)) : live;

if (files.length === 0) {
  console.error(
    filter
      ? `run-tests: no test file under dist/test matches SAASBENCH_TEST_FILTER=${JSON.stringify(filter)}`
      : 'run-tests: no *.test.js under dist/test — did `npm run build` run?',
  );
  process.exit(1);
}
if (filter) console.error(`run-tests: ${files.length} file(s) match ${JSON.stringify(filter)}`);

// Leaks are bugs: any labelled Docker resource the suite leaves behind fails the run.
function labelled() {
  const { execFileSync } = require('node:child_process');
  const list = (args) => {
    try {
      return execFileSync('docker', args, { encoding: 'utf8' }).split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  return [
    ...list(['ps', '-a', '--filter', 'label=saasbench.rollout', '--format', 'container {{.Names}}']),
    ...list(['network', 'ls', '--filter', 'label=saasbench.rollout', '--format', 'network {{.Name}}']),
    ...list(['volume', 'ls', '--filter', 'label=saasbench.rollout', '--format', 'volume {{.Name}}']),
  ];
}
const before = new Set(labelled());

const child = spawn(
  process.execPath,
  // A per-test ceiling (15 min, above the slowest test): a hung test becomes one named failure
  // instead of a suite that never ends. Later arguments override it.
  ['--test', '--test-concurrency=1', '--test-timeout=900000', ...process.argv.slice(2), ...files.map((f) => path.relative(root, f))],
  { cwd: root, stdio: 'inherit' },
);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => child.kill(sig));
}
child.on('exit', (code, signal) => {
  if (signal) {
    console.error(`run-tests: node --test killed by ${signal}`);
    process.exit(1);
  }
  const leaked = labelled().filter((r) => !before.has(r));
  if (leaked.length) {
    console.error(`run-tests: the suite left ${leaked.length} labelled Docker resource(s) behind:\n  ${leaked.join('\n  ')}`);
    process.exit(code || 1);
  }
  if (code === 0) console.error('run-tests: no labelled container, network or volume left behind');
  process.exit(code ?? 1);
});
