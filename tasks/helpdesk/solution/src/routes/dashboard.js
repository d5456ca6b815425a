'use strict';
// Server-rendered HTML overview for owners and agents.
const db = require('../db');
const auth = require('../auth');
const { sendHtml } = require('../http');
const { STATUSES } = require('../domain');
const { HttpError } = require('../errors');

const LABELS = {
  open: 'Open',
  in_progress: 'In progress',
  waiting_on_customer: 'Waiting on customer',
  resolved: 'Resolved',
  closed: 'Closed',
};

const escapeHtml = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function page(title, body) {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 0; background: #f5f6f8; color: #1d2330; }
  header { background: #1d2330; color: #fff; padding: 16px 32px; }
  header h1 { margin: 0; font-size: 20px; }
  main { padding: 24px 32px; max-width: 1100px; }
  section { background: #fff; border-radius: 8px; padding: 16px 24px; margin-bottom: 24px; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 8px 12px; border-bottom: 1px solid #e4e7ec; }
  .cards { display: flex; gap: 16px; flex-wrap: wrap; }
  .card { flex: 1; min-width: 140px; background: #fff; border-radius: 8px; padding: 16px; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
  .card .n { font-size: 28px; font-weight: 600; }
  .breach { color: #b42318; }
</style>
</head>
<body>
${body}
</body>
</html>`;
}

async function dashboard(req, res, { query }) {
  let principal;
  try {
    principal = await auth.authenticate(req, { queryToken: query.get('token') });
    auth.requireRole(principal, 'owner', 'agent');
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    const msg = err.status === 401 ? 'Please sign in to view the dashboard.' : 'You do not have access to the dashboard.';
    sendHtml(res, err.status, page('Help desk dashboard', `<main><section><p>${msg}</p></section></main>`));
    return;
  }
  const org = await db.one('SELECT name FROM organizations WHERE id = $1', [principal.organizationId]);
  const counts = await db.query(
    'SELECT status, count(*)::int AS n FROM tickets WHERE organization_id = $1 GROUP BY status',
    [principal.organizationId],
  );
  const byStatus = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  for (const r of counts.rows) byStatus[r.status] = r.n;
  const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
  const breached = await db.query(
    `SELECT id, title, priority, status, sla_due_at FROM tickets
      WHERE organization_id = $1 AND status IN ('open','in_progress','waiting_on_customer') AND sla_due_at < now()
      ORDER BY sla_due_at ASC`,
    [principal.organizationId],
  );

  const rows = STATUSES.map(
    (s) => `<tr><th scope="row">${LABELS[s]}</th><td data-testid="count-${s}">${byStatus[s]}</td></tr>`,
  ).join('\n');
  const breachedRows = breached.rows.length
    ? breached.rows
        .map(
          (t) => `<tr data-testid="breached-ticket"><td>#${t.id}</td><td>${escapeHtml(t.title)}</td>
<td>${t.priority}</td><td>${LABELS[t.status]}</td><td>${t.sla_due_at.toISOString()}</td></tr>`,
        )
        .join('\n')
    : '<tr><td colspan="5">No SLA breaches. Well done!</td></tr>';

  const body = `<header><h1>${escapeHtml(org.name)} — Help desk dashboard</h1></header>
<main>
<div class="cards">
  <div class="card"><div>Total tickets</div><div class="n" data-testid="count-total">${total}</div></div>
  <div class="card"><div>Open</div><div class="n">${byStatus.open}</div></div>
  <div class="card breach"><div>SLA breaches</div><div class="n" data-testid="sla-breached-count">${breached.rows.length}</div></div>
</div>
<section>
  <h2>Tickets by status</h2>
  <table><thead><tr><th>Status</th><th>Tickets</th></tr></thead>
  <tbody>
${rows}
  </tbody></table>
</section>
<section>
  <h2 class="breach">SLA breaches</h2>
  <table><thead><tr><th>Ticket</th><th>Title</th><th>Priority</th><th>Status</th><th>SLA due</th></tr></thead>
  <tbody>
${breachedRows}
  </tbody></table>
</section>
</main>`;
  sendHtml(res, 200, page(`Dashboard — ${org.name}`, body));
}

module.exports = (router) => {
  router.add('GET', '/dashboard', dashboard);
};
