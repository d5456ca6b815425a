import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { P01 } from '../../src/primitives/p01-file-exists';
import { P02 } from '../../src/primitives/p02-file-content-match';
import { P03 } from '../../src/primitives/p03-file-count';
import { P12 } from '../../src/primitives/p12-docker-exec';
import { runNode } from '../../src/primitives/run-chain';
import type { PrimitiveEnv } from '../../src/primitives/types';
import type { DagNode } from '../../src/model/dag';
import { containerEnv, startContainer, type TestContainer } from '../fixtures/primitives/container-env';
import { makeCtx, runPrimitive } from '../fixtures/primitives/harness';

let app: TestContainer;
let db: TestContainer;
let env: PrimitiveEnv;

const SETUP = `
set -e
mkdir -p /app/config /app/db/migrate /app/frontend /app/themes/a /app/themes/b /app/.hidden /app/app/models /app/empty-dir
printf "source 'https://rubygems.org'\\ngem 'rails', '~> 7.1'\\ngem 'pg'\\n" > /app/Gemfile
echo 'Rails.application.routes.draw do; end' > /app/config/routes.rb
echo 'port 3000' > /app/config/puma.rb
echo 'adapter: postgresql' > /app/config/database.yml
for i in $(seq -w 1 12); do echo "class M$i; end" > /app/db/migrate/20240101000$i_m$i.rb; done
echo 'ActiveRecord::Schema.define' > /app/db/schema.rb
echo '{}' > /app/frontend/package.json
echo '{}' > /app/themes/a/package.json
echo '{}' > /app/themes/b/package.json
echo 'x' > /app/.hidden/secret.rb
echo 'class User; end' > /app/app/models/user.rb
echo 'class Post; end' > /app/app/models/post.rb
`;

before(async () => {
  [app, db] = await Promise.all([
    startContainer(undefined, ['--hostname', 'app-box']),
    startContainer(undefined, ['--hostname', 'db-box']),
  ]);
  const r = await app.sh(SETUP);
  assert.equal(r.exitCode, 0, r.stderr);
  env = containerEnv(app, { services: { db } });
});

after(async () => {
  await Promise.all([app?.remove(), db?.remove()]);
});

const run = (p: Parameters<typeof runPrimitive>[0], inputs: unknown) => runPrimitive(p, inputs, makeCtx(env));

describe('P01 file_exists', () => {
  test('relative file under the workspace; absolute path kept', async () => {
    assert.equal((await run(P01, { path: 'Gemfile', type: 'file' })).passed, true);
    assert.equal((await run(P01, { path: '/etc/hostname' })).passed, true);
    const miss = await run(P01, { path: 'Procfile' });
    assert.equal(miss.passed, false);
    assert.match(miss.message, /\/app\/Procfile/);
  });
  test('kinds: dir/directory need a directory; a directory is not a file', async () => {
    assert.equal((await run(P01, { path: 'config', type: 'dir' })).passed, true);
    assert.equal((await run(P01, { path: 'config', type: 'directory' })).passed, true);
    const f = await run(P01, { path: 'config' });
    assert.equal(f.passed, false);
    assert.match(f.message, /is a dir/);
    assert.equal((await run(P01, { path: 'Gemfile', type: 'dir' })).passed, false);
  });
  test('path_any_of: any candidate; data names the match', async () => {
    const out = await run(P01, { path_any_of: ['config/unicorn.rb', 'config/puma.rb', 'Procfile'], type: 'file' });
    assert.equal(out.passed, true);
    assert.equal(out.data?.matched, '/app/config/puma.rb');
    assert.equal((await run(P01, { path_any_of: 'config/unicorn.rb' })).passed, false);
  });
});

