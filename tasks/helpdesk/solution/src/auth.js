'use strict';
// Resolves the caller from "Authorization: Bearer <token>" or "X-Api-Key: <key>".
// The principal is {kind: 'user'|'api_key', organizationId, role, userId, apiKeyId, user?, apiKey?}.
const db = require('./db');
const config = require('./config');
const { sha256, newSessionToken } = require('./security');
const { unauthorized, forbidden } = require('./errors');

async function createSession(userId) {
  const token = newSessionToken();
  await db.query(
    `INSERT INTO sessions (token_hash, user_id, expires_at)
     VALUES ($1, $2, now() + make_interval(hours => $3))`,
    [sha256(token), userId, config.sessionTtlHours],
  );
  return token;
}

async function destroySession(token) {
  await db.query('DELETE FROM sessions WHERE token_hash = $1', [sha256(token)]);
}

async function principalFromToken(token) {
  const row = await db.one(
    `SELECT u.id, u.organization_id, u.email, u.name, u.role, u.created_at
       FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.token_hash = $1 AND s.expires_at > now()`,
    [sha256(token)],
  );
  if (!row) return null;
  return {
    kind: 'user',
    organizationId: row.organization_id,
    role: row.role,
    userId: row.id,
    apiKeyId: null,
    user: row,
    token,
  };
}

async function principalFromApiKey(key) {
  const row = await db.one(
    `UPDATE api_keys SET last_used_at = now()
      WHERE key_hash = $1 AND revoked_at IS NULL
      RETURNING id, organization_id, name, created_by`,
    [sha256(key)],
  );
  if (!row) return null;
  // API keys act with the permissions of an agent of their organisation.
  return {
    kind: 'api_key',
    organizationId: row.organization_id,
    role: 'agent',
    userId: row.created_by,
    apiKeyId: row.id,
    apiKey: row,
  };
}

function bearerToken(req) {
  const header = req.headers.authorization || '';
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

// Returns the principal or throws 401. `queryToken` lets the HTML dashboard accept ?token=.
async function authenticate(req, { queryToken } = {}) {
  const token = bearerToken(req) || queryToken || null;
  if (token) {
    const p = await principalFromToken(token);
    if (p) return p;
    throw unauthorized('Invalid or expired token');
  }
  const key = req.headers['x-api-key'];
  if (key) {
    const p = await principalFromApiKey(String(key));
    if (p) return p;
    throw unauthorized('Invalid or revoked API key');
  }
  throw unauthorized();
}

function requireRole(principal, ...roles) {
  if (!roles.includes(principal.role)) throw forbidden();
}

function requireUserSession(principal) {
  if (principal.kind !== 'user') throw forbidden('API keys cannot perform this action');
}

const isStaff = (principal) => principal.role === 'owner' || principal.role === 'agent';

module.exports = {
  createSession,
  destroySession,
  authenticate,
  requireRole,
  requireUserSession,
  isStaff,
};
