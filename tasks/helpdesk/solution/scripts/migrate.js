'use strict';
// Applies every migrations/*.sql file in name order. The files themselves are idempotent,
// and applied names are recorded in schema_migrations.
const fs = require('fs');
const path = require('path');
const db = require('../src/db');

async function main() {
  await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
  const dir = path.join(__dirname, '..', 'migrations');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  for (const file of files) {
    const done = await db.one('SELECT 1 AS ok FROM schema_migrations WHERE name = $1', [file]);
    if (done) continue;
    await db.transaction(async (client) => {
      await client.query(fs.readFileSync(path.join(dir, file), 'utf8'));
      await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
    });
    console.log(`migrate: applied ${file}`);
  }
}

main()
  .then(() => db.pool.end())
  .catch((err) => {
    console.error('migrate failed:', err);
    process.exit(1);
  });
