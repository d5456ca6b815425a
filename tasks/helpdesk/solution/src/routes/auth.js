'use strict';
const db = require('../db');
const auth = require('../auth');
const { verifyPassword } = require('../security');
const { sendJson, sendNoContent, jsonBody } = require('../http');
const { validate } = require('../validation');
const { unauthorized } = require('../errors');
const { presentUser } = require('./users');

async function login(req, res) {
  const input = validate(await jsonBody(req))
    .string('email', { required: true, min: 1, max: 254 })
    .string('password', { required: true, min: 1, max: 1024, trim: false })
    .result();
  const user = await db.one(
    'SELECT id, organization_id, email, name, role, password_hash, created_at FROM users WHERE lower(email) = lower($1)',
    [input.email],
  );
  if (!user || !verifyPassword(input.password, user.password_hash)) {
    throw unauthorized('Invalid email or password');
  }
  const token = await auth.createSession(user.id);
  sendJson(res, 200, { token, user: presentUser(user) });
}

async function logout(req, res) {
  const principal = await auth.authenticate(req);
  if (principal.kind === 'user') await auth.destroySession(principal.token);
  sendNoContent(res);
}

async function me(req, res) {
  const principal = await auth.authenticate(req);
  const organization = await db.one('SELECT id, name, slug FROM organizations WHERE id = $1', [
    principal.organizationId,
  ]);
  sendJson(res, 200, {
    user: principal.kind === 'user' ? presentUser(principal.user) : null,
    api_key: principal.kind === 'api_key' ? { id: principal.apiKey.id, name: principal.apiKey.name } : null,
    organization,
  });
}

module.exports = (router) => {
  router.add('POST', '/api/auth/login', login);
  router.add('POST', '/api/auth/logout', logout);
  router.add('GET', '/api/me', me);
};
