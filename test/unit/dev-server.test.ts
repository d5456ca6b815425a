import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  DevServerConfigError,
  devServerArgs,
  ensureDevServer,
  loadDevServerConfig,
  parseDevServerConfig,
  resolveDevServer,
} from '../../src/temporal/dev-server';
import { ToolNotFoundError, readToolsEnv, temporalBin, temporalTestServerBin } from '../../src/temporal/tools';
import { repoRoot } from '../../src/paths';

const FILE = '/some/where/temporal-dev.yml';

function configError(text: string): DevServerConfigError {
  try {
    parseDevServerConfig(text, FILE);
  } catch (err) {
    assert.ok(err instanceof DevServerConfigError, `expected DevServerConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the config to be rejected');
}

test('repoRoot finds the saasbench package from the compiled location', () => {
  const root = repoRoot();
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.equal(pkg.name, 'saasbench');
  assert.ok(fs.existsSync(path.join(root, 'temporal-dev.yml')));
});

test('the shipped temporal-dev.yml parses with the documented values', () => {
  const cfg = loadDevServerConfig();
  assert.equal(cfg.ip, '127.0.0.1');
  assert.equal(cfg.port, 7233);
  assert.equal(cfg.uiPort, 8233);
  assert.equal(cfg.namespace, 'default');
  assert.equal(cfg.dbFile, '.saasbench/temporal/dev.db');
  assert.deepEqual(cfg.searchAttributes, {
    SaasbenchTask: 'Keyword',
    SaasbenchAgent: 'Keyword',
    SaasbenchModel: 'Keyword',
    SaasbenchSweep: 'Keyword',
    SaasbenchPhase: 'Keyword',
    SaasbenchScore: 'Double',
    SaasbenchCostUsd: 'Double',
  });
});

test('a non-numeric port is rejected, naming the file and the key', () => {
  const err = configError('port: "abc"\n');
  assert.equal(err.file, FILE);
  assert.match(err.message, /\/some\/where\/temporal-dev\.yml/);
  assert.ok(err.problems.some((p) => p.startsWith('port:')), err.message);
  assert.match(err.message, /number/);
});

test('an out-of-range uiPort is rejected with its key path', () => {
  const err = configError('uiPort: 70000\n');
  assert.ok(err.problems.some((p) => p.startsWith('uiPort:')), err.message);
});

test('a bad search attribute type names the nested key path', () => {
  const err = configError('searchAttributes:\n  SaasbenchScore: Float\n');
  assert.ok(err.problems.some((p) => p.startsWith('searchAttributes.SaasbenchScore:')), err.message);
});

test('unknown keys are rejected, not ignored', () => {
  const err = configError('port: 7233\nprot: 7234\n');
  assert.deepEqual(err.problems, ['prot: unknown key "prot"']);
});

test('invalid YAML names the file', () => {
  const err = configError('port: [1, 2\n');
  assert.match(err.message, /temporal-dev\.yml/);
  assert.match(err.message, /invalid YAML/);
});

test('a missing config file is a DevServerConfigError naming the file', () => {
  assert.throws(
    () => loadDevServerConfig('/nonexistent/temporal-dev.yml'),
    (err: unknown) => err instanceof DevServerConfigError && /\/nonexistent\/temporal-dev\.yml/.test(err.message),
  );
});

test('overrides and path resolution; start-dev argv carries ports, db and search attributes', () => {
  const cfg = resolveDevServer({ port: 17000, uiPort: 18000, dbFile: 'x/dev.db' });
  assert.equal(cfg.address, '127.0.0.1:17000');
  assert.equal(cfg.uiUrl, 'http://127.0.0.1:18000');
  assert.equal(cfg.dbFile, path.join(repoRoot(), 'x/dev.db'));
  assert.ok(path.isAbsolute(cfg.logFile) && path.isAbsolute(cfg.pidFile));
  const args = devServerArgs(cfg);
  const flag = (name: string) => args[args.indexOf(name) + 1];
  assert.deepEqual(args.slice(0, 2), ['server', 'start-dev']);
  assert.equal(flag('--port'), '17000');
  assert.equal(flag('--ui-port'), '18000');
  assert.equal(flag('--db-filename'), cfg.dbFile);
  assert.equal(flag('--ip'), '127.0.0.1');
  const attrs = args.filter((_, i) => args[i - 1] === '--search-attribute');
  assert.equal(attrs.length, 7);
  assert.ok(attrs.includes('SaasbenchScore=Double'));
  assert.ok(attrs.includes('SaasbenchCostUsd=Double'));
});

test('TEMPORAL_ADDRESS short-circuits: nothing is started or probed', async () => {
  const handle = await ensureDevServer({
    env: { TEMPORAL_ADDRESS: '127.0.0.1:1', TEMPORAL_NAMESPACE: 'ns1' },
    // would fail if it tried to read this config
    configPath: '/nonexistent/temporal-dev.yml',
  });
  assert.deepEqual(handle, { address: '127.0.0.1:1', namespace: 'ns1', external: true, started: false });
});

test('tool lookup: env var, then tools.env, then PATH, then venv; clear error otherwise', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'saasbench-tools-'));
  try {
    const exe = (p: string) => {
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, '#!/bin/sh\n', { mode: 0o755 });
      return p;
    };
    // nothing anywhere
    assert.throws(
      () => temporalBin({ root, env: { PATH: '' } }),
      (err: unknown) => err instanceof ToolNotFoundError && /npm run setup/.test(err.message),
    );
    // venv
    const venv = exe(path.join(root, '.saasbench/venv/bin/temporal'));
    assert.equal(temporalBin({ root, env: { PATH: '' } }), venv);
    // PATH beats venv
    const onPath = exe(path.join(root, 'pathdir/temporal'));
    assert.equal(temporalBin({ root, env: { PATH: path.join(root, 'pathdir') } }), onPath);
    // tools.env beats PATH
    const listed = exe(path.join(root, 'listed/temporal-test-server'));
    fs.writeFileSync(path.join(root, '.saasbench/tools.env'), `# generated\nTEMPORAL_TEST_SERVER_BIN=${listed}\n`);
    assert.deepEqual(readToolsEnv(root), { TEMPORAL_TEST_SERVER_BIN: listed });
    fs.writeFileSync(path.join(root, '.saasbench/tools.env'), `# generated\n\nexport A="/opt/with space/bin"\nB='/x'  # note\nC = /y\n`);
    assert.deepEqual(readToolsEnv(root), { A: '/opt/with space/bin', B: '/x', C: '/y' }, 'dotenv: export, quotes, comments, spaces around =');
    fs.writeFileSync(path.join(root, '.saasbench/tools.env'), `# generated\nTEMPORAL_TEST_SERVER_BIN=${listed}\n`);
    assert.equal(temporalTestServerBin({ root, env: { PATH: path.join(root, 'pathdir') } }), listed);
    // explicit env var beats all; a wrong explicit path is an error, not a silent fallback
    assert.equal(temporalBin({ root, env: { PATH: '', TEMPORAL_BIN: onPath } }), onPath);
    assert.throws(
      () => temporalBin({ root, env: { PATH: '', TEMPORAL_BIN: '/nonexistent/temporal' } }),
      (err: unknown) => err instanceof ToolNotFoundError && /TEMPORAL_BIN/.test(err.message),
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
