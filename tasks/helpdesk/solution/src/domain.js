'use strict';
// Ticket business rules: priorities and SLA targets, the status workflow.

const PRIORITIES = ['low', 'normal', 'high', 'urgent'];
const STATUSES = ['open', 'in_progress', 'waiting_on_customer', 'resolved', 'closed'];
const ROLES = ['owner', 'agent', 'customer'];

// Hours from ticket creation until the SLA deadline.
const SLA_HOURS = { urgent: 4, high: 8, normal: 24, low: 72 };

// Allowed status transitions (anything else is 409 invalid_transition).
const TRANSITIONS = {
  open: ['in_progress', 'resolved', 'closed'],
  in_progress: ['open', 'waiting_on_customer', 'resolved'],
  waiting_on_customer: ['in_progress', 'resolved'],
  resolved: ['open', 'closed'],
  closed: [],
};

function slaDueAt(createdAt, priority) {
  return new Date(new Date(createdAt).getTime() + SLA_HOURS[priority] * 3600 * 1000);
}

function canTransition(from, to) {
  return (TRANSITIONS[from] || []).includes(to);
}

const OPEN_STATUSES = ['open', 'in_progress', 'waiting_on_customer'];

function isBreached(ticket, now = new Date()) {
  return OPEN_STATUSES.includes(ticket.status) && new Date(ticket.sla_due_at) < now;
}

module.exports = {
  PRIORITIES,
  STATUSES,
  ROLES,
  SLA_HOURS,
  TRANSITIONS,
  OPEN_STATUSES,
  slaDueAt,
  canTransition,
  isBreached,
};
