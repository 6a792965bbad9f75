#!/bin/sh
# Measures `boardtrace` against doing the same by hand with OpenSSH on the
# emulated board: a whole `boardtrace run` beside scp (upload), ssh (capture +
# program), scp (trace back); and a 100 MB pull, `boardtrace fetch` beside
# scp. Prints medians of N runs and the ratios.
#
# Usage: bench/deploy_vs_openssh.sh BOARDTRACE PROGRAM CAPTURE [RUNS]
# The board is started (SFTP on) in a temporary folder and stopped at the end.
set -eu

[ $# -ge 3 ] || { sed -n '7p' "$0" | sed 's/^# //' >&2; exit 2; }
bt=$1
program=$2
capture=$3
runs=${4:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
board="$top/tools/board/board.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/bt-bench.XXXXXX")
trap '"$board" stop --dir "$work/board" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT INT TERM

"$board" start --dir "$work/board" >/dev/null 2>&1
eval "$("$board" env --dir "$work/board")"
ssh_opts="-o UserKnownHostsFile=$BOARD_KNOWN_HOSTS -o StrictHostKeyChecking=yes -o BatchMode=yes -i $BOARD_KEY"
conn="$BOARD_USER@127.0.0.1"

now() { date +%s.%N; }
# Median of the numbers on stdin.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

pname=$(basename "$program")
cname=$(basename "$capture")
remote="$BOARD_ROOTFS/tmp/byhand"

by_hand() {
    port=$((30000 + $1))
    t0=$(now)
    # shellcheck disable=SC2086
    scp -q $ssh_opts -P "$BOARD_PORT" "$program" "$capture" "$conn:$remote/"
    # shellcheck disable=SC2086
    ssh $ssh_opts -p "$BOARD_PORT" "$conn" "cd $remote && { ./$cname -o trace.tracy -a 127.0.0.1 -p $port -f >/dev/null & } && TRACY_NO_EXIT=1 TRACY_PORT=$port ./$pname >/dev/null 2>&1; wait"
    # shellcheck disable=SC2086
    scp -q $ssh_opts -P "$BOARD_PORT" "$conn:$remote/trace.tracy" "$work/byhand.tracy"
    t1=$(now)
    echo "$t1 - $t0" | bc
}

with_boardtrace() {
    t0=$(now)
    "$bt" run -q --host "$BOARD_TARGET" -i "$BOARD_KEY" --known-hosts "$BOARD_KNOWN_HOSTS" \
        --capture "$capture" -f -o "$work/bt.tracy" "$program" >/dev/null 2>&1
    t1=$(now)
    echo "$t1 - $t0" | bc
}

mkdir -p "$remote"
: >"$work/hand.txt"
: >"$work/bt.txt"
i=0
while [ "$i" -lt "$runs" ]; do
    by_hand "$i" >>"$work/hand.txt"
    with_boardtrace >>"$work/bt.txt"
    i=$((i + 1))
done
hand=$(median <"$work/hand.txt")
btrun=$(median <"$work/bt.txt")
printf 'run (%s + %s, %d runs, median wall time)\n' "$pname" "$cname" "$runs"
printf '  by hand: scp, ssh, scp          %6.2f s\n' "$hand"
printf '  boardtrace run                  %6.2f s   ratio %.2f\n' "$btrun" "$(echo "$btrun / $hand" | bc -l)"
printf '  (boardtrace also checks architectures and space, verifies SHA-256 both ways,\n'
printf '   makes a private folder and removes it, and waits with timeouts)\n'

# 100 MB pull.
dir="$BOARD_ROOTFS/tmp/boardtrace.bench"
mkdir -p "$dir"
head -c 100000000 /dev/urandom >"$dir/trace.tracy"
: >"$work/scp.txt"
: >"$work/fetch.txt"
: >"$work/xfer.txt"
: >"$work/verified.txt"
i=0
while [ "$i" -lt 3 ]; do
    rm -f "$work/scp.bin" "$work/fetch.bin"
    t0=$(now)
    # shellcheck disable=SC2086
    scp -q $ssh_opts -P "$BOARD_PORT" "$conn:$dir/trace.tracy" "$work/scp.bin"
    t1=$(now)
    echo "$t1 - $t0" | bc >>"$work/scp.txt"
    t0=$(now)
    "$bt" fetch --host "$BOARD_TARGET" -i "$BOARD_KEY" --known-hosts "$BOARD_KNOWN_HOSTS" \
        -o "$work/fetch.bin" "$dir/trace.tracy" >/dev/null 2>"$work/fetch.err"
    t1=$(now)
    echo "$t1 - $t0" | bc >>"$work/fetch.txt"
    sed -n 's/.*pull trace.tracy: .* in \([0-9.]*\) s.*/\1/p' "$work/fetch.err" >>"$work/xfer.txt"
    cmp -s "$work/scp.bin" "$work/fetch.bin" || { echo "fetched file differs" >&2; exit 1; }
    # The same verified pull by hand: scp, then both sides' sha256sum.
    rm -f "$work/scp.bin"
    t0=$(now)
    # shellcheck disable=SC2086
    scp -q $ssh_opts -P "$BOARD_PORT" "$conn:$dir/trace.tracy" "$work/scp.bin"
    # shellcheck disable=SC2086
    theirs=$(ssh $ssh_opts -p "$BOARD_PORT" "$conn" "sha256sum < $dir/trace.tracy" | cut -d' ' -f1)
    ours=$(sha256sum <"$work/scp.bin" | cut -d' ' -f1)
    t1=$(now)
    [ "$theirs" = "$ours" ] || { echo "scp copy differs" >&2; exit 1; }
    echo "$t1 - $t0" | bc >>"$work/verified.txt"
    i=$((i + 1))
done
scp_t=$(median <"$work/scp.txt")
fetch_t=$(median <"$work/fetch.txt")
xfer_t=$(median <"$work/xfer.txt")
verified_t=$(median <"$work/verified.txt")
mb() { echo "100 / $1" | bc -l; }
printf 'pull of a 100 MB file (3 runs, median)\n'
printf '  scp                             %6.2f s  %6.1f MB/s\n' "$scp_t" "$(mb "$scp_t")"
printf '  scp + sha256sum on both sides  %6.2f s  %6.1f MB/s\n' "$verified_t" "$(mb "$verified_t")"
printf '  boardtrace fetch, whole command %6.2f s  %6.1f MB/s   ratio %.2f to scp, %.2f to scp + sha256sum\n' "$fetch_t" "$(mb "$fetch_t")" "$(echo "$fetch_t / $scp_t" | bc -l)" "$(echo "$fetch_t / $verified_t" | bc -l)"
printf '  boardtrace fetch, transfer only %6.2f s  %6.1f MB/s   ratio %.2f\n' "$xfer_t" "$(mb "$xfer_t")" "$(echo "$xfer_t / $scp_t" | bc -l)"
printf '  (the whole command includes the board computing SHA-256 of 100 MB with busybox\n'
printf '   under qemu, in parallel with the transfer)\n'
