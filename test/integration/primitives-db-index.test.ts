import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { P11 } from '../../src/primitives/p11-db-index-check';
import type { PrimitiveEnv } from '../../src/primitives/types';
import { startPostgres, type TestPostgres } from '../fixtures/primitives/container-env';
import { httpEnv, makeCtx, runPrimitive } from '../fixtures/primitives/harness';

let pg: TestPostgres;
let env: PrimitiveEnv;

before(async () => {
  pg = await startPostgres();
  await pg.sql(`
    CREATE TABLE topics (id bigserial PRIMARY KEY, category_id int, user_id int, bumped_at timestamp);
    CREATE INDEX index_topics_on_category_id ON topics (category_id);
    CREATE INDEX index_topics_on_bumped_at ON topics (bumped_at DESC);
    CREATE TABLE posts (id bigserial PRIMARY KEY, topic_id int, post_number int, user_id int, sort_order int, raw text);
    CREATE UNIQUE INDEX index_posts_on_topic_id_and_post_number ON posts (topic_id, post_number);
    CREATE INDEX idx_posts_user_inc ON posts (user_id) INCLUDE (raw);
    CREATE TABLE users (id serial PRIMARY KEY, username text, username_lower text);
    CREATE INDEX index_users_on_lower_username ON users (lower(username));
    CREATE TABLE "Audit" (id serial PRIMARY KEY, "actorId" int);
    CREATE INDEX "Audit_actorId_idx" ON "Audit" ("actorId");
    CREATE TABLE audit (id serial PRIMARY KEY, at timestamp);
  `);
  env = httpEnv('http://127.0.0.1:9', { sql: pg.sql });
});
after(async () => {
  await pg?.remove();
});

const run = (inputs: Record<string, unknown>) => runPrimitive(P11, inputs, makeCtx(env));

describe('P11 db_index_check against PostgreSQL', () => {
  test('the published aoiwqoiq shape: {columns} lists checked against the real key columns', async () => {
    const ok = await run({ table: 'posts', expected_indexes: [{ columns: ['topic_id', 'post_number'] }, { columns: ['user_id'] }] });
    assert.equal(ok.passed, true, ok.message);
    const missing = await run({ table: 'posts', expected_indexes: [{ columns: ['topic_id', 'post_number'] }, { columns: ['user_id'] }, { columns: ['topic_id', 'sort_order'] }] });
    assert.equal(missing.passed, false);
    assert.match(missing.message, /no index on \(topic_id, sort_order\)/);
    assert.match(missing.message, /index_posts_on_topic_id_and_post_number\(topic_id, post_number\) unique/);
  });
  test('leading columns serve a prefix; order matters; exact; unique; INCLUDE columns are not keys', async () => {
    assert.equal((await run({ table: 'posts', expected_indexes: [{ columns: ['topic_id'] }] })).passed, true);
    assert.equal((await run({ table: 'posts', expected_indexes: [{ columns: ['post_number'] }] })).passed, false);
    assert.equal((await run({ table: 'posts', expected_indexes: [{ columns: ['topic_id'], exact: true }] })).passed, false);
    assert.equal((await run({ table: 'posts', expected_indexes: [{ columns: ['topic_id', 'post_number'], unique: true }] })).passed, true);
    assert.equal((await run({ table: 'topics', expected_indexes: [{ columns: ['category_id'], unique: true }] })).passed, false);
    assert.equal((await run({ table: 'posts', expected_indexes: [{ columns: ['user_id', 'raw'] }] })).passed, false);
    assert.equal((await run({ table: 'posts', expected_indexes: [{ columns: ['id'], unique: true }] })).passed, true, 'the primary key counts');
  });
  test('expression indexes as PostgreSQL prints them; a column index is not an expression index', async () => {
    assert.equal((await run({ table: 'users', expected_indexes: [{ columns: ['lower(username)'] }] })).passed, true);
    const r = await run({ table: 'users', expected_indexes: [{ columns: ['username_lower'] }] });
    assert.equal(r.passed, false);
    assert.match(r.message, /index_users_on_lower_username\(lower\(username\)\)/);
  });
  test('names and regexes (the published implementation key)', async () => {
    assert.equal((await run({ table: 'topics', expected_indexes: ['index_topics_on_bumped_at'] })).passed, true);
    assert.equal((await run({ table: 'topics', indexes: ['bumped_at DESC'] })).passed, true);
    assert.equal((await run({ table: 'topics', indexes: ['^idx_nothing'] })).passed, false);
  });
  test('table names: exact wins over case-insensitive; quoted columns; a missing table fails', async () => {
    assert.equal((await run({ table: 'Audit', expected_indexes: [{ columns: ['actorId'] }] })).passed, true);
    assert.equal((await run({ table: 'audit', expected_indexes: [{ columns: ['actorId'] }] })).passed, false, 'the lower-case table has no such index');
    const gone = await run({ table: 'nope', expected_indexes: [{ columns: ['id'] }] });
    assert.match(gone.message, /table nope not found in schema public/);
  });
});
