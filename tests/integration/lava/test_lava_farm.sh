#!/bin/sh
# boardtrace farm run against a real LAVA (label lava): three Debian riscv64
# boards, devices rv0..rv2 of LAVA's ssh device type, profiled at once; each
# board's trace and record come back as DIR/<device>.tracy(.json) with the
# demo's exact counts, and each LAVA job records the run's result and the
# counts as measurements. Also: a bad token and a LAVA that is down end with
# a clear error, within a bound. The token reaches boardtrace through
# LAVA_USER and LAVA_TOKEN in the environment, never a command line.
#
# Usage: test_lava_farm.sh WORKDIR BOARD_SH BOARDTRACE DEMO
# Runs itself in a private network namespace (loopback only).
set -eu

[ $# = 4 ] || {
    echo "usage: $0 WORKDIR BOARD_SH BOARDTRACE DEMO" >&2
    exit 2
}
if [ -z "${BT_LAVA_NETNS:-}" ]; then
    BT_LAVA_NETNS=1 exec unshare -n sh -c 'ip link set lo up && exec sh "$0" "$@"' "$0" "$@"
fi

here=$(cd "$(dirname "$0")" && pwd)
work=$1
board_sh=$2
boardtrace=$3
demo=$4
fixture=$here/lava-fixture.sh
rm -rf "$work"
mkdir -p "$work"
lava=$work/lava
boards="rv0 rv1 rv2"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
cleanup() {
    for b in $boards; do
        sh "$board_sh" --dir "$work/board-$b" stop >/dev/null 2>&1 || true
    done
    sh "$fixture" stop "$lava" || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sh "$fixture" start "$lava"
eval "$(sh "$fixture" env "$lava")"
export XDG_CONFIG_HOME
: >"$work/known_hosts"
for b in $boards; do
    sh "$board_sh" --dir "$work/board-$b" --arch riscv64 start
    sh "$fixture" device "$lava" "$b" "$work/board-$b"
    cat "$work/board-$b/known_hosts" >>"$work/known_hosts"
done

# The admin's token, from the fixture's lavacli configuration into the
# environment.
LAVA_USER=admin
LAVA_TOKEN=$(sed -n 's/^ *token: *//p' "$XDG_CONFIG_HOME/lavacli.yaml")
export LAVA_USER LAVA_TOKEN

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
echo "PASS: three boards profiled at once through LAVA, 1550 zones and 52 frames each; a fourth request queued by LAVA"
