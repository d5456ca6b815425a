'use strict';
// Creates the evaluation organisations and users (idempotent: existing rows are kept,
// their role and password are reset to the documented values).
const db = require('../src/db');
const { hashPassword } = require('../src/security');

const ORGS = [
  {
    name: 'Acme Support',
    slug: 'acme',
    users: [
      { email: 'owner@acme.test', name: 'Olivia Owner', role: 'owner', password: 'OwnerPass123!' },
      { email: 'agent@acme.test', name: 'Adam Agent', role: 'agent', password: 'AgentPass123!' },
      { email: 'customer@acme.test', name: 'Carla Customer', role: 'customer', password: 'CustomerPass123!' },
      { email: 'customer2@acme.test', name: 'Cody Customer', role: 'customer', password: 'CustomerPass123!' },
    ],
  },
  {
    name: 'Globex Service',
    slug: 'globex',
    users: [
      { email: 'owner@globex.test', name: 'Gina Globex', role: 'owner', password: 'GlobexPass123!' },
      { email: 'customer@globex.test', name: 'Gus Globex', role: 'customer', password: 'CustomerPass123!' },
    ],
  },
];

async function main() {
  for (const org of ORGS) {
    const o = await db.one(
      `INSERT INTO organizations (name, slug) VALUES ($1, $2)
       ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name RETURNING id`,
      [org.name, org.slug],
    );
    for (const u of org.users) {
      await db.query(
        `INSERT INTO users (organization_id, email, name, role, password_hash)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (lower(email)) DO UPDATE
           SET organization_id = EXCLUDED.organization_id, role = EXCLUDED.role,
               password_hash = EXCLUDED.password_hash`,
        [o.id, u.email, u.name, u.role, hashPassword(u.password)],
      );
    }
  }
  console.log('seed: evaluation organisations and users are in place');
}

main()
  .then(() => db.pool.end())
  .catch((err) => {
    console.error('seed failed:', err);
    process.exit(1);
  });
