'use strict';
// Password hashing (scrypt), opaque session tokens and API key material.
const crypto = require('crypto');

const SCRYPT_KEYLEN = 64;

function hashPassword(password) {
  const salt = crypto.randomBytes(16).toString('hex');
  const derived = crypto.scryptSync(password, salt, SCRYPT_KEYLEN).toString('hex');
  return `scrypt$${salt}$${derived}`;
}

function verifyPassword(password, stored) {
  const [scheme, salt, hash] = String(stored || '').split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'hex');
  const actual = crypto.scryptSync(String(password), salt, expected.length);
  return expected.length === actual.length && crypto.timingSafeEqual(expected, actual);
}

function sha256(value) {
  return crypto.createHash('sha256').update(value).digest('hex');
}

function newSessionToken() {
  return `hds_${crypto.randomBytes(32).toString('hex')}`;
}

function newApiKey() {
  const key = `hdk_${crypto.randomBytes(20).toString('hex')}`;
  return { key, prefix: key.slice(0, 12), hash: sha256(key) };
}

module.exports = { hashPassword, verifyPassword, sha256, newSessionToken, newApiKey };
