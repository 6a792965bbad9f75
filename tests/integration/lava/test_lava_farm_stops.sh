#!/bin/sh
# boardtrace farm run when a run is cut short, against a real LAVA (label
# lava) with three Debian riscv64 boards (devices rv0..rv2 of LAVA's ssh
# device type):
#   - a job cancelled from LAVA's side (lavacli jobs cancel) while its
#     program runs: the command notices, stops that run, keeps what arrived
#     and reports the job, exit status 4;
#   - Ctrl-C (SIGINT) while three programs run: every job is cancelled in
#     LAVA, each board's trace keeps what arrived, exit status 130;
#   - a board lost mid-run (its sshd and everything on it killed): the two
#     others complete with their exact counts, and the lost board's job is
#     reported as failed, in the summary and in the exit status.
# Every step waits for the event it needs, within generous bounds.
#
# Usage: test_lava_farm_stops.sh WORKDIR BOARD_SH BOARDTRACE DEMO
# Runs itself in a private network namespace (loopback only).
set -eu

lava_tests=$(cd "$(dirname "$0")" && pwd)
. "$lava_tests/common.sh"
lava_farm_args 0 "" "$@"
boards="rv0 rv1 rv2"
farm_pid=""

# Before the boards and LAVA stop: a farm run left by a failed step gets
# Ctrl-C (it cancels its jobs), then is gone within a bound whatever it does.
lava_cleanup_extra() {
    if [ -n "$farm_pid" ]; then
        kill -INT "$farm_pid" 2>/dev/null || true
        wait_farm 240 || kill -KILL "$farm_pid" 2>/dev/null || true
    fi
}

# Waits up to $3 seconds for a line matching the basic regular expression $2
# in file $1.
wait_line() {
    end=$(($(date +%s) + $3))
    until grep -q "$2" "$1" 2>/dev/null; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.2
    done
}

# Waits up to $1 seconds for the farm run in the background to end; its exit
# status in $farm_rc.
wait_farm() {
    end=$(($(date +%s) + $1))
    while kill -0 "$farm_pid" 2>/dev/null; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.2
    done
    farm_rc=0
    wait "$farm_pid" || farm_rc=$?
    farm_pid=""
}

# The "zones" of a trace's record (0 if it has none).
record_zones() {
    sed -n 's/.*"zones": *"\([0-9]*\)".*/\1/p' "$1" 2>/dev/null | head -n 1 | grep . || echo 0
}

# Starts farm run in the background: $1 the output folder, $2 the count,
# then the demo's arguments.
start_farm() {
    out=$1
    count=$2
    shift 2
    "$boardtrace" farm run --lava "$LAVA_URL" --device-type ssh --count "$count" -o "$out" \
        --known-hosts "$work/known_hosts" --hold-minutes 15 "$demo" -- "$@" \
        >"$out.out" 2>"$out.err" &
    farm_pid=$!
}

show_farm() {
    cat "$1.err" "$1.out"
    for b in $boards; do
        [ ! -f "$1/$b.log" ] || { echo "--- $b.log" && tail -n 20 "$1/$b.log"; }
    done
}

lava_up

# A job cancelled in LAVA while its program runs (it would run for hours):
# the command notices within its polling bound, stops the run, keeps the
# trace of what arrived, and reports the job.
out=$work/cancel
start_farm "$out" 1 -f 1000000
wait_line "$out.err" 'farm: job [0-9]* holds rv[0-9]' 900 || {
    show_farm "$out"
    fail "cancel: no board ready within 900 s"
}
job=$(sed -n 's/.*farm: job \([0-9]*\) holds .*/\1/p' "$out.err")
dev=$(sed -n 's/.*farm: job [0-9]* holds \(rv[0-9]\) .*/\1/p' "$out.err")
wait_line "$out/$dev.log" 'program is tracing' 300 || {
    show_farm "$out"
    fail "cancel: the program did not start tracing on $dev within 300 s"
}
lavacli -i test jobs cancel "$job"
start=$(date +%s)
wait_farm 180 || {
    show_farm "$out"
    fail "cancel: farm run still runs 180 s after LAVA cancelled job $job"
}
show_farm "$out"
echo "cancel: farm run ended $(($(date +%s) - start)) s after the cancel, exit $farm_rc"
[ "$farm_rc" = 4 ] || fail "cancel: exit status $farm_rc, expected 4 (a job ended in LAVA)"
grep -q "^$dev  *$job  .* Canceled$" "$out.out" || fail "cancel: no summary line for job $job, Canceled"
grep -q "^job $job ($dev): LAVA ended the job" "$out.out" || fail "cancel: job $job not reported"
zones=$(record_zones "$out/$dev.tracy.json")
[ -s "$out/$dev.tracy" ] && [ "$zones" -gt 0 ] ||
    fail "cancel: what arrived was not kept ($out/$dev.tracy, $zones zones)"
