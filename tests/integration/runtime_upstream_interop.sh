#!/bin/sh
# The runtime against upstream Tracy v0.14.0's own tools (built outside this
# repository): peer-client.c, built against boardtrace's TracyC.h, is captured
# by upstream tracy-capture, and upstream tracy-csvexport must list exactly
# the zones of the recorded upstream session (name, line, count; the file
# column differs only by the path the compiler recorded).
#
# usage: runtime_upstream_interop.sh UPSTREAM_BIN PEER_CLIENT SESSION_CSV PORT
set -eu
up=$1 peer=$2 ref=$3 port=$4
work=$(mktemp -d /tmp/bt-rt-interop.XXXXXX)
trap 'rm -rf "$work"' EXIT

TRACY_NO_EXIT=1 TRACY_PORT=$port "$peer" > "$work/peer.log" 2>&1 &
pid=$!
sleep "${DELAY:-0.5}"
if ! "$up/tracy-capture" -o "$work/x.tracy" -a 127.0.0.1 -p "$port" -f > "$work/capture.log" 2>&1; then
    echo "FAIL: tracy-capture exited with an error:"; tr '\r' '\n' < "$work/capture.log" | tail -5
    kill "$pid" 2>/dev/null; exit 1
fi
wait "$pid" || { echo "FAIL: peer-client exited with an error"; exit 1; }
if ! "$up/tracy-csvexport" "$work/x.tracy" > "$work/x.csv" 2> "$work/csvexport.err"; then
    echo "FAIL: tracy-csvexport could not read the capture:"; cat "$work/csvexport.err"; exit 1
fi
cut -d, -f1,3,6 "$work/x.csv" | sort > "$work/ours"
cut -d, -f1,3,6 "$ref" | sort > "$work/reference"
if ! diff -u "$work/reference" "$work/ours"; then
    echo "FAIL: zones (name,line,count) differ from the recorded upstream session"; exit 1
fi
echo "ok: upstream tracy-capture and tracy-csvexport read peer-client's trace: $(($(wc -l < "$work/ours") - 1)) zone kinds as recorded"
