#!/bin/sh
# A real LAVA holds the Debian riscv64 board for a job (label lava): the
# fixture starts LAVA on loopback, the board becomes LAVA device "rv0" of the
# ssh device type, and a job of hold-job.yaml, submitted with lavacli (its
# token in lavacli's configuration, never on a command line), deploys to it
# and boots it over ssh. While the job holds the board (its board-ready test
# case recorded, the device Running), the host works on the board over SSH
# and releases it with a result; the job then finishes Complete with that
# result and its measurements.
#
# Usage: test_lava_job.sh WORKDIR BOARD_SH
# Runs itself in a private network namespace (loopback only).
set -eu

[ $# = 2 ] || {
    echo "usage: $0 WORKDIR BOARD_SH" >&2
    exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
lava_tests=$here
. "$lava_tests/common.sh"
lava_netns "$@"

work=$1
board_sh=$2
boards=rv0
lava_up
board=$work/board-rv0
eval "$(sh "$board_sh" --dir "$board" env)"

# Waits up to $2 seconds (polling each second) for "$1" to succeed.
wait_until() {
    deadline=$(($(date +%s) + $2))
    until eval "$1" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 1
    done
}

sed -e 's/@TIMEOUT@/10/g' -e 's/@JOB_TIMEOUT@/15/g' "$here/hold-job.yaml" >"$work/job.yaml"
job=$(lavacli -i test jobs submit "$work/job.yaml")
case $job in
'' | *[!0-9]*) fail "lavacli jobs submit printed '$job', not a job id" ;;
esac
echo "submitted job $job"

wait_until "lavacli -i test results $job 0_boardtrace board-ready | grep -q pass" 600 ||
    fail "job $job never said its board was ready: $(lavacli -i test jobs show "$job")"
show=$(lavacli -i test jobs show "$job")
echo "$show" | grep -q '^state *: Running' || fail "board ready but job not Running: $show"
echo "$show" | grep -q '^device *: rv0$' || fail "job $job not on rv0: $show"
lavacli -i test devices show rv0 | grep -q '^state *: Running' ||
    fail "device rv0 not held: $(lavacli -i test devices show rv0)"

# The host works on the board while the job holds it; the job's test waits.
ssh_board() {
    ssh -o BatchMode=yes -o StrictHostKeyChecking=yes -o "UserKnownHostsFile=$BOARD_KNOWN_HOSTS" \
        -i "$BOARD_KEY" -p "$BOARD_PORT" "$BOARD_USER@$BOARD_HOST" "$@"
}
uname_m=$(ssh_board uname -m)
[ "$uname_m" = riscv64 ] || fail "board says uname -m '$uname_m'"
lavacli -i test jobs show "$job" | grep -q '^state *: Running' ||
    fail "job $job let the board go before it was released"
ssh_board 'echo pass 1234 56 >/tmp/boardtrace-release.new && mv /tmp/boardtrace-release.new /tmp/boardtrace-release'

lavacli -i test jobs wait "$job" --polling 2 --timeout 600 >/dev/null ||
    fail "job $job did not finish within 600 s"
show=$(lavacli -i test jobs show "$job")
echo "$show"
echo "$show" | grep -q '^Health *: Complete' || fail "job $job did not complete"
results=$(lavacli -i test results "$job" --yaml)
echo "$results"
printf '%s\n' "$results" >"$work/results.yaml"
check() {
    python3 - "$work/results.yaml" "$@" <<'EOF' || fail "result $2: expected $3 $4"
import sys, yaml
path, name, result, measurement = sys.argv[1:]
cases = [c for c in yaml.safe_load(open(path)) if c["suite"] == "0_boardtrace" and c["name"] == name]
assert len(cases) == 1, cases
assert cases[0]["result"] == result, cases[0]
if measurement != "-":
    assert float(cases[0]["measurement"]) == float(measurement), cases[0]
EOF
}
check board-ready pass -
check run pass -
check zones pass 1234
check frames pass 56
lavacli -i test devices show rv0 | grep -q '^state *: Idle' ||
    wait_until "lavacli -i test devices show rv0 | grep -q '^state *: Idle'" 60 ||
    fail "device rv0 not idle after the job: $(lavacli -i test devices show rv0)"
echo "PASS: job $job held rv0, recorded run pass, 1234 zones, 56 frames"
