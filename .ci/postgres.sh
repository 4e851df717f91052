#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the tests: Debian's postgresql-15 binaries, a data directory under /tmp,
# a Unix socket in that directory and a free loopback port, run as an unprivileged user (initdb refuses root:
# as root the cluster belongs to the `postgres` system user the Debian package creates).
#
#   .ci/postgres.sh run -- CMD...   start a cluster, run CMD with TWOBITS_TEST_POSTGRES (a URI with a password,
#                                   role with CREATEDB) and TWOBITS_TEST_POSTGRES_DIR exported, then remove the
#                                   cluster whatever CMD did; exits with CMD's status
#   .ci/postgres.sh start           start one and print `export ...` lines (the caller must `destroy` it)
#   .ci/postgres.sh stop DIR        stop the server, keep its data (tests of "PostgreSQL is down")
#   .ci/postgres.sh resume DIR      start a stopped server again, same port and data
#   .ci/postgres.sh destroy DIR     stop it and delete everything
#   .ci/postgres.sh standby DIR     start a streaming standby of the cluster in DIR (pg_basebackup -R) on a port
#                                   of its own; prints `export TWOBITS_TEST_POSTGRES_STANDBY_DIR=...` (destroy it too)
#   .ci/postgres.sh promote DIR     promote a standby to a primary (pg_ctl promote, waits until it takes writes)
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -x "$bindir/initdb" ]] || { echo "postgres.sh: no PostgreSQL server (apt-get install postgresql)" >&2; exit 1; }
as_owner() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

role=twobits
password=twobits-test-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start() {
    local dir port
    dir=$(mktemp -d /tmp/twobits-pg.XXXXXX)
    chmod 0755 "$dir"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$dir"
    port=$(free_port)
    printf '%s' "$password" > "$dir/pwfile"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$dir/pwfile"
    as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        --pwfile="$dir/pwfile" -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    cat >> "$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
CONF
    echo "$port" > "$dir/port"
    resume "$dir"
    as_owner "$bindir/psql" -h "$dir" -p "$port" -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE $role LOGIN CREATEDB PASSWORD '$password'" -c "CREATE DATABASE $role OWNER $role" >/dev/null
    echo "export TWOBITS_TEST_POSTGRES='postgresql://$role:$password@127.0.0.1:$port/$role'"
    echo "export TWOBITS_TEST_POSTGRES_DIR='$dir'"
}

stop() { as_owner "$bindir/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true; }

resume() {
    as_owner "$bindir/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 30 start >/dev/null || { cat "$1/server.log" >&2; exit 1; }
}

standby() {
    local primary=$1 dir port
    dir=$(mktemp -d /tmp/twobits-pg-standby.XXXXXX)
    chmod 0755 "$dir"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$dir"
    port=$(free_port)
    # initdb's pg_hba.conf trusts local replication connections: the copy streams over the primary's socket;
    # -c fast: a spread checkpoint would keep the copy waiting for a minute and more.
    as_owner "$bindir/pg_basebackup" -h "$primary" -p "$(cat "$primary/port")" -U postgres -D "$dir/data" -R -X stream -c fast \
        --no-sync >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
    # Later lines win: the copied postgresql.conf names the primary's port and socket directory.
    cat >> "$dir/data/postgresql.conf" <<CONF
port = $port
unix_socket_directories = '$dir'
CONF
    echo "$port" > "$dir/port"
    resume "$dir"
    echo "export TWOBITS_TEST_POSTGRES_STANDBY_DIR='$dir'"
}

promote() { as_owner "$bindir/pg_ctl" -D "$1/data" -w -t 30 promote >/dev/null; }

destroy() {
    [[ -n "${1:-}" && -d "$1/data" ]] || return 0
    as_owner "$bindir/pg_ctl" -D "$1/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$1"
}

case "${1:-}" in
    start) start ;;
    stop) stop "$2" ;;
    resume) resume "$2" ;;
    destroy) destroy "$2" ;;
    standby) standby "$2" ;;
    promote) promote "$2" ;;
    run)
        shift; [[ "${1:-}" == "--" ]] && shift
        eval "$(start)"
        trap 'destroy "$TWOBITS_TEST_POSTGRES_DIR"' EXIT
        echo "postgres.sh: throw-away cluster in $TWOBITS_TEST_POSTGRES_DIR (port $(cat "$TWOBITS_TEST_POSTGRES_DIR/port"))" >&2
        status=0; "$@" || status=$?
        exit $status ;;
    *) echo "usage: $0 run -- CMD... | start | stop DIR | resume DIR | destroy DIR | standby DIR | promote DIR" >&2; exit 2 ;;
esac
