# Start and stop a throwaway PostgreSQL server on 127.0.0.1 for the test run. Sourced by .ci/run.
#   pg_start   -> exports AQGR_TEST_POSTGRES_URL (a superuser URL; tests create one database per test)
#   pg_stop    -> stops the server and removes its data directory
# Uses the machine's PostgreSQL (15 on the CI image): initdb + pg_ctl in a temporary directory, run as
# the `postgres` user when we are root (PostgreSQL refuses to run as root). Installs it with apt-get
# only when the binaries are missing.

pg_bindir() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/pg_ctl" ] && { echo "$dir"; return 0; }
    done
    command -v pg_ctl >/dev/null 2>&1 && { dirname "$(command -v pg_ctl)"; return 0; }
    return 1
}

pg_start() {
    local bin port
    if ! bin=$(pg_bindir); then
        echo "PostgreSQL not found: installing it with apt-get" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        bin=$(pg_bindir) || { echo "error: no PostgreSQL binaries (pg_ctl) after apt-get install postgresql" >&2; return 1; }
    fi
    PG_TMP=$(mktemp -d /tmp/aqgr-ci-pg.XXXXXX)
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    PG_AS=()
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$PG_TMP"
        PG_AS=(runuser -u postgres --)
    fi
    "${PG_AS[@]}" "$bin/initdb" -D "$PG_TMP/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$PG_TMP/initdb.log" 2>&1 \
        || { cat "$PG_TMP/initdb.log" >&2; return 1; }
    "${PG_AS[@]}" "$bin/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $PG_TMP -c fsync=off -c max_connections=200" start >/dev/null \
        || { cat "$PG_TMP/server.log" >&2; return 1; }
    PG_BIN=$bin
    export AQGR_TEST_POSTGRES_URL="postgresql+psycopg://postgres@127.0.0.1:$port/postgres"
    echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $PG_TMP)" >&2
}

pg_stop() {
    if [ -n "${PG_TMP:-}" ] && [ -d "$PG_TMP/data" ]; then
        "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    [ -n "${PG_TMP:-}" ] && rm -rf "$PG_TMP"
    return 0
}
