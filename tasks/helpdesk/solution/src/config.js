'use strict';
// All runtime configuration comes from the environment.

const config = {
  port: parseInt(process.env.PORT || '8080', 10),
  host: process.env.HOST || '0.0.0.0',
  databaseUrl: process.env.DATABASE_URL || 'postgres://helpdesk:helpdesk@db:5432/helpdesk',
  sessionTtlHours: parseInt(process.env.SESSION_TTL_HOURS || '24', 10),
  maxBodyBytes: 1024 * 1024,
};

module.exports = config;
