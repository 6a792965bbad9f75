#!/bin/sh
# The board's own kernel under the runtime, run on the board itself:
# test_systrace (built for the board) samples a program whose two threads
# burn known shares of CPU and must find the samples named, in proportion
# and inside their zones, with context switches, through the capture and
# through the strict test server; test_timer_clock holds the runtime's
# hardware counter (rdtime, cntvct_el0) against the kernel's CLOCK_MONOTONIC
# within the calibration's error. Neither may skip here: the board is root
# on a real kernel.
# Usage: system_kernel.sh SYSTEM_SH BOARD_DIR ARCH TEST_SYSTRACE BT_SAMPLED CAPTURE TEST_TIMER_CLOCK
set -eu
boardtrace=/bin/false system_sh=$1 board_dir=$2 arch=$3
test_systrace=$4 bt_sampled=$5 capture=$6 test_timer_clock=$7
needs="$test_systrace $bt_sampled $capture $test_timer_clock"
. "$(dirname "$0")/lib.sh"

dir=/tmp/bt-kernel-tests
board ssh "rm -rf $dir && mkdir -p $dir" || fail "cannot make $dir on the board"
for f in "$test_systrace" "$bt_sampled" "$capture" "$test_timer_clock"; do
    board put "$f" "$dir/$(basename "$f")" || fail "cannot put $f on the board"
done

# An emulated board: longer bursts at 1 kHz, a wider share (see test_systrace).
bounded systrace 300 board ssh "cd $dir && BT_SYSTRACE_EMULATED=1 ./test_systrace ./bt_sampled ./boardtrace-capture"
cat "$out"
[ "$rc" = 0 ] || fail "test_systrace failed on the board (exit $rc)"
for t in samples_name_the_hot_functions_in_proportion_inside_their_zones \
    the_strict_server_takes_the_samples_and_switches; do
    grep -q "^\[       OK \] $t\$" "$out" || fail "$t did not run and pass on the board"
done

bounded timer 120 board ssh "cd $dir && ./test_timer_clock --require-hardware"
cat "$out"
[ "$rc" = 0 ] || fail "test_timer_clock failed on the board (exit $rc)"
grep -q "^\[  PASSED  \] 6 test(s)" "$out" || fail "test_timer_clock did not pass all 6 tests"
board ssh "rm -rf $dir"
say "passed on the $arch board ($(board ssh 'uname -r'))"
