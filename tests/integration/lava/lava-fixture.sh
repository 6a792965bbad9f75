#!/bin/sh
# A real LAVA (Debian 12's lava-server, lava-dispatcher and lavacli, from
# tools/setup.sh's package list) started on loopback for the tests, with no
# systemd and nothing of it under /etc: PostgreSQL from initdb, lava-server's
# Django app under gunicorn on 127.0.0.1, lava-scheduler and one lava-worker
# started by hand. Everything it keeps (job logs, device dictionaries, the
# worker's job folders, logs) lives in DIR, except PostgreSQL's cluster: the
# postgres user it runs as may not reach DIR (a clone in root's 0700 home),
# so the cluster lives in a private folder of its own under /tmp, named in
# DIR/pgdir and removed by stop (its log copied to DIR/log/postgres.log).
#
# Usage: lava-fixture.sh start|stop|env DIR
#        lava-fixture.sh device DIR NAME BOARD_DIR
#   start   start it (a fresh instance unless DIR already holds one), with an
#           admin user, its token in DIR/config/lavacli.yaml (lavacli's
#           configuration, identity "test") and one worker "worker0"
#   stop    stop every process it started and remove the database; DIR
#           stays for the logs
#   device  add (or update) device NAME of LAVA's ssh device type for the
#           board started by tools/board/debian.sh --dir BOARD_DIR: its
#           device dictionary names the board's port, user and client key
#   env     print LAVA_URL, LAVA_DIR and XDG_CONFIG_HOME (where lavacli
#           finds its configuration) for the shell: lavacli -i test ...
#
# Must run as root (PostgreSQL runs as the postgres user) and should run in
# its own network namespace (unshare -n, with lo up): it listens on 127.0.0.1
# only, at ports picked free at start (DIR/ports).
set -eu

