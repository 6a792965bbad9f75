#!/bin/sh
# The main job: cross-builds boardtrace for riscv64, starts the local emulated
# RISC-V board, runs the instrumented demo on it with `boardtrace run`
# (upload, capture on the board, pull the trace), prints the run summary and
# the zone statistics, and stops the board.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
say() { printf 'demo: %s\n' "$*"; }

"$top/tools/setup.sh"
# Everything below stays on loopback; the guard makes sure of it.
if [ -z "${BT_NETGUARD:-}" ]; then
    exec "$top/tools/netguard.sh" "$0" "$@"
fi

jobs=${BT_JOBS:-$(nproc 2>/dev/null || echo 2)}
host=build/host-riscv64
board=$host/cross/riscv64
# Only what the demo runs: the host's CLI and report, the board's capture
# and demo (tools/test.sh builds the rest, tests and benchmarks).
say "building the host tools and the riscv64 capture and demo (build/host-riscv64)"
mkdir -p build
cmake --preset host-riscv64 >build/demo-configure.log 2>&1 || { cat build/demo-configure.log; exit 1; }
cmake --build "$host" -j "$jobs" --target boardtrace boardtrace-report bt_cross_riscv64-configure
cmake --build "$board" -j "$jobs" --target boardtrace-capture boardtrace-demo
demo=$board/runtime/demo/boardtrace-demo

missing=""
[ -x "$demo" ] || missing="$missing boardtrace-demo (runtime/demo)"
[ -x "$board/tools/capture/boardtrace-capture" ] || missing="$missing boardtrace-capture (tools/capture)"
[ -x "$host/deploy/boardtrace" ] || missing="$missing boardtrace (deploy)"
[ -x "$top/tools/board/board.sh" ] || missing="$missing the emulated board (tools/board)"

if [ -n "$missing" ]; then
    say "not built yet:$missing"
    if [ -x "$demo" ]; then
        say "running the riscv64 demo locally under qemu instead of on a board"
        "$demo"
    fi
    exit 1
fi

state=$(mktemp -d "${TMPDIR:-/tmp}/boardtrace-demo.XXXXXX")
trap '"$top/tools/board/board.sh" stop --state "$state" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT INT TERM
say "starting the emulated riscv64 board"
"$top/tools/board/board.sh" start --state "$state"
eval "$("$top/tools/board/board.sh" env --state "$state")"

out=$top/build/demo.tracy
say "boardtrace run: deploy the demo, capture on the board, pull the trace"
"$host/deploy/boardtrace" run --host "$BOARD_USER@127.0.0.1:$BOARD_PORT" -i "$BOARD_KEY" \
    --known-hosts "$BOARD_KNOWN_HOSTS" -f -o "$out" "$demo"

say "zone statistics of $out"
"$host/tools/report/boardtrace-report" stats "$out"
say "done: open $out in the Tracy GUI"
