#!/bin/sh
# `boardtrace live` on a full-system board: dropbear forwards the local port
# to the demo on the board, a capture on the host takes the whole session,
# and the trace holds the demo's own zone counts exactly.
# Usage: system_live.sh BOARDTRACE REPORT SYSTEM_SH BOARD_DIR ARCH DEMO HOST_CAPTURE
set -eu
boardtrace=$1 report=$2 system_sh=$3 board_dir=$4 arch=$5 demo=$6 host_capture=$7
needs="$demo"
. "$(dirname "$0")/lib.sh"

bt live -L 0 "$demo" -- -f 20 >"$work/live.out" 2>&1 &
live=$!
port=
n=0
while [ -z "$port" ]; do
    port=$(sed -n 's/.*connect the Tracy GUI to 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/live.out" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$live" 2>/dev/null || {
        cat "$work/live.out" >&2
        fail "boardtrace live exited before forwarding a port"
    }
    n=$((n + 1))
    [ "$n" -lt 1200 ] || {
        kill "$live"
        cat "$work/live.out" >&2
        fail "no forwarded port within 120 s"
    }
    sleep 0.1
done
say "forwarded 127.0.0.1:$port to the demo on the board"
bounded capture 180 "$host_capture" -o "$work/live.tracy" -a 127.0.0.1 -p "$port"
cat "$out"
[ "$rc" = 0 ] || fail "the host's capture exited $rc"
n=0
while kill -0 "$live" 2>/dev/null; do
    n=$((n + 1))
    [ "$n" -lt 600 ] || {
        kill "$live"
        fail "boardtrace live still ran 60 s after the session ended"
    }
    sleep 0.1
done
rc=0
wait "$live" || rc=$?
cat "$work/live.out"
[ "$rc" = 0 ] || fail "boardtrace live exited $rc"
check_demo_counts "$work/live.tracy" "$work/live.out"
say "passed on the $arch board"
