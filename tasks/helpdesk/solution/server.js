'use strict';
const http = require('http');
const config = require('./src/config');
const { handle } = require('./src/app');
const { pool } = require('./src/db');

const server = http.createServer((req, res) => {
  handle(req, res);
});

server.listen(config.port, config.host, () => {
  console.log(`help desk listening on http://${config.host}:${config.port}`);
});

function shutdown() {
  server.close(() => pool.end().finally(() => process.exit(0)));
  setTimeout(() => process.exit(0), 5000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
