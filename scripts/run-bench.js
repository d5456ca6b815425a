#!/usr/bin/env node
// Runs every compiled benchmark (dist/bench/*.js) one after another, or those named on the command line.
const { readdirSync, existsSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

const dir = join(__dirname, '..', 'dist', 'bench');
if (!existsSync(dir)) {
  console.error('no compiled benchmarks: run `npm run build` first');
  process.exit(1);
}
const wanted = process.argv.slice(2);
const files = readdirSync(dir).filter((f) => f.endsWith('.js') && (!wanted.length || wanted.some((w) => f.includes(w)))).sort();
let failed = 0;
for (const f of files) {
  console.log(`\n== ${f.replace(/\.js$/, '')} ==`);
  const r = spawnSync(process.execPath, [join(dir, f)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
