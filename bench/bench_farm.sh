#!/bin/sh
# boardtrace farm run on a real LAVA (Debian 12's, started on loopback by
# tests/integration/lava/lava-fixture.sh) with three emulated Debian riscv64
# boards: the wall time of one program profiled on three boards at once
# against one board alone (the goal: at most 1.5 times), and what LAVA adds
# to a single run (submission, the job's deploy and boot over ssh, its
# release) against plain `boardtrace run` on the same board. Rounds
# alternate the three ways; prints each round and the medians. Nothing here
# decides a result but the runs' own success.
#
# Usage: bench_farm.sh WORKDIR BOARD_SH BOARDTRACE DEMO [ROUNDS]
# Runs itself in a private network namespace (loopback only).
set -eu

lava_tests=$(cd "$(dirname "$0")/../tests/integration/lava" && pwd)
. "$lava_tests/common.sh"
lava_farm_args 1 " [ROUNDS]" "$@"
rounds=${5:-3}
boards="rv0 rv1 rv2"

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

lava_up

# Plain `boardtrace run` on rv0, as a user without a lab would.
plain() {
    "$boardtrace" run --host "root@127.0.0.1:$(cat "$work/board-rv0/port")" \
        --identity "$work/board-rv0/client_ed25519" --known-hosts "$work/known_hosts" \
        -f -o "$work/plain.tracy" "$demo" >"$work/plain.out" 2>&1 ||
        {
            cat "$work/plain.out"
            fail "boardtrace run exited non-zero"
        }
}
farm() {
    rm -rf "$work/farm$1"
    "$boardtrace" farm run --lava "$LAVA_URL" --device-type ssh --count "$1" -o "$work/farm$1" \
        --known-hosts "$work/known_hosts" --hold-minutes 15 "$demo" >"$work/farm$1.out" 2>&1 ||
        {
            cat "$work/farm$1.out"
            fail "farm run --count $1 exited non-zero"
        }
    [ "$(grep -c '  0  *1550  *52 .*Complete$' "$work/farm$1.out")" = "$1" ] ||
        fail "farm run --count $1: not $1 complete runs of 1550 zones"
}
timed() {
    t0=$(now)
    "$@"
    awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

# One unmeasured round first: the boards' first run fills their caches.
plain
farm 3
: >"$work/times"
r=1
while [ "$r" -le "$rounds" ]; do
    p=$(timed plain)
    f1=$(timed farm 1)
    f3=$(timed farm 3)
    echo "round $r: plain run $p s, farm 1 board $f1 s, farm 3 boards $f3 s (load $(cut -d' ' -f1 /proc/loadavg))"
    echo "$p $f1 $f3" >>"$work/times"
    r=$((r + 1))
done
mp=$(awk '{ print $1 }' "$work/times" | median)
m1=$(awk '{ print $2 }' "$work/times" | median)
m3=$(awk '{ print $3 }' "$work/times" | median)
echo "medians of $rounds rounds on $(nproc) CPUs:"
echo "  boardtrace run, one board:          $mp s"
echo "  farm run, one board:                $m1 s (LAVA adds $(awk -v a="$m1" -v b="$mp" 'BEGIN { printf "%.1f", a - b }') s)"
echo "  farm run, three boards at once:     $m3 s"
echo "  three boards against one (farm):    $(awk -v a="$m3" -v b="$m1" 'BEGIN { printf "%.2f", a / b }') x (goal: at most 1.5)"
