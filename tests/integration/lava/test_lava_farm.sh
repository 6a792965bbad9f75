#!/bin/sh
# boardtrace farm run against a real LAVA (label lava): three Debian riscv64
# boards, devices rv0..rv2 of LAVA's ssh device type, profiled at once; each
# board's trace and record come back as DIR/<device>.tracy(.json) with the
# demo's exact counts, and each LAVA job records the run's result and the
# counts as measurements; the summary gives the spread across the boards. A
# board is chosen by its tag in LAVA. Also: a bad token and a LAVA that is down end with
# a clear error, within a bound. The token reaches boardtrace through
# LAVA_USER and LAVA_TOKEN in the environment, never a command line.
#
# Usage: test_lava_farm.sh WORKDIR BOARD_SH BOARDTRACE DEMO
# Runs itself in a private network namespace (loopback only).
set -eu

lava_tests=$(cd "$(dirname "$0")" && pwd)
. "$lava_tests/common.sh"
lava_farm_args 0 "" "$@"
boards="rv0 rv1 rv2"
lava_up

# A LAVA that is down: a clear error, quickly (lavacli's own connection).
start=$(date +%s)
rc=0
"$boardtrace" farm run --lava http://127.0.0.1:1 --device-type ssh -o "$work/down" "$demo" \
    >"$work/down.out" 2>"$work/down.err" || rc=$?
cat "$work/down.err"
[ "$rc" != 0 ] || fail "farm against a LAVA that is down exited 0"
grep -q 'Unable to connect' "$work/down.err" || fail "no clear error for a LAVA that is down"
[ $(($(date +%s) - start)) -lt 60 ] || fail "a LAVA that is down took 60 s or more to report"

# A bad token: LAVA refuses, and boardtrace says so.
rc=0
LAVA_TOKEN=not-the-token "$boardtrace" farm run --lava "$LAVA_URL" --device-type ssh \
    -o "$work/badtoken" "$demo" >"$work/badtoken.out" 2>"$work/badtoken.err" || rc=$?
cat "$work/badtoken.err"
[ "$rc" != 0 ] || fail "farm with a bad token exited 0"
grep -q 'submitting a job: lavacli says: .*\(401\|403\|Authorization\|authenticat\|token\)' \
    "$work/badtoken.err" || fail "no clear error for a bad token"
! grep -q not-the-token "$work/badtoken.err" || fail "the error message shows the token"

# Three boards at once.
start=$(date +%s)
"$boardtrace" farm run --lava "$LAVA_URL" --device-type ssh --count 3 -o "$work/out" \
    --known-hosts "$work/known_hosts" --hold-minutes 15 "$demo" >"$work/farm.out" 2>"$work/farm.err" ||
    {
        cat "$work/farm.err" "$work/farm.out"
        for b in $boards; do cat "$work/out/$b.log" 2>/dev/null || true; done
        fail "farm run exited non-zero"
    }
echo "farm run: $(($(date +%s) - start)) s"
cat "$work/farm.err" "$work/farm.out"
for b in $boards; do
    [ -s "$work/out/$b.tracy" ] || fail "no trace $work/out/$b.tracy"
    grep -q '"zones": *"1550"' "$work/out/$b.tracy.json" || fail "$b: record without 1550 zones"
    grep -q '"frames": *"52"' "$work/out/$b.tracy.json" || fail "$b: record without 52 frames"
    grep -q "^$b  *[0-9][0-9]*  *$LAVA_URL/scheduler/job/[0-9]*  *0  *1550  *52 .*Complete$" \
        "$work/farm.out" || fail "no summary line for $b"
done
# The summary ends with the spread across the three boards of the top zones
# (boardtrace-report boards --top 10).
grep -q '^The spread across the boards' "$work/farm.out" || fail "no spread in the summary"
grep -q '^3 boards: rv0 rv1 rv2$' "$work/farm.out" || fail "the spread does not name the three boards"
n=$(grep -c 'spread: mean [0-9.]* % (slowest rv[0-2]), p99 [0-9.]* % (slowest rv[0-2])$' "$work/farm.out")
[ "$n" -ge 1 ] && [ "$n" -le 10 ] || fail "the summary's spread has $n zones, not 1 to 10"
# What the jobs recorded in LAVA.
for job in $(sed -n 's/^rv[0-9]  *\([0-9][0-9]*\) .*/\1/p' "$work/farm.out"); do
    lavacli -i test results "$job" --yaml >"$work/results-$job.yaml"
    python3 - "$work/results-$job.yaml" <<'EOF' || fail "job $job: results not recorded"