echo "cancel: $dev kept $zones zones"

# Ctrl-C while three programs run: every job cancelled in LAVA, every trace
# keeps what arrived.
out=$work/interrupt
start_farm "$out" 3 -f 1000000
for b in $boards; do
    wait_line "$out/$b.log" 'program is tracing' 900 || {
        show_farm "$out"
        fail "interrupt: the program did not start tracing on $b within 900 s"
    }
done
kill -INT "$farm_pid"
start=$(date +%s)
# Each board's capture drains what its program sent before the stop: at a
# load of 13 (three emulated boards and a build on 2 CPUs) that took the
# boards 5 to 6 minutes after SIGINT; 84 s at a load of 11.
wait_farm 1200 || {
    show_farm "$out"
    fail "interrupt: farm run still runs 1200 s after SIGINT"
}
show_farm "$out"
echo "interrupt: farm run ended $(($(date +%s) - start)) s after SIGINT, exit $farm_rc"
[ "$farm_rc" = 130 ] || fail "interrupt: exit status $farm_rc, expected 130"
jobs=$(sed -n 's/^rv[0-9]  *\([0-9][0-9]*\) .*/\1/p' "$out.out")
[ "$(echo "$jobs" | wc -w)" = 3 ] || fail "interrupt: not three jobs in the summary"
for job in $jobs; do
    lavacli -i test jobs show "$job" >"$work/job-$job.txt"
    grep -q '^Health *: Canceled' "$work/job-$job.txt" || {
        cat "$work/job-$job.txt"
        fail "interrupt: job $job was not cancelled in LAVA"
    }
done
for b in $boards; do
    zones=$(record_zones "$out/$b.tracy.json")
    [ -s "$out/$b.tracy" ] && [ "$zones" -gt 0 ] ||
        fail "interrupt: what arrived from $b was not kept ($zones zones)"
    grep -q "^job [0-9]* ($b): interrupted" "$out.out" || fail "interrupt: $b not reported"
    echo "interrupt: $b kept $zones zones"
done

# A board lost while its program runs (500 frames, 31 zones each: long
# enough to stop the board first): the two others complete, and the lost one
# is reported.
out=$work/lost
start_farm "$out" 3 -f 500
wait_line "$out.err" 'farm: job [0-9]* holds rv[0-9]' 900 || {
    show_farm "$out"
    fail "lost: no board ready within 900 s"
}
lost=$(sed -n 's/.*farm: job [0-9]* holds \(rv[0-9]\) .*/\1/p' "$out.err" | head -n 1)
wait_line "$out/$lost.log" 'program is tracing' 300 || {
    show_farm "$out"
    fail "lost: the program did not start tracing on $lost within 300 s"
}
sh "$board_sh" --dir "$work/board-$lost" stop
wait_farm 900 || {
    show_farm "$out"
    fail "lost: farm run still runs 900 s after $lost was stopped"
}
show_farm "$out"
[ "$farm_rc" != 0 ] || fail "lost: exit status 0 with board $lost lost"
grep -q "^job [0-9]* ($lost): " "$out.out" || fail "lost: $lost's failure not reported"
! grep -q "^$lost  .* Complete$" "$out.out" || fail "lost: $lost's job reported Complete"
for b in $boards; do
    [ "$b" != "$lost" ] || continue
    grep -q "^$b  *[0-9][0-9]*  .*  0  *15500  *[0-9][0-9]* .*Complete$" "$out.out" ||
        fail "lost: $b did not complete with 15500 zones"
done
echo "PASS: a job cancelled in LAVA, Ctrl-C and a board lost mid-run end the farm run cleanly, keep what arrived and report it"