describe('P02 file_content_match', () => {
  test('contains is case-sensitive', async () => {
    assert.equal((await run(P02, { path: 'Gemfile', match_type: 'contains', pattern: 'rails' })).passed, true);
    assert.equal((await run(P02, { path: 'Gemfile', pattern: 'Rails' })).passed, false);
  });
  test('regex is multiline (^ matches at each line) and reports the line', async () => {
    const out = await run(P02, { path: 'Gemfile', match_type: 'regex', pattern: "^gem 'pg'$" });
    assert.equal(out.passed, true);
    assert.equal(out.data?.line, 3);
    assert.equal((await run(P02, { path: 'Gemfile', match_type: 'regex', pattern: '^rails' })).passed, false);
  });
  test('not_contains passes only on an existing file without the text', async () => {
    assert.equal((await run(P02, { path: 'Gemfile', match_type: 'not_contains', pattern: 'sinatra' })).passed, true);
    assert.equal((await run(P02, { path: 'Gemfile', match_type: 'not_contains', pattern: 'rails' })).passed, false);
    assert.equal((await run(P02, { path: 'nope.txt', match_type: 'not_contains', pattern: 'x' })).passed, false);
  });
  test('path_any_of: the first existing candidate is the one checked', async () => {
    const out = await run(P02, { path_any_of: ['config/redis.yml', 'config/database.yml', 'config/puma.rb'], match_type: 'regex', pattern: '(database|adapter)' });
    assert.equal(out.passed, true);
    assert.equal(out.data?.path, '/app/config/database.yml');
    const first = await run(P02, { path_any_of: ['config/database.yml', 'config/puma.rb'], pattern: 'port' });
    assert.equal(first.passed, false, 'puma.rb has "port" but database.yml is checked');
    assert.equal(first.data?.path, '/app/config/database.yml');
  });
  test('a directory is not a candidate file', async () => {
    assert.equal((await run(P02, { path: 'config', pattern: 'x' })).passed, false);
  });
});

describe('P03 file_count', () => {
  test('files under a base dir, with min/max', async () => {
    const out = await run(P03, { glob: '*.rb', base_dir: 'db/migrate', min_expected: 10 });
    assert.equal(out.passed, true, out.message);
    assert.equal(out.data?.count, 12);
    assert.equal((await run(P03, { glob: '*.rb', base_dir: 'db/migrate', min_expected: 13 })).passed, false);
    assert.equal((await run(P03, { glob: '*.rb', base_dir: 'db/migrate', max_expected: 11 })).passed, false);
  });
  test('brace expansion and ** (zero or more dirs)', async () => {
    const out = await run(P03, { glob: '{schema.rb,structure.sql,migrate/*.rb,migrate/**/*.rb}', base_dir: 'db', min_expected: 1 });
    assert.equal(out.data?.count, 13);
    assert.equal((await run(P03, { glob: 'app/**/*.rb', min_expected: 2 })).data?.count, 2);
  });
  test('best count across base_dir_any_of; missing dirs count 0', async () => {
    const out = await run(P03, { glob: '**/package.json', base_dir_any_of: ['app/assets/javascripts', 'frontend', 'themes', '.'], min_expected: 1 });
    assert.equal(out.data?.count, 3);
    assert.equal(out.data?.best_dir, '/app');
    const none = await run(P03, { glob: '**/*', base_dir: 'nowhere' });
    assert.equal(none.passed, false);
    assert.match(none.message, /missing/);
  });
  test('files only by default; a trailing / counts directories; dotfiles only when named', async () => {
    assert.equal((await run(P03, { glob: '*', base_dir: 'db' })).data?.count, 1, 'schema.rb, not migrate/');
    assert.equal((await run(P03, { glob: '*/', base_dir: 'db' })).data?.count, 1, 'migrate/');
    assert.equal((await run(P03, { glob: '*/', min_expected: 1 })).data?.count, 6, 'config db frontend themes app empty-dir');
    assert.equal((await run(P03, { glob: '**/secret.rb' })).data?.count, 0);
    assert.equal((await run(P03, { glob: '.hidden/*.rb' })).data?.count, 1);
  });
  test('default glob counts every file in the workspace', async () => {
    const out = await run(P03, { min_expected: 20 });
    assert.equal(out.data?.count, 22, '4 config + 12 migrations + schema + 3 package.json + 2 models; .hidden excluded');
  });
});

