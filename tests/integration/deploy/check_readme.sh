#!/bin/sh
# The README's own commands for using boardtrace on a board ("Using it on a
# board", step 2), taken from README.md as written and run against the
# emulated board: the board's name, the program and its arguments stand for
# the user's, and build/host-riscv64 for this build. The `cmake` line that
# builds that folder is the one line not run: this test runs inside the
# build it makes.
# Usage: check_readme.sh SOURCE_DIR BUILD_DIR BOARD_SH BOARD_DIR PROGRAM
set -eu
source=$1 build=$2 board_sh=$3 board_dir=$4 program=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/bt-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
    echo "check_readme: $*" >&2
    exit 1
}

# The first sh block after "2. From the host".
sed -n '/^2\. From the host/,/^3\. /p' "$source/README.md" |
    sed -n '/```sh/,/```/p' | sed '1d;$d' | sed 's/^ *//; s/ *#.*$//' > "$work/commands"
grep -q 'boardtrace run' "$work/commands" || fail "no boardtrace run command in README.md step 2"
grep -q 'boardtrace-report stats' "$work/commands" || fail "no report command in README.md step 2"

eval "$(sh "$board_sh" --dir "$board_dir" env)"
cp "$program" "$work/app"
n=0
while IFS= read -r line; do
    case $line in
    '' | 'cmake '*) continue ;;
    esac
    cmd=$(printf '%s\n' "$line" | sed \
        -e "s|build/host-riscv64/|$build/|g" \
        -e "s|root@myboard|'$BOARD_TARGET' -i '$BOARD_KEY' --known-hosts '$BOARD_KNOWN_HOSTS'|" \
        -e 's|-- --its-args|-- -f 20|')
    n=$((n + 1))
    echo "check_readme: $cmd"
    (cd "$work" && sh -c "$cmd") > "$work/out.$n" 2>&1 || fail "README command failed: $line
$(cat "$work/out.$n")"
    cat "$work/out.$n"
done < "$work/commands"
[ "$n" -ge 2 ] || fail "ran $n commands from README.md, expected the run and the report"
grep -q "capture   complete" "$work/out.1" || fail "the README's run did not complete a capture"
grep -q "^matmul " "$work/out.2" || fail "the README's report did not list the demo's zones"
[ -s "$work/app.tracy" ] || fail "the README's run left no app.tracy"
echo "check_readme: $n commands of README.md ran as written"
