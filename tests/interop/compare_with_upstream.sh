#!/bin/sh
# Runs a traced program twice, once captured by boardtrace-capture and once by
# upstream tracy-capture, and checks that upstream tracy-csvexport reads both
# files and reports the same zones (name, file, line, count) for each.
#
# usage: compare_with_upstream.sh UPSTREAM_BIN BOARDTRACE_CAPTURE PORT [CAPTURE_ARGS...] -- PROGRAM [ARGS...]
#   UPSTREAM_BIN  folder with upstream v0.14.0 tracy-capture and tracy-csvexport
#                 (built outside this repository)
#   CAPTURE_ARGS  extra boardtrace-capture arguments, e.g. --file-version 0.11.1
# Env: CSVEXPORT_EXTRA (another tracy-csvexport that must also read our file,
#      e.g. a v0.11.1 build), DELAY (seconds before connecting, default 0.5).
set -eu
up=$1 ours=$2 port=$3
shift 3
extra=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do extra="$extra $1"; shift; done
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || { echo "usage: $0 UPSTREAM_BIN CAPTURE PORT [ARGS] -- PROGRAM [ARGS...]" >&2; exit 2; }
work=$(mktemp -d /tmp/bt-interop.XXXXXX)
trap 'rm -rf "$work"' EXIT
delay=${DELAY:-0.5}

capture() { # $1 = label, $2... = capture command; program already started
    label=$1; shift
    if ! "$@" > "$work/$label.capture.log" 2>&1; then
        echo "FAIL: $label capture exited $?:"; cat "$work/$label.capture.log"; exit 1
    fi
}

for who in boardtrace upstream; do
    TRACY_NO_EXIT=1 TRACY_NO_SYS_TRACE=1 TRACY_PORT=$port "$@" > "$work/$who.program.log" 2>&1 &
    pid=$!
    sleep "$delay"
    if [ $who = boardtrace ]; then
        # shellcheck disable=SC2086
        capture $who "$ours" -o "$work/$who.tracy" -a 127.0.0.1 -p "$port" --connect-timeout 30 $extra
    else
        capture $who "$up/tracy-capture" -o "$work/$who.tracy" -a 127.0.0.1 -p "$port" -f
    fi
    wait $pid || { echo "FAIL: the program exited with an error ($who run)"; exit 1; }
    "$up/tracy-csvexport" "$work/$who.tracy" > "$work/$who.csv" ||
        { echo "FAIL: tracy-csvexport cannot read the $who file"; exit 1; }
    tail -n +2 "$work/$who.csv" | cut -d, -f1,2,3,6 | sort > "$work/$who.zones"
done
if [ -n "${CSVEXPORT_EXTRA:-}" ]; then
    "$CSVEXPORT_EXTRA" "$work/boardtrace.tracy" > "$work/extra.csv" ||
        { echo "FAIL: $CSVEXPORT_EXTRA cannot read boardtrace's file"; exit 1; }
    tail -n +2 "$work/extra.csv" | cut -d, -f1,2,3,6 | sort > "$work/extra.zones"
    cmp -s "$work/extra.zones" "$work/upstream.zones" ||
        { echo "FAIL: $CSVEXPORT_EXTRA reports other zones"; diff "$work/extra.zones" "$work/upstream.zones"; exit 1; }
fi
echo "zones (name,src_file,src_line,counts) via upstream tracy-csvexport:"
paste -d'|' "$work/boardtrace.zones" "$work/upstream.zones" | sed 's/|/   <- boardtrace | upstream ->   /'
if cmp -s "$work/boardtrace.zones" "$work/upstream.zones" && [ -s "$work/upstream.zones" ]; then
    echo "OK: same zone names and counts"
else
    echo "FAIL: zone tables differ"; diff "$work/boardtrace.zones" "$work/upstream.zones" || true; exit 1
fi
