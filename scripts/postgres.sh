#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests, from the server binaries installed on the machine.
#
#   scripts/postgres.sh start DIR   # prints the URL of database `postgres` as user `sna`
#   scripts/postgres.sh stop DIR    # stops it by the postmaster's pid and removes DIR
#   scripts/postgres.sh halt DIR    # stops the server only (fast shutdown), keeping its data
#   scripts/postgres.sh resume DIR  # starts a halted server again, on the same port
#
# The cluster lives in DIR (created); the server listens on 127.0.0.1 on a free port and on a
# socket in DIR, with password authentication over TCP (user `sna`, password `sna-test`). initdb
# refuses to run as root, so as root the server runs as `nobody`. `SNA_PG_BIN` names another bin
# directory.
set -euo pipefail
cmd="${1:?usage: postgres.sh start|stop|halt|resume DIR}"
dir="${2:?usage: postgres.sh start|stop|halt|resume DIR}"

as=()
if [ "$(id -u)" = 0 ]; then
    as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi

binaries() {
    bin="${SNA_PG_BIN:-}"
    if [ -z "$bin" ]; then
        bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    fi
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        echo "postgres.sh: no PostgreSQL server binaries (initdb, postgres) found under /usr/lib/postgresql;" >&2
        echo "install them with: apt-get install -y postgresql (or set SNA_PG_BIN to their directory)" >&2
        exit 1
    fi
    echo "$bin"
}

# Runs the server of DIR on 127.0.0.1:PORT in its own session (setsid, so its own process group)
# and prints its URL once it answers.
serve() {
    local bin="$1" port="$2"
    "${as[@]}" setsid "$bin/postgres" -D "$dir/data" -c listen_addresses=127.0.0.1 -p "$port" -k "$dir" \
        -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
        >>"$dir/server.log" 2>&1 </dev/null &
    for _ in $(seq 100); do
        if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
            echo "postgres://sna:sna-test@127.0.0.1:$port/postgres?sslmode=disable"
            exit 0
        fi
        sleep 0.1
    done
    cat "$dir/server.log" >&2
    exit 1
}

# Stops the server of DIR by the postmaster's pid: a fast shutdown, then SIGKILL after 10 s.
halt() {
    if [ -f "$dir/data/postmaster.pid" ]; then
        pid="$(head -n 1 "$dir/data/postmaster.pid")"
        kill -INT "$pid" 2>/dev/null || true
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
}

case "$cmd" in
start)
    bin="$(binaries)"
    mkdir -p "$dir"
    chmod 700 "$dir"
    printf 'sna-test\n' >"$dir/pwfile"
    [ ${#as[@]} -gt 0 ] && chown -R nobody:nogroup "$dir"
    "${as[@]}" "$bin/initdb" -D "$dir/data" -U sna --pwfile="$dir/pwfile" --auth-local=trust --auth-host=scram-sha-256 \
        -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    echo "$port" >"$dir/port"
    serve "$bin" "$port"
    ;;
stop)
    halt
    rm -rf "$dir"
    ;;
halt)
    halt
    ;;
resume)
    serve "$(binaries)" "$(cat "$dir/port")"
    ;;
*)
    echo "usage: postgres.sh start|stop|halt|resume DIR" >&2
    exit 2
    ;;
esac