import sys, yaml
cases = {c["name"]: c for c in yaml.safe_load(open(sys.argv[1])) if c["suite"] == "0_boardtrace"}
assert cases["run"]["result"] == "pass", cases
assert float(cases["zones"]["measurement"]) == 1550, cases
assert float(cases["frames"]["measurement"]) == 52, cases
EOF
done

# Tags: a job asks LAVA for a board with every tag given. Only rv1 carries
# boardtrace-tag, so the one board LAVA picks is rv1. With --html, the
# trace's HTML report comes back beside it.
lavacli -i test devices tags add rv1 boardtrace-tag
"$boardtrace" farm run --lava "$LAVA_URL" --device-type ssh --tag boardtrace-tag --html -o "$work/tag" \
    --known-hosts "$work/known_hosts" --hold-minutes 15 "$demo" >"$work/tag.out" 2>"$work/tag.err" ||
    {
        cat "$work/tag.err" "$work/tag.out"
        fail "farm run --tag exited non-zero"
    }
cat "$work/tag.out"
grep -q "^tags: \['boardtrace-tag'\]$" "$work/tag/lava-job.yaml" || fail "--tag: not in the job definition"
grep -q "^rv1  *[0-9][0-9]*  .*  0  *1550  *52 .*Complete$" "$work/tag.out" || fail "--tag: the run was not on rv1"
[ "$(ls "$work/tag"/*.tracy)" = "$work/tag/rv1.tracy" ] || fail "--tag: traces other than rv1's"
grep -q '<title>' "$work/tag/rv1.tracy.html" &&
    ! sed 's#http://www.w3.org/2000/svg##g' "$work/tag/rv1.tracy.html" | grep -q 'https\?://' ||
    fail "--html: no self-contained report $work/tag/rv1.tracy.html"
grep -q '"html": *"[^"]*rv1.tracy.html"' "$work/tag/rv1.tracy.json" || fail "--html: the record does not name the report"
! grep -q '^The spread' "$work/tag.out" || fail "--tag: a spread for one board"
# A tag that no ssh board carries: LAVA refuses the job at submission.
lavacli -i test tags add boardtrace-none
rc=0
"$boardtrace" farm run --lava "$LAVA_URL" --device-type ssh --tag boardtrace-none -o "$work/notag" \
    "$demo" >"$work/notag.out" 2>"$work/notag.err" || rc=$?
cat "$work/notag.err"
[ "$rc" != 0 ] || fail "farm run with a tag no board carries exited 0"
grep -q "submitting a job: lavacli says: .*boardtrace-none" "$work/notag.err" ||
    fail "no clear error for a tag no board carries"

# A fourth request on three boards: LAVA queues it until a board is free (no
# queue of boardtrace's own); that device's second trace is DEVICE-JOB.tracy.
"$boardtrace" farm run --lava "$LAVA_URL" --device-type ssh --count 4 -o "$work/out4" \
    --known-hosts "$work/known_hosts" --hold-minutes 15 "$demo" >"$work/farm4.out" 2>"$work/farm4.err" ||
    {
        cat "$work/farm4.err" "$work/farm4.out"
        fail "farm run --count 4 exited non-zero"
    }
cat "$work/farm4.out"
[ "$(grep -c '^rv[0-9]  *[0-9][0-9]*  .*  0  *1550  *52 .*Complete$' "$work/farm4.out")" = 4 ] ||
    fail "--count 4: not four complete runs of 1550 zones"
[ "$(ls "$work/out4"/*.tracy.json | wc -l)" = 4 ] || fail "--count 4: not four records"
ls "$work/out4" | grep -q '^rv[0-9]-[0-9][0-9]*\.tracy$' || fail "--count 4: no DEVICE-JOB.tracy"
for r in "$work/out4"/*.tracy.json; do
    grep -q '"zones": *"1550"' "$r" || fail "$r: not 1550 zones"
done
echo "PASS: three boards profiled at once through LAVA, 1550 zones and 52 frames each, and their spread; a board chosen by tag, a tag no board has refused; a fourth request queued by LAVA"
