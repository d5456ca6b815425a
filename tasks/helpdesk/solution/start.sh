#!/usr/bin/env bash
# Migrate, seed, start the server detached and wait until /health answers 200.
set -euo pipefail
cd "$(dirname "$0")"
export PORT="${PORT:-8080}"

# Wait for the database (up to 60 s).
for i in $(seq 1 60); do
  if node -e "const {Client}=require('pg');const c=new Client({connectionString:process.env.DATABASE_URL});c.connect().then(()=>c.end()).then(()=>process.exit(0),()=>process.exit(1))"; then
    break
  fi
  [ "$i" = 60 ] && { echo "database not reachable" >&2; exit 1; }
  sleep 1
done

node scripts/migrate.js
node scripts/seed.js

# Stop a previous instance started by this script, if any.
if [ -f server.pid ] && kill -0 "$(cat server.pid)" 2>/dev/null; then
  kill "$(cat server.pid)" || true
  sleep 1
fi

setsid nohup node server.js > /app/server.log 2>&1 < /dev/null &
echo $! > server.pid

node -e '
const http = require("http");
const deadline = Date.now() + 60000;
function poll() {
  const req = http.get({ host: "127.0.0.1", port: process.env.PORT, path: "/health", timeout: 2000 }, (res) => {
    res.resume();
    if (res.statusCode === 200) { console.log("server is up"); process.exit(0); }
    retry();
  });
  req.on("timeout", () => req.destroy());
  req.on("error", retry);
}
function retry() {
  if (Date.now() > deadline) { console.error("server did not become healthy within 60 s"); process.exit(1); }
  setTimeout(poll, 500);
}
poll();
'
