'use strict';
const db = require('../db');
const audit = require('../audit');
const auth = require('../auth');
const { hashPassword } = require('../security');
const { sendJson, jsonBody } = require('../http');
const { validate } = require('../validation');
const { conflict } = require('../errors');
const { ROLES } = require('../domain');

function presentUser(u) {
  return {
    id: u.id,
    organization_id: u.organization_id,
    email: u.email,
    name: u.name,
    role: u.role,
    created_at: u.created_at,
  };
}

async function list(req, res) {
  const principal = await auth.authenticate(req);
  auth.requireRole(principal, 'owner', 'agent');
  const rows = await db.query(
    'SELECT id, organization_id, email, name, role, created_at FROM users WHERE organization_id = $1 ORDER BY id',
    [principal.organizationId],
  );
  sendJson(res, 200, { data: rows.rows.map(presentUser), total: rows.rows.length });
}

async function create(req, res) {
  const principal = await auth.authenticate(req);
  auth.requireUserSession(principal);
  auth.requireRole(principal, 'owner');
  const input = validate(await jsonBody(req))
    .email('email')
    .string('name', { required: true, min: 1, max: 100 })
    .string('password', { required: true, min: 8, max: 200, trim: false })
    .oneOf('role', ROLES, { required: true })
    .result();
  const user = await db.transaction(async (client) => {
    const exists = await client.query('SELECT 1 FROM users WHERE lower(email) = $1', [input.email]);
    if (exists.rowCount > 0) throw conflict('A user with this email already exists');
    const r = await client.query(
      `INSERT INTO users (organization_id, email, name, role, password_hash)
       VALUES ($1, $2, $3, $4, $5) RETURNING id, organization_id, email, name, role, created_at`,
      [principal.organizationId, input.email, input.name, input.role, hashPassword(input.password)],
    );
    await audit.record(client, principal, 'user.created', 'user', r.rows[0].id, {
      email: input.email,
      role: input.role,
    });
    return r.rows[0];
  }).catch((err) => {
    if (err.code === '23505') throw conflict('A user with this email already exists');
    throw err;
  });
  sendJson(res, 201, presentUser(user));
}

module.exports = (router) => {
  router.add('GET', '/api/users', list);
  router.add('POST', '/api/users', create);
};
module.exports.presentUser = presentUser;
