'use strict';
// Ticket persistence and rules. Every query is scoped by organization_id.
const db = require('../db');
const audit = require('../audit');
const { slaDueAt, canTransition, isBreached, SLA_HOURS } = require('../domain');
const { notFound, forbidden, conflict, validation } = require('../errors');
const { isStaff } = require('../auth');

const COLUMNS = `id, organization_id, title, description, status, priority, requester_id, assignee_id,
  sla_due_at, first_response_at, resolved_at, closed_at, created_at, updated_at`;

function present(row) {
  return { ...row, sla_breached: isBreached(row) };
}

// Loads a ticket visible to the principal (customers see only their own) or throws 404.
async function findVisible(principal, id, client = db) {
  const res = await client.query(
    `SELECT ${COLUMNS} FROM tickets WHERE id = $1 AND organization_id = $2`,
    [id, principal.organizationId],
  );
  const row = res.rows[0];
  if (!row) throw notFound('Ticket');
  if (principal.role === 'customer' && row.requester_id !== principal.userId) throw notFound('Ticket');
  return row;
}

async function assertOrgUser(client, principal, userId, field, { staffOnly }) {
  const res = await client.query('SELECT role FROM users WHERE id = $1 AND organization_id = $2', [
    userId,
    principal.organizationId,
  ]);
  const user = res.rows[0];
  if (!user) throw validation({ [field]: 'must be a user of your organization' });
  if (staffOnly && user.role === 'customer') {
    throw validation({ [field]: 'must be an owner or agent of your organization' });
  }
}

async function create(principal, input) {
  if (principal.role === 'customer') {
    if (input.assignee_id !== undefined) throw forbidden('Customers cannot assign tickets');
    if (input.requester_id !== undefined && input.requester_id !== principal.userId) {
      throw forbidden('Customers can only open tickets for themselves');
    }
  }
  return db.transaction(async (client) => {
    const requesterId = input.requester_id || principal.userId;
    if (input.requester_id) await assertOrgUser(client, principal, requesterId, 'requester_id', { staffOnly: false });
    if (input.assignee_id) await assertOrgUser(client, principal, input.assignee_id, 'assignee_id', { staffOnly: true });
    const priority = input.priority || 'normal';
    const res = await client.query(
      `INSERT INTO tickets (organization_id, title, description, priority, requester_id, assignee_id, sla_due_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(hours => $7), now(), now())
       RETURNING ${COLUMNS}`,
      [
        principal.organizationId,
        input.title,
        input.description || '',
        priority,
        requesterId,
        input.assignee_id || null,
        SLA_HOURS[priority],
      ],
    );
    const ticket = res.rows[0];
    await audit.record(client, principal, 'ticket.created', 'ticket', ticket.id, {
      title: ticket.title,
      priority: ticket.priority,
    });
    return present(ticket);
  });
}

async function get(principal, id) {
  return present(await findVisible(principal, id));
}

async function update(principal, id, changes) {
  return db.transaction(async (client) => {
    const current = await findVisible(principal, id, client);
    if (!isStaff(principal)) throw forbidden('Customers cannot edit tickets');
    if (changes.assignee_id) {
      await assertOrgUser(client, principal, changes.assignee_id, 'assignee_id', { staffOnly: true });
    }
    const next = { ...current, ...changes };
    if (changes.priority && changes.priority !== current.priority) {
      next.sla_due_at = slaDueAt(current.created_at, changes.priority);
    }
    const diff = {};
    for (const field of Object.keys(changes)) {
      if (current[field] !== changes[field]) diff[field] = { from: current[field], to: changes[field] };
    }
    const res = await client.query(
      `UPDATE tickets SET title = $3, description = $4, priority = $5, assignee_id = $6,
              sla_due_at = $7, updated_at = now()
        WHERE id = $1 AND organization_id = $2 RETURNING ${COLUMNS}`,
      [id, principal.organizationId, next.title, next.description, next.priority, next.assignee_id, next.sla_due_at],
    );
    await audit.record(client, principal, 'ticket.updated', 'ticket', id, { changes: diff });
    return present(res.rows[0]);
  });
}

// Applies a status change inside an open transaction (shared with the customer-reply rule).
async function applyTransition(client, principal, ticket, to, reason) {
  const res = await client.query(
    `UPDATE tickets SET status = $3, updated_at = now(),
            resolved_at = CASE WHEN $3 = 'resolved' THEN now() WHEN $3 = 'closed' THEN resolved_at ELSE NULL END,
            closed_at = CASE WHEN $3 = 'closed' THEN now() ELSE NULL END
      WHERE id = $1 AND organization_id = $2 RETURNING ${COLUMNS}`,
    [ticket.id, principal.organizationId, to],
  );
  const details = { from: ticket.status, to };
  if (reason) details.reason = reason;
  await audit.record(client, principal, 'ticket.status_changed', 'ticket', ticket.id, details);
  return res.rows[0];
}

async function transition(principal, id, to) {
  return db.transaction(async (client) => {
    const current = await findVisible(principal, id, client);
    await client.query('SELECT 1 FROM tickets WHERE id = $1 FOR UPDATE', [id]);
    if (principal.role === 'customer' && !(current.status === 'resolved' && to === 'open')) {
      throw forbidden('Customers can only reopen resolved tickets');
    }
    if (!canTransition(current.status, to)) {
      throw conflict(`Cannot move a ticket from ${current.status} to ${to}`, 'invalid_transition');
    }
    return present(await applyTransition(client, principal, current, to));
  });
}

async function remove(principal, id) {
  await db.transaction(async (client) => {
    const current = await findVisible(principal, id, client);
    if (principal.role !== 'owner') throw forbidden('Only owners can delete tickets');
    await client.query('DELETE FROM tickets WHERE id = $1 AND organization_id = $2', [id, principal.organizationId]);
    await audit.record(client, principal, 'ticket.deleted', 'ticket', id, { title: current.title });
  });
}

// filters: {q, status, priority, assignee_id, requester_id, sla_breached, page, per_page}
async function search(principal, f) {
  const where = ['organization_id = $1'];
  const params = [principal.organizationId];
  const add = (sql, value) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (principal.role === 'customer') add('requester_id = ?', principal.userId);
  if (f.q) {
    params.push(`%${f.q.replace(/[\\%_]/g, '\\$&')}%`);
    const n = params.length;
    where.push(`(title ILIKE $${n} OR description ILIKE $${n})`);
  }
  if (f.status) add('status = ?', f.status);
  if (f.priority) add('priority = ?', f.priority);
  if (f.assignee_id) add('assignee_id = ?', f.assignee_id);
  if (f.requester_id) add('requester_id = ?', f.requester_id);
  if (f.sla_breached === true) {
    where.push("status IN ('open','in_progress','waiting_on_customer') AND sla_due_at < now()");
  } else if (f.sla_breached === false) {
    where.push("NOT (status IN ('open','in_progress','waiting_on_customer') AND sla_due_at < now())");
  }
  const clause = where.join(' AND ');
  const total = await db.one(`SELECT count(*)::int AS n FROM tickets WHERE ${clause}`, params);
  const offset = (f.page - 1) * f.per_page;
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM tickets WHERE ${clause}
      ORDER BY created_at DESC, id DESC LIMIT ${f.per_page} OFFSET ${offset}`,
    params,
  );
  return { data: rows.rows.map(present), total: total.n, page: f.page, per_page: f.per_page };
}

module.exports = { create, get, update, transition, applyTransition, remove, search, findVisible, present };