say() { printf 'lava-fixture: %s\n' "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}

[ $# -ge 2 ] || {
    sed -n '/^# Usage/,/^#  *finds/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
cmd=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
shift 2

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pgbin" ] || die "no PostgreSQL server (tools/setup.sh installs postgresql)"
command -v lava-server >/dev/null || die "no lava-server (tools/setup.sh installs it)"
command -v lava-worker >/dev/null || die "no lava-worker (tools/setup.sh installs lava-dispatcher)"
command -v lavacli >/dev/null || die "no lavacli (tools/setup.sh installs it)"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# lava-server reads its database, secret and paths from the environment
# (lava_server/settings/prod.py), so that no file under /etc is needed.
server_env() {
    pg_port=$(sed -n 's/^pg=//p' "$dir/ports")
    http_port=$(sed -n 's/^http=//p' "$dir/ports")
    export DATABASE_URL="postgres://lavaserver@127.0.0.1:$pg_port/lavaserver"
    export SECRET_KEY
    SECRET_KEY=$(cat "$dir/secret")
    export ALLOWED_HOSTS="127.0.0.1,localhost"
    export LAVA_SETTINGS_MEDIA_ROOT="$dir/media/"
    export LAVA_SETTINGS_DEVICES_PATH="$dir/devices"
    export LAVA_SETTINGS_HEALTH_CHECKS_PATH="$dir/health-checks"
    export LAVA_SETTINGS_DISPATCHER_CONFIG_PATH="$dir/dispatcher.d"
    export LAVA_SETTINGS_DJANGO_LOGFILE="$dir/log/django.log"
    export LAVA_SETTINGS_INSTANCE_NAME="boardtrace-test"
    LAVA_URL="http://127.0.0.1:$http_port"
}

manage() { lava-server manage "$@"; }

# Waits up to $2 tenths of a second for the command $1 to succeed.
wait_for() {
    n=0
    while ! eval "$1" >/dev/null 2>&1; do
        n=$((n + 1))
        [ "$n" -lt "$2" ] || return 1
        sleep 0.1
    done
}

running() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

# Starts "$@" in the background as process $name, its output in log/$name.log.
spawn() {
    name=$1
    shift
    "$@" >>"$dir/log/$name.log" 2>&1 &
    echo $! >"$dir/$name.pid"
}

# lava-server reads the workers' dispatcher configuration from
# /etc/lava-server/dispatcher.d whatever its settings say (lava_server/files.py):
# its processes see DIR/dispatcher.d there, in a private mount namespace.
spawn_server() {
    name=$1
    shift
    spawn "$name" unshare -m --propagation private sh -c \
        'mount --bind "$0" /etc/lava-server/dispatcher.d && exec "$@"' "$dir/dispatcher.d" "$@"
}

# As the postgres user, from / (it may not reach the caller's folder).
as_postgres() { (cd / && runuser -u postgres -- "$@"); }

# The cluster's private folder (0700, the postgres user's), made by start.
pg=""
[ ! -f "$dir/pgdir" ] || pg=$(cat "$dir/pgdir")

start_postgres() {
    if [ -z "$pg" ] || [ ! -f "$pg/data/PG_VERSION" ]; then
        # /tmp, not $TMPDIR: the postgres user must reach it.
        pg=$(mktemp -d /tmp/boardtrace-lava-pg.XXXXXX)
        chown postgres:postgres "$pg"
        chmod 700 "$pg"
        echo "$pg" >"$dir/pgdir"
        as_postgres "$pgbin/initdb" -D "$pg/data" -A trust -U postgres \
            -E UTF-8 --locale=C.UTF-8 >"$dir/log/initdb.log" 2>&1 ||
            die "initdb failed; see $dir/log/initdb.log"
    fi
    as_postgres "$pgbin/pg_ctl" -D "$pg/data" -w -t 120 -l "$pg/postgres.log" \
        -o "-c listen_addresses=127.0.0.1 -p $pg_port -k $pg -c fsync=off" start >/dev/null || {
        cp "$pg/postgres.log" "$dir/log/postgres.log" 2>/dev/null || true
        die "PostgreSQL did not start; see $dir/log/postgres.log"
    }
}

psql_admin() { as_postgres "$pgbin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres "$@"; }

cmd_start() {
    mkdir -p "$dir/log" "$dir/media" "$dir/devices" "$dir/health-checks" "$dir/dispatcher.d" "$dir/worker"
    chmod 755 "$dir"
    fresh=0
    # A DIR whose database a stop removed starts afresh.
    if [ ! -f "$dir/ports" ] || [ -z "$pg" ] || [ ! -f "$pg/data/PG_VERSION" ]; then
        fresh=1
        printf 'pg=%s\nhttp=%s\n' "$(free_port)" "$(free_port)" >"$dir/ports"
        python3 -c 'import secrets; print(secrets.token_urlsafe(40))' >"$dir/secret"
        chmod 600 "$dir/secret"
    fi
    server_env
    t0=$(date +%s)

    { [ -n "$pg" ] && as_postgres "$pgbin/pg_ctl" -D "$pg/data" status >/dev/null 2>&1; } || start_postgres
    if [ "$fresh" = 1 ]; then
        psql_admin -c "CREATE ROLE lavaserver LOGIN" ||
            die "creating the database role failed"
        psql_admin -c "CREATE DATABASE lavaserver OWNER lavaserver ENCODING 'UTF-8' TEMPLATE template0" ||
            die "creating the database failed"
    fi
    manage migrate --noinput >"$dir/log/migrate.log" 2>&1 || die "migrating the database failed; see $dir/log/migrate.log"
    t_db=$(date +%s)

    if [ "$fresh" = 1 ]; then
        token=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
        # One Django start instead of one per "lava-server manage" command:
        # what users add, tokens add, workers add and device-types add do.
        manage shell -c "
from django.contrib.auth.models import User
from linaro_django_xmlrpc.models import AuthToken
from lava_scheduler_app.models import DeviceType, Worker
admin = User.objects.create_superuser('admin', '', None)
AuthToken.objects.create(user=admin, secret='$token', description='boardtrace-test')
DeviceType.objects.create(name='ssh')
worker = Worker.objects.create(hostname='worker0', description='boardtrace test worker',
                               health=Worker.HEALTH_ACTIVE)
open('$dir/worker-token', 'w').write(worker.token)
" >"$dir/log/setup.log" 2>&1 || die "adding the admin, its token, the worker and the ssh device type failed; see $dir/log/setup.log"
        chmod 600 "$dir/worker-token"
        mkdir -p "$dir/config"
        (umask 077 && printf 'test:\n  uri: %s/RPC2\n  username: admin\n  token: %s\n' \
            "$LAVA_URL" "$token" >"$dir/config/lavacli.yaml")
        # Without it, lava-dispatcher looks for the address of the interface
        # of the default route, which the test's network namespace lacks.
        printf 'dispatcher_ip: 127.0.0.1\n' >"$dir/dispatcher.d/worker0.yaml"
    fi

    running gunicorn || spawn_server gunicorn gunicorn3 lava_server.wsgi --bind "127.0.0.1:$http_port" \
        --workers 2 --worker-class sync --timeout 120 --log-level info
    # The scheduler drops to the lavaserver user by default, which may not
    # reach DIR (its log there) either: it stays root, as the rest here.
    running scheduler || spawn_server scheduler lava-server manage lava-scheduler --level INFO \
        --log-file "$dir/log/scheduler-own.log" --user root --group root
    wait_for "python3 -c 'import urllib.request as u; u.urlopen(\"$LAVA_URL/api/v0.2/\", timeout=2)'" 1200 ||
        die "lava-server did not answer on $LAVA_URL within 120 s; see $dir/log/gunicorn.log"
    running worker || spawn worker lava-worker --name worker0 --url "$LAVA_URL/" \
        --token-file "$dir/worker-token" --worker-dir "$dir/worker" --level INFO \
        --log-file "$dir/log/worker-own.log"
    wait_for "XDG_CONFIG_HOME='$dir/config' lavacli -i test workers show worker0 | grep -q 'state *: Online'" 600 ||
        die "the worker did not come online within 60 s; see $dir/log/worker-own.log"
    t_up=$(date +%s)
    say "LAVA $(dpkg-query -W -f '${Version}' lava-server) at $LAVA_URL (database $((t_db - t0)) s, up in $((t_up - t0)) s), state in $dir"
}

stop_one() {
    if running "$1"; then
        pid=$(cat "$dir/$1.pid")
        kill "$pid" 2>/dev/null || true
        n=0
        while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 300 ]; do
            sleep 0.1
            n=$((n + 1))
        done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/$1.pid"
}

cmd_stop() {
    stop_one worker
    stop_one scheduler
    stop_one gunicorn
    if [ -n "$pg" ] && [ -f "$pg/data/postmaster.pid" ]; then
        as_postgres "$pgbin/pg_ctl" -D "$pg/data" -m fast -w -t 60 stop >/dev/null ||
            say "PostgreSQL did not stop"
    fi
    if [ -n "$pg" ] && [ -d "$pg" ] && [ ! -f "$pg/data/postmaster.pid" ]; then
        cp "$pg/postgres.log" "$dir/log/postgres.log" 2>/dev/null || true
        rm -rf "$pg"
        rm -f "$dir/pgdir"
    fi
}

# LAVA's own ssh connections to the device do not check its host key
# (lava-dispatcher passes StrictHostKeyChecking=no, and base.jinja2 sets
# ssh_options whatever the dictionary says); boardtrace's do, with the board's
# known_hosts.
cmd_device() {
    [ $# = 2 ] || die "device: expected NAME BOARD_DIR"
    name=$1
    board=$(cd "$2" && pwd)
    [ -f "$board/port" ] || die "device: no board state in $board (start it with tools/board/debian.sh)"
    server_env
    cat >"$dir/devices/$name.jinja2" <<EOF
{% extends 'ssh.jinja2' %}
{% set ssh_host = '127.0.0.1' %}
{% set ssh_port = $(cat "$board/port") %}
{% set ssh_user = 'root' %}
{% set ssh_identity_file = '$board/client_ed25519' %}
{% block schroot %}{% endblock schroot %}
EOF
    if ! lavacli_test devices show "$name" >/dev/null 2>&1; then
        manage devices add --device-type ssh --worker worker0 "$name" >/dev/null ||
            die "adding device $name failed"
    fi
    say "device $name: root@127.0.0.1:$(cat "$board/port")"
}

lavacli_test() { XDG_CONFIG_HOME="$dir/config" lavacli -i test "$@"; }

case $cmd in
start) cmd_start ;;
device) cmd_device "$@" ;;
stop) cmd_stop ;;
env)
    server_env
    printf 'LAVA_URL=%s\nLAVA_DIR=%s\nXDG_CONFIG_HOME=%s/config\n' "$LAVA_URL" "$dir" "$dir"
    ;;
*) die "unknown command $cmd (start, stop or env)" ;;
esac
