'use strict';
// Append-only audit trail of every mutation. Call with the transaction's client.

async function record(client, principal, action, entityType, entityId, details = {}) {
  await client.query(
    `INSERT INTO audit_logs
       (organization_id, actor_user_id, actor_api_key_id, action, entity_type, entity_id, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      principal.organizationId,
      principal.kind === 'user' ? principal.userId : null,
      principal.apiKeyId,
      action,
      entityType,
      String(entityId),
      JSON.stringify(details),
    ],
  );
}

module.exports = { record };
