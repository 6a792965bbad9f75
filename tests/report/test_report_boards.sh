#!/bin/sh
# boardtrace-report boards over folders of real recordings (upstream Tracy's
# peer-client sessions in tests/data), one trace per board:
#   - one recording under two names: each board's counts and means are
#     those upstream's tracy-csvexport wrote (session.csv), its p99s those of
#     diff, and every spread is 0;
#   - two recordings: the spread of the means and p99s is (slowest -
#     fastest) / fastest, and the table names the slowest board;
#   - --top N keeps the N zones with the most total time, and refuses what
#     is not a count;
#   - files beside the traces (records, logs) are not boards, and a folder
#     without traces is an error.
# Usage: test_report_boards.sh REPORT DATA_DIR WORKDIR
set -eu

[ $# = 3 ] || {
    echo "usage: $0 REPORT DATA_DIR WORKDIR" >&2
    exit 2
}
report=$1
data=$2
work=$3
a=$data/tracy-0.13.1-session
b=$data/tracy-0.12.2-session
rm -rf "$work"
mkdir -p "$work/same" "$work/two" "$work/none"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# The CSV's field $2 for zone $1 on board $3 (name,src_file,src_line,board,
# counts,mean_ns,p99_ns,mean_spread_perc,p99_spread_perc).
field() {
    awk -F, -v z="$1" -v b="$3" -v f="$2" '$1 == z && $4 == b { print $f }' "$4"
}
# A zone's column from an upstream csvexport file or a diff CSV.
column() {
    awk -F, -v z="$1" -v f="$2" '$1 == z || $2 == z { print $f; exit }' "$3"
}

# One recording under two names.
cp "$a/session.tracy" "$work/same/rv0.tracy"
cp "$a/session.tracy" "$work/same/rv1.tracy"
printf '{"summary": {}}\n' >"$work/same/rv0.tracy.json"
echo "a log" >"$work/same/rv0.log"
"$report" boards --csv "$work/same" >"$work/same.csv"
"$report" diff --csv "$a/session.tracy" "$a/session.tracy" >"$work/same-diff.csv"
zones=$(awk -F, 'NR > 1 { print $1 }' "$a/session.csv")
[ "$(echo "$zones" | wc -l)" = 6 ] || fail "session.csv: not six zones"
[ "$(awk 'NR > 1' "$work/same.csv" | wc -l)" = 12 ] || {
    cat "$work/same.csv"
    fail "same: not six zones on two boards (only rv0 and rv1 are boards)"
}
for z in $zones; do
    for board in rv0 rv1; do
        [ "$(field "$z" 5 $board "$work/same.csv")" = "$(column "$z" 6 "$a/session.csv")" ] ||
            fail "same: $z on $board: count is not csvexport's"
        [ "$(field "$z" 6 $board "$work/same.csv")" = "$(column "$z" 7 "$a/session.csv")" ] ||
            fail "same: $z on $board: mean is not csvexport's"
        [ "$(field "$z" 7 $board "$work/same.csv")" = "$(column "$z" 16 "$work/same-diff.csv")" ] ||
            fail "same: $z on $board: p99 is not diff's"
        [ "$(field "$z" 8 $board "$work/same.csv"),$(field "$z" 9 $board "$work/same.csv")" = "0.00,0.00" ] ||
            fail "same: $z on $board: a spread that is not 0"
    done
done

# Two recordings: rv0 and rv1 differ.
cp "$a/session.tracy" "$work/two/rv0.tracy"
cp "$b/session.tracy" "$work/two/rv1.tracy"
"$report" boards --csv "$work/two" >"$work/two.csv"
"$report" boards "$work/two" >"$work/two.txt"
"$report" diff --csv "$a/session.tracy" "$b/session.tracy" >"$work/two-diff.csv"
cat "$work/two.txt"
for z in $zones; do
    m0=$(column "$z" 7 "$a/session.csv")
    m1=$(column "$z" 7 "$b/session.csv")
    p0=$(column "$z" 16 "$work/two-diff.csv")
    p1=$(column "$z" 17 "$work/two-diff.csv")
    [ "$(field "$z" 6 rv0 "$work/two.csv")/$(field "$z" 6 rv1 "$work/two.csv")" = "$m0/$m1" ] ||
        fail "two: $z: means are not csvexport's ($m0, $m1)"
    [ "$(field "$z" 7 rv0 "$work/two.csv")/$(field "$z" 7 rv1 "$work/two.csv")" = "$p0/$p1" ] ||
        fail "two: $z: p99s are not diff's ($p0, $p1)"
    want=$(awk -v x="$m0" -v y="$m1" -v p="$p0" -v q="$p1" 'BEGIN {
        lo = x < y ? x : y; hi = x < y ? y : x; plo = p < q ? p : q; phi = p < q ? q : p
        printf "%.2f,%.2f", 100 * (hi - lo) / lo, 100 * (phi - plo) / plo }')
    [ "$(field "$z" 8 rv0 "$work/two.csv"),$(field "$z" 9 rv0 "$work/two.csv")" = "$want" ] ||
        fail "two: $z: spreads are not $want"
done
# outer: means 565 (rv0) and 537 (rv1), 5.2 % apart, rv0 the slower.
grep -q 'spread: mean 5\.2 % (slowest rv0)' "$work/two.txt" || fail "two: outer's spread not in the table"
grep -q '^2 boards: rv0 rv1$' "$work/two.txt" || fail "two: the boards are not named"

# --top 2: the two zones with the most total time over both boards (the
# first two rows of the whole CSV), and the table says it left the rest out.
"$report" boards --csv --top 2 "$work/two" >"$work/top.csv"
"$report" boards --top 2 "$work/two" >"$work/top.txt"
[ "$(awk 'NR > 1' "$work/top.csv")" = "$(awk 'NR > 1 && NR <= 5' "$work/two.csv")" ] || {
    cat "$work/top.csv"
    fail "--top 2: not the first two zones of the whole CSV"
}
grep -q '^the 2 zones with the most total time, of 6$' "$work/top.txt" || fail "--top 2: the table does not say what it left out"
[ "$(grep -c 'spread: mean' "$work/top.txt")" = 2 ] || fail "--top 2: not two spreads in the table"
for bad in 0 -1 2x 0x2 nan ""; do
    rc=0
    "$report" boards --top "$bad" "$work/two" >/dev/null 2>"$work/top.err" || rc=$?
    [ "$rc" = 1 ] && grep -q 'top takes a count' "$work/top.err" || fail "--top '$bad': exit $rc"
done

# No traces: an error that says so.
echo "a log" >"$work/none/rv0.log"
rc=0
"$report" boards "$work/none" >/dev/null 2>"$work/none.err" || rc=$?
[ "$rc" = 2 ] && grep -q 'no traces' "$work/none.err" || fail "none: exit $rc, $(cat "$work/none.err")"
echo "PASS: boards: csvexport's counts and means, diff's p99s, and the spread across boards"
