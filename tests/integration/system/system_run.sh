#!/bin/sh
# `boardtrace check` and `boardtrace run` of the demo on a full-system board
# (a real kernel, dropbear without SFTP: the exec-channel path), with the
# demo's own zone counts found exactly in the trace, and what only a real
# kernel gives: CPU samples named on the host, context switches of the
# demo's threads.
# Usage: system_run.sh BOARDTRACE REPORT SYSTEM_SH BOARD_DIR ARCH DEMO CAPTURE
set -eu
boardtrace=$1 report=$2 system_sh=$3 board_dir=$4 arch=$5 demo=$6 capture=$7
needs="$demo $capture"
. "$(dirname "$0")/lib.sh"

bounded check 120 bt check
cat "$out"
[ "$rc" = 0 ] || fail "boardtrace check exited $rc"
grep -q "^  architecture           $arch (Linux boardtrace-$arch " "$out" || fail "check named no $arch board"
grep -q "no SFTP: streaming over exec channels" "$out" || fail "check did not see dropbear's missing SFTP"
grep -q "perf_event_paranoid -1$" "$out" || fail "check misread the board's perf_event_paranoid (-1)"

bounded run 300 bt run --capture "$capture" -o "$work/demo.tracy" "$demo"
cat "$out"
[ "$rc" = 0 ] || fail "boardtrace run exited $rc"
grep -q '"transfer": "exec"' "$work/demo.tracy.json" || fail "the run did not use the exec-channel path"
grep -q "  capture   complete in " "$out" || fail "the capture did not complete"
check_demo_counts "$work/demo.tracy" "$out"
frames=$(sed -n 's/^  frames: default=\([0-9]*\) .*/\1/p' "$out")
grep -q "^  events    [0-9]* (1550 zones, $((frames + 2)) frames)" "$out" ||
    fail "the summary's zone and frame counts differ from the demo's 1550 zones and $frames frames (+2)"

# The kernel's share: samples, named on the host from the unstripped demo,
# and the demo's threads switched on and off the CPUs.
samples=$(sed -n 's/^CPU samples: \([0-9]*\) .*/\1/p' "$work/stats")
[ "${samples:-0}" -gt 100 ] || fail "CPU samples: ${samples:-none} (expected hundreds)"
grep -q "frames named from the binaries\|named from the binaries" "$out" || fail "the run named no frames"
sed -n '/^function (top by timer samples)/,/^$/p' "$work/stats" | sed '1d;/^$/d' >"$work/top"
grep -q '^worker ' "$work/top" || fail "the samples do not name the demo's worker function:
$(cat "$work/top")"
unnamed=$(grep -c '^boardtrace-demo+0x' "$work/top" || true)
say "CPU samples: $samples; top functions named: $(($(wc -l <"$work/top") - unnamed)) of $(wc -l <"$work/top")"
for t in demo-main executor-1 executor-2 executor-3; do
    n=$(awk -v t="$t" '$1 == t { print $3; exit }' "$work/stats")
    [ "${n:-0}" -gt 0 ] || fail "no context switches of the demo's thread $t"
    say "context switches of $t: $n"
done
# A client that behaves on the network as upstream's (the runtime's test
# switch: [::1] alone under TRACY_ONLY_LOCALHOST, a broadcast the environment
# cannot stop; the board's network is qemu's, so it goes to 127.255.255.255
# there): captured whole on a real kernel, its UDP socket named.
bounded upstream 300 bt run --capture "$capture" -f -o "$work/upstream.tracy" \
    --env BOARDTRACE_TEST_UPSTREAM_NET=1 "$demo" -- -f 100
cat "$out"
[ "$rc" = 0 ] || fail "boardtrace run of the upstream-like client exited $rc"
grep -q "^  events    [0-9]* (3100 zones, 102 frames)" "$out" ||
    fail "the upstream-like client's trace is not whole (3100 zones, 102 frames expected)"
grep -q "^  network   the program holds a UDP socket" "$out" ||
    fail "the upstream-like client's UDP socket was not named"
say "passed on the $arch board"