describe('P12 docker_exec', () => {
  test('exit 0 passes; capture takes the last non-empty stdout line, trimmed', async () => {
    const ctx = makeCtx(env);
    const out = await runPrimitive(P12, { command: 'echo noise; echo "  key-123  "; echo; echo oops >&2', capture_stdout_as: 'api_key' }, ctx);
    assert.equal(out.passed, true, out.message);
    assert.deepEqual(ctx.state.exports, { api_key: 'key-123' });
  });
  test('runs in the workspace under bash', async () => {
    const ctx = makeCtx(env);
    await runPrimitive(P12, { command: 'cd /app && [[ -f Gemfile ]] && pwd', capture_stdout_as: 'wd' }, ctx);
    assert.equal(ctx.state.vars.wd, '/app');
  });
  test('exit codes: default 0, expect_exit_code, null disables, expect_success', async () => {
    const bad = await run(P12, { command: 'exit 3' });
    assert.equal(bad.passed, false);
    assert.match(bad.message, /exit code 3, expected 0/);
    assert.equal((await run(P12, { command: 'exit 3', expect_exit_code: 3 })).passed, true);
    assert.equal((await run(P12, { command: 'exit 3', expect_exit_code: null })).passed, true);
    assert.equal((await run(P12, { command: 'exit 3', expect_success: false })).passed, true);
    assert.equal((await run(P12, { command: 'true', expect_success: false })).passed, false);
    assert.equal((await run(P12, { command: 'false', expect_success: true })).passed, false);
  });
  test('expect_output_contains looks at stdout and stderr', async () => {
    assert.equal((await run(P12, { command: 'echo done >&2', expect_output_contains: 'done' })).passed, true);
    assert.equal((await run(P12, { command: 'echo done', expect_output_contains: 'DONE' })).passed, false);
  });
  test('timeout → fail "timed out after Ns"', async () => {
    const t0 = Date.now();
    const out = await run(P12, { command: 'sleep 30', timeout_seconds: 1 });
    assert.equal(out.passed, false);
    assert.match(out.message, /timed out after 1s/);
    assert.ok(Date.now() - t0 < 10_000);
  });
  test('container names map onto services; service must be known', async () => {
    const host = async (inputs: Record<string, unknown>) => {
      const ctx = makeCtx(env);
      const out = await runPrimitive(P12, { command: 'hostname', capture_stdout_as: 'h', ...inputs }, ctx);
      return out.passed ? ctx.state.vars.h : out.message;
    };
    assert.equal(await host({}), 'app-box');
    assert.equal(await host({ container: 'task_aoiwqoiq-app', expect_success: true }), 'app-box');
    assert.equal(await host({ container: 'lago-smoke-db' }), 'db-box');
    assert.equal(await host({ container: 'db' }), 'db-box');
    assert.equal(await host({ container: 'something-else' }), 'app-box');
    assert.equal(await host({ service: 'db' }), 'db-box');
    assert.match(String(await host({ service: 'redis' })), /unknown service "redis"/);
    assert.match(String(await host({ service: 'app', container: 'x_db' })), /maps to service "db"/);
  });
  test('empty stdout with capture fails', async () => {
    const out = await run(P12, { command: 'true', capture_stdout_as: 'x' });
    assert.equal(out.passed, false);
    assert.match(out.message, /stdout is empty/);
  });
  test('{{previous.stdout}} in the next step reads this output (published pattern)', async () => {
    const node: DagNode = {
      id: 'EXEC_CHAIN', description: '', prereqs: [],
      chain: [
        { type: 'P12', inputs: { command: 'echo abc123' } },
        { type: 'P12', inputs: { command: 'test "{{previous.stdout}}" = abc123' } },
      ],
      scoring: { category: 'x', subcategory: '', method: 'binary', maxScore: 1 },
    };
    const r = await runNode(node, env, { judgeEnabled: false, vars: {} });
    assert.equal(r.status, 'PASSED', r.message);
  });
});
