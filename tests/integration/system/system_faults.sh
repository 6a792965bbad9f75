#!/bin/sh
# Faults on the full-system riscv64 board, each mid-run, each with a clear
# outcome and nothing hanging: the network cut for 40 s (run waits, connects
# again and completes), the SSH server's session killed (the same), a
# reboot (the run is gone, said so), a full disk (refused before upload),
# and a finished run kept on the board's persistent disk across a reboot
# (fetched afterwards).
# Usage: system_faults.sh BOARDTRACE REPORT SYSTEM_SH BOARD_DIR ARCH DEMO CAPTURE
set -eu
boardtrace=$1 report=$2 system_sh=$3 board_dir=$4 arch=$5 demo=$6 capture=$7
needs="$demo $capture"
. "$(dirname "$0")/lib.sh"

# Starts `boardtrace run` of the demo (ARGS... after the program) in the
# background, output in $work/NAME.out; returns once the program traces.
start_run() {
    run_name=$1
    shift
    bt run --capture "$capture" -f -o "$work/$run_name.tracy" "$demo" -- "$@" >"$work/$run_name.out" 2>&1 &
    run_pid=$!
    n=0
    until grep -q "program is tracing" "$work/$run_name.out"; do
        kill -0 "$run_pid" 2>/dev/null || {
            cat "$work/$run_name.out" >&2
            fail "$run_name: the run ended before the program traced"
        }
        n=$((n + 1))
        [ "$n" -lt 600 ] || fail "$run_name: the program did not trace within 60 s"
        sleep 0.1
    done
}

# Waits for the run started last, at most SECONDS; sets rc.
wait_run() {
    n=0
    while kill -0 "$run_pid" 2>/dev/null; do
        n=$((n + 1))
        if [ "$n" -gt $(($1 * 10)) ]; then
            kill -9 "$run_pid"
            cat "$work/$run_name.out" >&2
            fail "$run_name: boardtrace run still ran after $1 s"
        fi
        sleep 0.1
    done
    rc=0
    wait "$run_pid" || rc=$?
    cat "$work/$run_name.out"
}

say "--- the network cut for 40 s while the demo runs"
start_run cut -f 100
board net off
sleep 40
board net on
wait_run 180
[ "$rc" = 0 ] || fail "cut: boardtrace run exited $rc after the network came back"
grep -q "connected to .* again; following the run" "$work/cut.out" || fail "cut: run did not say it connected again"
check_demo_counts "$work/cut.tracy" "$work/cut.out"

say "--- the SSH server's session killed while the demo runs"
start_run kill -f 100
board kill-session
wait_run 180
[ "$rc" = 0 ] || fail "kill: boardtrace run exited $rc after its session was killed"
grep -q "connected to .* again; following the run" "$work/kill.out" || fail "kill: run did not say it connected again"
check_demo_counts "$work/kill.tracy" "$work/kill.out"

say "--- the board reboots while the demo runs"
start_run reboot -f 100
sleep 1
board reboot
wait_run 180
[ "$rc" = 10 ] || fail "reboot: boardtrace run exited $rc, expected 10 (no trace)"
grep -q "is gone from .*: the board rebooted" "$work/reboot.out" || fail "reboot: run did not say the board rebooted"

say "--- a full /tmp"
board fill-disk /tmp
bounded full 120 bt run --capture "$capture" -o "$work/full.tracy" "$demo"
board unfill-disk /tmp
cat "$out"
[ "$rc" = 7 ] || fail "full: boardtrace run exited $rc, expected 7 (board preflight)"
grep -qi "free\|space" "$out" || fail "full: run did not say the board lacks space"
[ ! -e "$work/full.tracy" ] || fail "full: a trace file appeared"

say "--- a finished run on the persistent disk survives a reboot"
board ssh 'mountpoint -q /data' || fail "the board has no persistent disk at /data (start it with --disk)"
bounded detach 120 bt run --capture "$capture" --detach --remote-dir /data -o "$work/kept.tracy" "$demo" -- -f 20
cat "$out"
[ "$rc" = 0 ] || fail "detach: boardtrace run --detach exited $rc"
n=0
until bt status --remote-dir /data 2>&1 | grep -q "finished"; do
    n=$((n + 1))
    [ "$n" -lt 60 ] || fail "the detached run did not finish within 60 s"
    sleep 1
done
board reboot
bounded fetch 120 bt fetch --remote-dir /data -o "$work/kept.tracy"
cat "$out"
[ "$rc" = 0 ] || fail "fetch after the reboot exited $rc"
"$report" stats "$work/kept.tracy" >"$work/stats"
[ "$(zone_count matmul "$work/stats")" = 300 ] || fail "the kept trace lacks the demo's 300 matmul zones"
say "passed on the $arch board"
