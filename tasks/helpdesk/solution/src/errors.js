'use strict';
// Every error response uses the envelope {"error": {"code", "message", "details"?}}.

class HttpError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

const badRequest = (msg = 'Malformed request', code = 'bad_request') => new HttpError(400, code, msg);
const unauthorized = (msg = 'Authentication required') => new HttpError(401, 'unauthorized', msg);
const forbidden = (msg = 'You are not allowed to do this') => new HttpError(403, 'forbidden', msg);
const notFound = (what = 'Resource') => new HttpError(404, 'not_found', `${what} not found`);
const conflict = (msg, code = 'conflict') => new HttpError(409, code, msg);
const validation = (details, msg = 'Validation failed') =>
  new HttpError(422, 'validation_error', msg, details);

module.exports = { HttpError, badRequest, unauthorized, forbidden, notFound, conflict, validation };
