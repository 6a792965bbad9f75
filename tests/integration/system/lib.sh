# shellcheck shell=sh
# Shared by the tests on the full-system boards (tools/board/system.sh):
# sourced after setting boardtrace, system_sh, board_dir and arch.
name=${0##*/}
name=${name%.sh}
work=$(mktemp -d "${TMPDIR:-/tmp}/bt-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT

say() { printf '%s: %s\n' "$name" "$*"; }
fail() {
    printf '%s: FAIL: %s\n' "$name" "$*" >&2
    exit 1
}

# The files in $needs come from a board build; without them the test fails,
# saying which build makes them (a skip would pass unseen).
for f in ${needs-}; do
    if [ ! -e "$f" ]; then
        case $arch in
        riscv64) how="build this build (the host-riscv64 preset), whose cross/riscv64 has it" ;;
        *) how="build the $arch preset first: cmake --preset $arch && cmake --build --preset $arch (tools/test.sh does)" ;;
        esac
        fail "$f is missing: $how"
    fi
done

board() { sh "$system_sh" --dir "$board_dir" --arch "$arch" "$@"; }
eval "$(board env)" || fail "the $arch board is not running"

# boardtrace COMMAND with the board's target, key and known_hosts.
bt() {
    c=$1
    shift
    "$boardtrace" "$c" --host "$BOARD_TARGET" -i "$BOARD_KEY" --known-hosts "$BOARD_KNOWN_HOSTS" "$@"
}

# Runs COMMAND... with its output in $work/NAME.out, bounded by SECONDS;
# sets rc. A command still running at the bound fails the test: nothing
# may hang.
bounded() {
    out=$work/$1.out
    limit=$2
    shift 2
    "$@" >"$out" 2>&1 &
    pid=$!
    n=0
    while kill -0 "$pid" 2>/dev/null; do
        n=$((n + 1))
        if [ "$n" -gt $((limit * 10)) ]; then
            kill -9 "$pid" 2>/dev/null
            cat "$out" >&2
            fail "'$*' still ran after $limit s"
        fi
        sleep 0.1
    done
    rc=0
    wait "$pid" || rc=$?
}

# The count of zone NAME in `boardtrace-report stats` output FILE.
zone_count() {
    awk -v z="$1" '$1 == z { print $3; exit }' "$2"
}

# Checks the report of TRACE against the demo's own counts in its output
# OUT ("zones: embed=50 ... total=1550").
check_demo_counts() {
    "$report" stats "$1" >"$work/stats" || fail "boardtrace-report stats $1 failed"
    line=$(grep -m1 '^  zones: ' "$2") || fail "the demo printed no zone counts"
    total=0
    for kv in ${line#*zones: }; do
        z=${kv%%=*}
        want=${kv#*=}
        if [ "$z" = total ]; then
            [ "$total" = "$want" ] || fail "zones in the trace: $total, the demo made $want"
            continue
        fi
        got=$(zone_count "$z" "$work/stats")
        [ "$got" = "$want" ] || fail "zone $z: $got in the trace, the demo made $want"
        total=$((total + got))
    done
    say "zones as the demo counted them: ${line#*zones: }"
}
