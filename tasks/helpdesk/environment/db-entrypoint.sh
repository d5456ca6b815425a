#!/bin/bash
# First start: initdb into $PGDATA and create the role/database from POSTGRES_USER,
# POSTGRES_PASSWORD and POSTGRES_DB. Every start: run postgres in the foreground as postgres.
set -euo pipefail
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
: "${POSTGRES_DB:=$POSTGRES_USER}"

mkdir -p "$PGDATA" /var/run/postgresql
chown -R postgres:postgres "$PGDATA" /var/run/postgresql
chmod 0700 "$PGDATA"

as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp); chown postgres "$pwfile"; printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  as_pg initdb -D "$PGDATA" --username=postgres --auth-local=trust \
    --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  {
    echo "listen_addresses = '*'"
    echo "password_encryption = 'scram-sha-256'"
  } >> "$PGDATA/postgresql.conf"
  {
    echo "host all all 0.0.0.0/0 scram-sha-256"
    echo "host all all ::/0 scram-sha-256"
  } >> "$PGDATA/pg_hba.conf"
  # Temporary server on the unix socket only, to create the role and database.
  as_pg pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  esc_pw=${POSTGRES_PASSWORD//\'/\'\'}
  if [ "$POSTGRES_USER" = "postgres" ]; then
    as_pg psql -v ON_ERROR_STOP=1 -q -c "ALTER ROLE postgres PASSWORD '$esc_pw'"
  else
    as_pg psql -v ON_ERROR_STOP=1 -q -c "CREATE ROLE \"$POSTGRES_USER\" LOGIN SUPERUSER PASSWORD '$esc_pw'"
  fi
  if [ "$POSTGRES_DB" != "postgres" ]; then
    as_pg psql -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\""
  fi
  as_pg pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "db-entrypoint: initialised $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
fi

exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA"
