'use strict';
const db = require('../db');
const auth = require('../auth');
const { sendJson } = require('../http');
const { validation } = require('../errors');

async function list(req, res, { query }) {
  const principal = await auth.authenticate(req);
  auth.requireUserSession(principal);
  auth.requireRole(principal, 'owner');
  const where = ['organization_id = $1'];
  const params = [principal.organizationId];
  for (const key of ['action', 'entity_type', 'entity_id']) {
    const v = query.get(key);
    if (v) {
      params.push(v);
      where.push(`${key} = $${params.length}`);
    }
  }
  const errors = {};
  const page = query.get('page') ? Number(query.get('page')) : 1;
  const perPage = query.get('per_page') ? Number(query.get('per_page')) : 50;
  if (!Number.isInteger(page) || page < 1) errors.page = 'must be a positive integer';
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) errors.per_page = 'must be an integer between 1 and 100';
  if (Object.keys(errors).length) throw validation(errors, 'Invalid query parameters');
  const clause = where.join(' AND ');
  const total = await db.one(`SELECT count(*)::int AS n FROM audit_logs WHERE ${clause}`, params);
  const rows = await db.query(
    `SELECT id, organization_id, actor_user_id, actor_api_key_id, action, entity_type, entity_id, details, created_at
       FROM audit_logs WHERE ${clause}
      ORDER BY created_at DESC, id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`,
    params,
  );
  sendJson(res, 200, { data: rows.rows, total: total.n, page, per_page: perPage });
}

module.exports = (router) => {
  router.add('GET', '/api/audit-logs', list);
};
