// Logical dumps of a stack's databases (src/snapshots/db-dump.ts), as snapshots take and restore
// them: a real PostgreSQL (the local stand-in image) and a real MySQL-kind server (MariaDB, the
// image of the primitive tests), both in one labelled stack. Rows with a quote, non-ASCII text, a
// newline and a NULL go through dump → damage → restore and must come back exactly, the id
// counter included; a wrong password fails with an error naming the engine, the database and
// the server's reason. (MongoDB: no local image has mongodump; not covered here.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { dockerBackend, downStack, loadCompose, upStack, type StackHandle } from '../../src/sandbox';
import { STANDINS, buildStandin } from '../../src/sandbox/standins';
import { DatabaseSchema, type DatabaseTarget } from '../../src/model/database';
import { dumpDatabase, restoreDatabase } from '../../src/snapshots/db-dump';
import { repoRoot } from '../../src/paths';
import { buildMariadbImage } from '../fixtures/primitives/container-env';
import { labelledFor } from '../helpers/docker';

const ROOT = repoRoot();
const KEY = `itest-dbdump.${process.pid}-${Date.now().toString(36)}`;
const sb = dockerBackend();
let stack: StackHandle | undefined;

const PG = DatabaseSchema.parse({ kind: 'postgres', service: 'pg', user: 'dumper', password: 'dump-pw', name: 'shop' });
const MY = DatabaseSchema.parse({ kind: 'mysql', service: 'maria', user: 'app', password: 'apppw', name: 'app' });

before(
  async () => {
    // both idempotent: seconds once the images exist (scripts/setup.sh, standins.test.ts, primitives-db-engines.test.ts)
    const pgImage = STANDINS.find((s) => s.name === 'postgres')!;
    await buildStandin(ROOT, pgImage);
    const mariadb = await buildMariadbImage();
    const project = loadCompose(join(ROOT, 'test', 'fixtures', 'compose', 'db-dump', 'docker-compose.yml'), { processEnv: {} });
    stack = await upStack({ rolloutKey: KEY, taskId: 'db-dump', project, images: { pg: pgImage.tag, maria: mariadb }, healthTimeoutMs: 90_000 });
  },
  { timeout: 900_000 },
);

after(async () => {
  await downStack(KEY).catch(() => undefined);
  assert.deepEqual(labelledFor(KEY), []);
});

/** one engine's client in its own container: run statements, read rows as lines of tab-separated fields */
interface Engine {
  target: DatabaseTarget;
  container: () => string;
  sql(statements: string): Promise<string>;
}

const engine = (target: DatabaseTarget, argv: string[], env: Record<string, string>): Engine => {
  const container = () => stack!.services[target.service].container;
  return {
    target,
    container,
    async sql(statements) {
      const r = await sb.exec(container(), [...argv, statements], { env, timeoutMs: 30_000 });
      assert.equal(r.exitCode, 0, `${target.kind}: ${statements}\n${r.stderr}`);
      return r.stdout;
    },
  };
};

const postgres = engine(PG, ['psql', '-h', '127.0.0.1', '-U', 'dumper', '-d', 'shop', '-v', 'ON_ERROR_STOP=1', '-qtA', '-F', '\t', '-c'], { PGPASSWORD: 'dump-pw' });
const mariadb = engine(MY, ['mariadb', '-h', '127.0.0.1', '-u', 'app', 'app', '--batch', '--skip-column-names', '--default-character-set=utf8mb4', '-e'], { MYSQL_PWD: 'apppw' });

const NAMES = ["O'Brien's mug", 'Zoë café ☕ 東京', 'plain'];

/** the same round trip on either engine; `dialect` spells what differs */
async function roundTrip(e: Engine, dialect: { idColumn: string; newline: string; lf: string; priceText: string; tableOpts: string }): Promise<void> {
  const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
  await e.sql(
    `CREATE TABLE items (${dialect.idColumn}, name TEXT NOT NULL, price DECIMAL(8,2))${dialect.tableOpts};` +
      `INSERT INTO items (name, price) VALUES (${lit(NAMES[0])}, 4.50), (${lit(NAMES[1])}, 3.20), (${lit(NAMES[2])}, NULL);` +
      `CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)${dialect.tableOpts};` +
      `INSERT INTO notes VALUES (1, ${dialect.newline}), (2, NULL);`,
  );
  const items = () => e.sql(`SELECT id, name, COALESCE(${dialect.priceText}, 'NULL') FROM items ORDER BY id`);
  const rows = async () => (await items()) + (await e.sql(`SELECT id, COALESCE(REPLACE(body, ${dialect.lf}, '<LF>'), 'NULL') FROM notes ORDER BY id`));
  const original = await rows();
  assert.deepEqual(
    original.trim().split('\n').map((l) => l.split('\t')),
    [['1', NAMES[0], '4.50'], ['2', NAMES[1], '3.20'], ['3', NAMES[2], 'NULL'], ['1', 'line one<LF>line two'], ['2', 'NULL']],
  );

  const dump = await dumpDatabase(sb, e.container(), e.target);
  assert.ok(dump, 'the engine has a dump tool');
  assert.ok(gunzipSync(dump).toString('utf8').includes('東京'), 'the dump holds the non-ASCII text as UTF-8');

  await e.sql(`UPDATE items SET name = 'changed' WHERE id = 1; DELETE FROM items WHERE id = 2; INSERT INTO items (name) VALUES ('added'); DROP TABLE notes;`);
  assert.deepEqual((await items()).trim().split('\n').map((l) => l.split('\t')[1]), ['changed', NAMES[2], 'added']);

  await restoreDatabase(sb, e.container(), e.target, dump);
  assert.equal(await rows(), original, 'every row is back exactly');
  // the id counter is the dump's too: the next row is 4 (5 had the damage's insert survived)
  await e.sql(`INSERT INTO items (name) VALUES ('after restore')`);
  assert.equal((await e.sql(`SELECT MAX(id) FROM items`)).trim(), '4');
}

test('PostgreSQL: dump, damage, restore gives back every row, quotes, UTF-8, NULLs and the sequence', async () => {
  await roundTrip(postgres, { idColumn: 'id SERIAL PRIMARY KEY', newline: `E'line one\\nline two'`, lf: 'chr(10)', priceText: 'price::text', tableOpts: '' });
});

test('MySQL kind (MariaDB): the same round trip through mysqldump/mariadb-dump', async () => {
  await roundTrip(mariadb, { idColumn: 'id INT AUTO_INCREMENT PRIMARY KEY', newline: `'line one\\nline two'`, lf: 'CHAR(10)', priceText: 'CAST(price AS CHAR)', tableOpts: ' DEFAULT CHARSET=utf8mb4' });
});

test('a wrong password: dump and restore fail with the engine, the database and the server\'s reason', async () => {
  await assert.rejects(dumpDatabase(sb, postgres.container(), { ...PG, password: 'wrong' }), /^Error: postgres dump of shop failed: .*password authentication failed for user "dumper"/s);
  await assert.rejects(restoreDatabase(sb, postgres.container(), { ...PG, password: 'wrong' }, gzipSync('SELECT 1;\n')), /postgres restore of shop failed: .*password authentication failed/s);
  await assert.rejects(dumpDatabase(sb, mariadb.container(), { ...MY, password: 'wrong' }), /^Error: mysql dump of app failed: .*Access denied for user 'app'/s);
});

