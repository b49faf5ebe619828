#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the psql indexer tests (src/indexer/psqlIndexer.test.ts).
#
#   eval "$(.ci/postgres.sh)"      # start: prints the exports below on stdout, progress on stderr
#   npx vitest run src/indexer
#   .ci/postgres.sh stop           # stop the cluster named by $COMETH_TEST_PG_DATA and delete it
#
# Start creates a cluster in a fresh temp dir, listens on 127.0.0.1:55432 (socket in the temp dir),
# creates database cometh_test and prints
#   export COMETH_TEST_PG_URL=postgres://cometh@127.0.0.1:55432/cometh_test
#   export COMETH_TEST_PG_DATA=<temp dir>
# initdb refuses to run as root, so as root the cluster belongs to the `postgres` user (or to a
# dedicated `cometh-pg` system user when there is none). Without initdb/pg_ctl on PATH or under
# /usr/lib/postgresql/*/bin, PostgreSQL is installed with apt-get.
set -euo pipefail

PORT=55432
DB=cometh_test
DB_USER=cometh

log() { echo "postgres.sh: $*" >&2; }

find_pg_bin() {
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return 0
  fi
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [[ -n "$dir" && -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
    echo "$dir"
    return 0
  fi
  return 1
}

# Runs a command as the cluster owner (the current user unless we are root).
as_owner() {
  if [[ "$OWNER" == "$(id -un)" ]]; then
    "$@"
  elif command -v runuser >/dev/null 2>&1; then
    runuser -u "$OWNER" -- "$@"
  else
    su -s /bin/bash "$OWNER" -c "$(printf '%q ' "$@")"
  fi
}

pick_owner() {
  if [[ "$(id -u)" != "0" ]]; then
    OWNER=$(id -un)
  elif getent passwd postgres >/dev/null 2>&1; then
    OWNER=postgres
  else
    OWNER=cometh-pg
    if ! getent passwd "$OWNER" >/dev/null 2>&1; then
      log "creating system user $OWNER (initdb refuses root)"
      useradd --system --no-create-home --shell /usr/sbin/nologin "$OWNER"
    fi
  fi
}

stop_cluster() {
  local dir=${COMETH_TEST_PG_DATA:-}
  if [[ -z "$dir" || ! -d "$dir/data" ]]; then
    log "COMETH_TEST_PG_DATA does not name a cluster started by this script; nothing to stop"
    exit 1
  fi
  PG_BIN=$(find_pg_bin) || { log "pg_ctl not found"; exit 1; }
  OWNER=$(stat -c %U "$dir/data")
  as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || log "pg_ctl stop failed; removing the directory anyway"
  rm -rf "$dir"
  log "stopped and removed $dir"
}

start_cluster() {
  if ! PG_BIN=$(find_pg_bin); then
    log "initdb/pg_ctl not found; installing postgresql with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y postgresql >&2
    PG_BIN=$(find_pg_bin) || { log "postgresql installed but initdb/pg_ctl still not found"; exit 1; }
  fi
  pick_owner

  local dir
  # As root the owner must reach the directory, so stay out of a private $TMPDIR.
  local base=${TMPDIR:-/tmp}
  [[ "$(id -u)" == "0" ]] && base=/tmp
  dir=$(mktemp -d "$base/cometh-pg.XXXXXX")
  chmod 0755 "$dir"
  mkdir "$dir/data" "$dir/socket"
  chown "$OWNER" "$dir/data" "$dir/socket"
  touch "$dir/server.log"
  chown "$OWNER" "$dir/server.log"

  log "initdb in $dir/data as $OWNER ($PG_BIN)"
  as_owner "$PG_BIN/initdb" -D "$dir/data" -U "$DB_USER" --auth=trust --no-locale -E UTF8 >&2
  log "starting on 127.0.0.1:$PORT"
  if ! as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $PORT -k $dir/socket -c listen_addresses=127.0.0.1" start >&2; then
    log "the server did not start (is port $PORT taken?); its log follows"
    cat "$dir/server.log" >&2 || true
    rm -rf "$dir"
    exit 1
  fi
  as_owner "$PG_BIN/createdb" -h "$dir/socket" -p "$PORT" -U "$DB_USER" "$DB"
  log "ready; stop with: COMETH_TEST_PG_DATA=$dir .ci/postgres.sh stop"
  echo "export COMETH_TEST_PG_URL=postgres://$DB_USER@127.0.0.1:$PORT/$DB"
  echo "export COMETH_TEST_PG_DATA=$dir"
}

case "${1:-start}" in
  start) start_cluster ;;
  stop) stop_cluster ;;
  *)
    log "unknown command \"$1\"; use start (default) or stop"
    exit 2
    ;;
esac
