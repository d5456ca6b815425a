#!/bin/bash
# `redis-server [args]` (or bare `--flag` args) runs as the redis user with protected mode off and
# every interface bound unless the arguments say otherwise — the official image's behaviour.
set -euo pipefail
if [ "${1#-}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = "redis-server" ]; then
  shift
  extra=()
  case " $* " in *" --protected-mode "*) ;; *) extra+=(--protected-mode no) ;; esac
  case " $* " in *" --bind "*) ;; *) extra+=(--bind 0.0.0.0) ;; esac
  case " $* " in *" --dir "*) ;; *) extra+=(--dir /data) ;; esac
  chown -R redis:redis /data 2>/dev/null || true
  exec setpriv --reuid=redis --regid=redis --init-groups redis-server "$@" "${extra[@]}"
fi
exec "$@"
