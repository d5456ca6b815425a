'use strict';
// Request dispatch: routing, error envelope, access log.
const { Router, sendJson } = require('./http');
const { HttpError } = require('./errors');
const db = require('./db');

const router = new Router();
router.add('GET', '/health', async (req, res) => {
  await db.query('SELECT 1');
  sendJson(res, 200, { status: 'ok' });
});
require('./routes/auth')(router);
require('./routes/users')(router);
require('./routes/tickets')(router);
require('./routes/apiKeys')(router);
require('./routes/auditLogs')(router);
require('./routes/dashboard')(router);

function errorBody(code, message, details) {
  const error = { code, message };
  if (details) error.details = details;
  return { error };
}

async function handle(req, res) {
  const started = Date.now();
  const url = new URL(req.url, 'http://localhost');
  try {
    const match = router.match(req.method, url.pathname);
    if (!match) {
      sendJson(res, 404, errorBody('not_found', `No route for ${req.method} ${url.pathname}`));
    } else if (match.methodNotAllowed) {
      sendJson(res, 405, errorBody('method_not_allowed', `${req.method} is not allowed on ${url.pathname}`));
    } else {
      await match.handler(req, res, { params: match.params, query: url.searchParams });
    }
  } catch (err) {
    if (err instanceof HttpError) {
      sendJson(res, err.status, errorBody(err.code, err.message, err.details));
    } else {
      console.error(`[error] ${req.method} ${url.pathname}:`, err);
      if (!res.headersSent) sendJson(res, 500, errorBody('internal_error', 'Internal server error'));
      else res.end();
    }
  } finally {
    console.log(`${new Date().toISOString()} ${req.method} ${url.pathname} ${res.statusCode} ${Date.now() - started}ms`);
  }
}

module.exports = { handle };
