'use strict';
const db = require('../db');
const audit = require('../audit');
const auth = require('../auth');
const { newApiKey } = require('../security');
const { sendJson, sendNoContent, jsonBody } = require('../http');
const { validate, parseId } = require('../validation');
const { notFound } = require('../errors');

const COLUMNS = 'id, name, key_prefix AS prefix, created_by, last_used_at, revoked_at, created_at';

// API keys are managed by owners through a user session (never by another API key).
async function ownerSession(req) {
  const principal = await auth.authenticate(req);
  auth.requireUserSession(principal);
  auth.requireRole(principal, 'owner');
  return principal;
}

async function create(req, res) {
  const principal = await ownerSession(req);
  const input = validate(await jsonBody(req)).string('name', { required: true, min: 1, max: 100 }).result();
  const material = newApiKey();
  const row = await db.transaction(async (client) => {
    const r = await client.query(
      `INSERT INTO api_keys (organization_id, name, key_prefix, key_hash, created_by)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [principal.organizationId, input.name, material.prefix, material.hash, principal.userId],
    );
    await audit.record(client, principal, 'api_key.created', 'api_key', r.rows[0].id, {
      name: input.name,
      prefix: material.prefix,
    });
    return r.rows[0];
  });
  // The plaintext key is returned exactly once.
  sendJson(res, 201, { ...row, key: material.key });
}

async function list(req, res) {
  const principal = await ownerSession(req);
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY created_at DESC, id DESC`,
    [principal.organizationId],
  );
  sendJson(res, 200, { data: rows.rows, total: rows.rows.length });
}

async function revoke(req, res, { params }) {
  const principal = await ownerSession(req);
  const id = parseId(params.id);
  if (!id) throw notFound('API key');
  await db.transaction(async (client) => {
    const r = await client.query(
      'SELECT id, revoked_at FROM api_keys WHERE id = $1 AND organization_id = $2 FOR UPDATE',
      [id, principal.organizationId],
    );
    if (!r.rows[0]) throw notFound('API key');
    if (r.rows[0].revoked_at) return; // already revoked: idempotent
    await client.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [id]);
    await audit.record(client, principal, 'api_key.revoked', 'api_key', id, {});
  });
  sendNoContent(res);
}

module.exports = (router) => {
  router.add('GET', '/api/api-keys', list);
  router.add('POST', '/api/api-keys', create);
  router.add('DELETE', '/api/api-keys/:id', revoke);
};
