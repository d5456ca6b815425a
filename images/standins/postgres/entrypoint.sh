#!/bin/bash
# The official image's contract, re-implemented: first start initialises $PGDATA, creates
# POSTGRES_USER / POSTGRES_DB, runs /docker-entrypoint-initdb.d; every start execs the server as
# the postgres user. `postgres -c …` and bare `-c …` arguments are passed to the server.
set -euo pipefail
if [ "${1:-}" = "" ] || [ "${1#-}" != "$1" ]; then set -- postgres "$@"; fi
if [ "$1" != "postgres" ]; then exec "$@"; fi
shift

: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
auth="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != "trust" ]; then
  echo "standin-postgres: POSTGRES_PASSWORD is not set (set it, or POSTGRES_HOST_AUTH_METHOD=trust)" >&2
  exit 1
fi
mkdir -p "$PGDATA" /var/run/postgresql
chown -R postgres:postgres "$PGDATA" /var/run/postgresql
chmod 0700 "$PGDATA"
as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a word list by contract
  as_pg initdb -D "$PGDATA" --username=postgres --auth-local=trust --auth-host="$auth" \
    --encoding=UTF8 --locale=C.UTF-8 ${POSTGRES_INITDB_ARGS:-} >/dev/null
  {
    echo "listen_addresses = '*'"
    echo "unix_socket_directories = '/var/run/postgresql'"
  } >> "$PGDATA/postgresql.conf"
  {
    echo "host all all 0.0.0.0/0 $auth"
    echo "host all all ::/0 $auth"
  } >> "$PGDATA/pg_hba.conf"
  # a temporary server on a private unix socket only: nothing outside — not even a pg_isready
  # healthcheck on the default socket — sees the database before it is initialised
  init_sock=$(mktemp -d /tmp/standin-init.XXXXXX); chown postgres "$init_sock"
  as_pg pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=$init_sock" -w start >/dev/null
  psql_pg() { as_pg psql -h "$init_sock" -v ON_ERROR_STOP=1 -q -X "$@"; }
  pw=${POSTGRES_PASSWORD:-}
  esc_pw=${pw//\'/\'\'}
  if [ "$POSTGRES_USER" = "postgres" ]; then
    [ -n "$pw" ] && psql_pg -c "ALTER ROLE postgres PASSWORD '$esc_pw'"
  else
    psql_pg -c "CREATE ROLE \"$POSTGRES_USER\" LOGIN SUPERUSER${pw:+ PASSWORD '$esc_pw'}"
  fi
  if [ "$POSTGRES_DB" != "postgres" ]; then
    psql_pg -c "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\""
  fi
  shopt -s nullglob
  # *.sh init scripts run psql as the official image's do (default socket → the temporary server)
  export PGHOST="$init_sock"
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh)     echo "standin-postgres: running $f"; if [ -x "$f" ]; then "$f"; else . "$f"; fi ;;
      *.sql)    echo "standin-postgres: running $f"; psql_pg -U "$POSTGRES_USER" -d "$POSTGRES_DB" -f "$f" ;;
      *.sql.gz) echo "standin-postgres: running $f"; gunzip -c "$f" | psql_pg -U "$POSTGRES_USER" -d "$POSTGRES_DB" ;;
      *)        echo "standin-postgres: ignoring $f" ;;
    esac
  done
  unset PGHOST
  as_pg pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  rm -rf "$init_sock"
  echo "standin-postgres: initialised $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
fi

exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" "$@"
