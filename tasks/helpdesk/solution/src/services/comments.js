'use strict';
// Ticket comments. Internal notes are written by staff only and never shown to customers.
const db = require('../db');
const audit = require('../audit');
const tickets = require('./tickets');
const { forbidden, conflict } = require('../errors');
const { isStaff } = require('../auth');

const COLUMNS = 'id, ticket_id, author_id, body, internal, created_at';

async function list(principal, ticketId) {
  await tickets.findVisible(principal, ticketId);
  const staff = isStaff(principal);
  const res = await db.query(
    `SELECT ${COLUMNS} FROM ticket_comments
      WHERE ticket_id = $1 AND organization_id = $2 ${staff ? '' : 'AND internal = false'}
      ORDER BY created_at ASC, id ASC`,
    [ticketId, principal.organizationId],
  );
  return { data: res.rows, total: res.rows.length };
}

async function create(principal, ticketId, input) {
  const internal = input.internal === true;
  return db.transaction(async (client) => {
    const ticket = await tickets.findVisible(principal, ticketId, client);
    if (internal && !isStaff(principal)) throw forbidden('Customers cannot write internal notes');
    await client.query('SELECT 1 FROM tickets WHERE id = $1 FOR UPDATE', [ticketId]);
    if (ticket.status === 'closed') throw conflict('Closed tickets cannot receive comments', 'ticket_closed');
    const res = await client.query(
      `INSERT INTO ticket_comments (organization_id, ticket_id, author_id, body, internal)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [principal.organizationId, ticketId, principal.userId, input.body, internal],
    );
    const comment = res.rows[0];
    await audit.record(client, principal, 'comment.created', 'comment', comment.id, {
      ticket_id: ticketId,
      internal,
    });
    if (isStaff(principal) && !internal && !ticket.first_response_at) {
      await client.query('UPDATE tickets SET first_response_at = now(), updated_at = now() WHERE id = $1', [ticketId]);
    }
    // A customer's reply to a ticket waiting on them puts it back in the agents' queue.
    if (principal.role === 'customer' && ticket.status === 'waiting_on_customer') {
      await tickets.applyTransition(client, principal, ticket, 'in_progress', 'customer_reply');
    }
    return comment;
  });
}

module.exports = { list, create };
