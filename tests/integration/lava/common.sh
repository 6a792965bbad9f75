# What the scripts against a real LAVA share (sourced as
# "$lava_tests/common.sh", lava_tests this folder): their own network
# namespace, a LAVA started by lava-fixture.sh, Debian riscv64 boards as its
# devices of the ssh device type, and the token in the environment.
#
# A script sets work (emptied here), board_sh and boards (device names; each
# board in $work/board-NAME), calls lava_netns "$@" first, then lava_up; the
# EXIT trap set here stops the boards and LAVA (and calls lava_cleanup_extra
# first, if the script defines it).

lava_fixture=$lava_tests/lava-fixture.sh

# Runs the script again in a private network namespace (loopback only),
# unless it already runs in one.
lava_netns() {
    if [ -z "${BT_LAVA_NETNS:-}" ]; then
        BT_LAVA_NETNS=1 exec unshare -n sh -c 'ip link set lo up && exec sh "$0" "$@"' "$0" "$@"
    fi
}

# The farm scripts' arguments, WORKDIR BOARD_SH BOARDTRACE DEMO and at most
# $1 more (their usage: $2), into work, board_sh, boardtrace and demo; then
# the script runs in its own network namespace.
lava_farm_args() {
    extra=$1
    usage=$2
    shift 2
    [ $# -ge 4 ] && [ $# -le $((4 + extra)) ] || {
        echo "usage: $0 WORKDIR BOARD_SH BOARDTRACE DEMO$usage" >&2
        exit 2
    }
    lava_netns "$@"
    work=$1
    board_sh=$2
    boardtrace=$3
    demo=$4
}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

lava_down() {
    if command -v lava_cleanup_extra >/dev/null 2>&1; then
        lava_cleanup_extra
    fi
    for b in $boards; do
        sh "$board_sh" --dir "$work/board-$b" stop >/dev/null 2>&1 || true
    done
    sh "$lava_fixture" stop "$lava" || true
}

# Starts LAVA in $work/lava and the boards, each a device of LAVA's;
# $work/known_hosts holds their host keys; LAVA_URL, LAVA_USER, LAVA_TOKEN
# and XDG_CONFIG_HOME (lavacli's configuration, identity "test") exported.
lava_up() {
    rm -rf "$work"
    mkdir -p "$work"
    lava=$work/lava
    trap lava_down EXIT
    trap 'exit 130' INT TERM
    sh "$lava_fixture" start "$lava"
    eval "$(sh "$lava_fixture" env "$lava")"
    export XDG_CONFIG_HOME
    : >"$work/known_hosts"
    for b in $boards; do
        sh "$board_sh" --dir "$work/board-$b" --arch riscv64 start
        sh "$lava_fixture" device "$lava" "$b" "$work/board-$b"
        cat "$work/board-$b/known_hosts" >>"$work/known_hosts"
    done
    # The admin's token, from the fixture's lavacli configuration into the
    # environment, as a user gives boardtrace theirs.
    LAVA_USER=admin
    LAVA_TOKEN=$(sed -n 's/^ *token: *//p' "$XDG_CONFIG_HOME/lavacli.yaml")
    export LAVA_URL LAVA_USER LAVA_TOKEN
}
