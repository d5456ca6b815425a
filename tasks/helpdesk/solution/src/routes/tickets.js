'use strict';
const auth = require('../auth');
const tickets = require('../services/tickets');
const comments = require('../services/comments');
const { sendJson, sendNoContent, jsonBody } = require('../http');
const { validate, parseId } = require('../validation');
const { notFound, validation } = require('../errors');
const { PRIORITIES, STATUSES } = require('../domain');

function ticketId(params) {
  const id = parseId(params.id);
  if (!id) throw notFound('Ticket');
  return id;
}

function parseFilters(query) {
  const errors = {};
  const f = { page: 1, per_page: 20 };
  const q = query.get('q');
  if (q !== null && q.trim() !== '') f.q = q.trim();
  const status = query.get('status');
  if (status !== null && status !== '') {
    if (STATUSES.includes(status)) f.status = status;
    else errors.status = `must be one of: ${STATUSES.join(', ')}`;
  }
  const priority = query.get('priority');
  if (priority !== null && priority !== '') {
    if (PRIORITIES.includes(priority)) f.priority = priority;
    else errors.priority = `must be one of: ${PRIORITIES.join(', ')}`;
  }
  for (const key of ['assignee_id', 'requester_id']) {
    const v = query.get(key);
    if (v !== null && v !== '') {
      if (parseId(v)) f[key] = Number(v);
      else errors[key] = 'must be a positive integer id';
    }
  }
  const breached = query.get('sla_breached');
  if (breached !== null && breached !== '') {
    if (breached === 'true' || breached === 'false') f.sla_breached = breached === 'true';
    else errors.sla_breached = 'must be true or false';
  }
  for (const [key, max] of [['page', 100000], ['per_page', 100]]) {
    const v = query.get(key);
    if (v !== null && v !== '') {
      const n = Number(v);
      if (Number.isInteger(n) && n >= 1 && n <= max) f[key] = n;
      else errors[key] = `must be an integer between 1 and ${max}`;
    }
  }
  if (Object.keys(errors).length) throw validation(errors, 'Invalid query parameters');
  return f;
}

async function list(req, res, { query }) {
  const principal = await auth.authenticate(req);
  sendJson(res, 200, await tickets.search(principal, parseFilters(query)));
}

async function create(req, res) {
  const principal = await auth.authenticate(req);
  const input = validate(await jsonBody(req))
    .string('title', { required: true, min: 1, max: 200 })
    .string('description', { max: 10000 })
    .oneOf('priority', PRIORITIES)
    .id('requester_id')
    .id('assignee_id', { nullable: true })
    .result();
  sendJson(res, 201, await tickets.create(principal, input));
}

async function show(req, res, { params }) {
  const principal = await auth.authenticate(req);
  sendJson(res, 200, await tickets.get(principal, ticketId(params)));
}

async function update(req, res, { params }) {
  const principal = await auth.authenticate(req);
  const id = ticketId(params);
  const v = validate(await jsonBody(req))
    .string('title', { min: 1, max: 200 })
    .string('description', { max: 10000 })
    .oneOf('priority', PRIORITIES)
    .id('assignee_id', { nullable: true })
    .forbid('status', 'cannot be changed here; use POST /api/tickets/:id/transitions');
  const changes = v.result();
  if (Object.keys(changes).length === 0) {
    throw validation({ body: 'provide at least one of title, description, priority, assignee_id' });
  }
  sendJson(res, 200, await tickets.update(principal, id, changes));
}

async function destroy(req, res, { params }) {
  const principal = await auth.authenticate(req);
  await tickets.remove(principal, ticketId(params));
  sendNoContent(res);
}

async function transition(req, res, { params }) {
  const principal = await auth.authenticate(req);
  const id = ticketId(params);
  const input = validate(await jsonBody(req)).oneOf('status', STATUSES, { required: true }).result();
  sendJson(res, 200, await tickets.transition(principal, id, input.status));
}

async function listComments(req, res, { params }) {
  const principal = await auth.authenticate(req);
  sendJson(res, 200, await comments.list(principal, ticketId(params)));
}

async function createComment(req, res, { params }) {
  const principal = await auth.authenticate(req);
  const id = ticketId(params);
  const input = validate(await jsonBody(req))
    .string('body', { required: true, min: 1, max: 10000 })
    .boolean('internal')
    .result();
  sendJson(res, 201, await comments.create(principal, id, input));
}

module.exports = (router) => {
  router.add('GET', '/api/tickets', list);
  router.add('POST', '/api/tickets', create);
  router.add('GET', '/api/tickets/:id', show);
  router.add('PATCH', '/api/tickets/:id', update);
  router.add('DELETE', '/api/tickets/:id', destroy);
  router.add('POST', '/api/tickets/:id/transitions', transition);
  router.add('GET', '/api/tickets/:id/comments', listComments);
  router.add('POST', '/api/tickets/:id/comments', createComment);
};
