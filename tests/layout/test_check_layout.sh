#!/bin/sh
# tools/check-layout.py against small trees made here: each rule it holds
# (a file over 800 lines, an include against the folders' order, units that
# call each other in a circle) is reported when broken, and a tree that
# keeps them passes. Usage: test_check_layout.sh TOP (the source tree).
set -u
top=$1
check="$top/tools/check-layout.py"
dir=$(mktemp -d /tmp/bt-layout-XXXXXX)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# A part with two folders: low may use nothing, high may use low.
mk() {
    rm -rf "$dir/t"
    mkdir -p "$dir/t/part/low" "$dir/t/part/high"
    printf 'low:\nhigh: low\n' >"$dir/t/part/layout.rules"
    printf 'int low_get(void);\n' >"$dir/t/part/low/low.h"
    printf '#include "low.h"\n\nint low_get(void)\n{\n    return 1;\n}\n' >"$dir/t/part/low/low.c"
    printf 'int high_run(void);\n' >"$dir/t/part/high/high.h"
    printf '#include "high.h"\n#include "../low/low.h"\n\nint high_run(void)\n{\n    return low_get();\n}\n' \
        >"$dir/t/part/high/high.c"
}

mk
out=$(python3 "$check" "$dir/t" 2>&1) || fail "a tree that keeps the rules was refused: $out"

mk
i=0
while [ $i -lt 801 ]; do
    echo "/* line */"
    i=$((i + 1))
done >>"$dir/t/part/low/low.c"
out=$(python3 "$check" "$dir/t" 2>&1) && fail "a file of 807 lines passed"
echo "$out" | grep -q "part/low/low.c: 807 lines, over 800" || fail "no line names the long file: $out"

mk
printf '#include "../high/high.h"\n' >>"$dir/t/part/low/low.h"
out=$(python3 "$check" "$dir/t" 2>&1) && fail "a backwards include passed"
echo "$out" | grep -q "part/low/low.h:2: includes part/high/high.h" || fail "no line names the backwards include: $out"

mk
# low calls back into high, through a declaration of its own (no include).
printf 'int high_run(void);\n\nint low_back(void)\n{\n    return high_run();\n}\n' >>"$dir/t/part/low/low.c"
out=$(python3 "$check" "$dir/t" 2>&1) && fail "a call circle passed"
echo "$out" | grep -q "circle: part/high/high -> part/low/low -> part/high/high" || fail "no line names the circle: $out"

mk
mkdir -p "$dir/t/part/new"
printf 'int x;\n' >"$dir/t/part/new/x.c"
out=$(python3 "$check" "$dir/t" 2>&1) && fail "a folder the rules do not name passed"
echo "$out" | grep -q "part/new/x.c: its folder has no line" || fail "no line names the unruled folder: $out"

[ $failures -eq 0 ] && echo "check-layout: every rule reported when broken, a clean tree passes"
exit $((failures != 0))
