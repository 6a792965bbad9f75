#!/bin/sh
# An installed boardtrace, moved to another prefix, as a user would have it:
# `boardtrace run` from the moved prefix finds the board's capture beside
# itself (not in the build tree) and traces a program on the emulated board,
# and without it says how to put one there;
# a project links the runtime through find_package(boardtrace) and through
# pkg-config from the moved prefix.
# Usage: check_installed.sh BUILD_DIR SOURCE_DIR BOARD_SH BOARD_DIR PROGRAM
set -eu
build=$1 source=$2 board_sh=$3 board_dir=$4 program=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/bt-installed.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
    echo "check_installed: $*" >&2
    exit 1
}

cmake --install "$build" --prefix "$work/first" > "$work/install.log" ||
    fail "cmake --install failed: $(cat "$work/install.log")"
mv "$work/first" "$work/moved"
prefix=$work/moved
[ -x "$prefix/share/boardtrace/riscv64/boardtrace-capture" ] ||
    fail "the riscv64 capture is not in share/boardtrace/riscv64"

eval "$(sh "$board_sh" --dir "$board_dir" env)"
(cd "$work" && "$prefix/bin/boardtrace" run --host "$BOARD_TARGET" -i "$BOARD_KEY" \
    --known-hosts "$BOARD_KNOWN_HOSTS" -o "$work/run.tracy" "$program") \
    > "$work/run.out" 2>&1 || fail "boardtrace run from the moved prefix failed: $(cat "$work/run.out")"
grep -q "\"path\": \"$prefix/bin/../share/boardtrace/riscv64/boardtrace-capture\"" \
    "$work/run.tracy.json" || fail "the run did not use the moved prefix's capture: $(cat "$work/run.tracy.json")"
grep -q "capture   complete" "$work/run.out" || fail "no complete capture: $(cat "$work/run.out")"

# Without its capture, the installed boardtrace says how to put one where it
# looks: the board build's capture into this prefix, not the whole board build
# (whose library would replace the host's); the line it gives works.
mv "$prefix/share/boardtrace/riscv64/boardtrace-capture" "$work/capture"
if (cd "$work" && "$prefix/bin/boardtrace" run --host "$BOARD_TARGET" -i "$BOARD_KEY" \
    --known-hosts "$BOARD_KNOWN_HOSTS" -o "$work/none.tracy" "$program") > "$work/none.out" 2>&1; then
    fail "boardtrace run without a capture succeeded: $(cat "$work/none.out")"
fi
hint="install -D build/riscv64/tools/capture/boardtrace-capture $prefix/share/boardtrace/riscv64/boardtrace-capture"
grep -qF "$hint" "$work/none.out" || fail "no hint naming '$hint': $(cat "$work/none.out")"
mkdir -p "$work/src/build/riscv64/tools/capture"
cp "$work/capture" "$work/src/build/riscv64/tools/capture/boardtrace-capture"
(cd "$work/src" && eval "$hint") || fail "the hint's command failed: $hint"
[ -x "$prefix/share/boardtrace/riscv64/boardtrace-capture" ] || fail "the hint put no capture in place"

# find_package from the moved prefix.
cmake -S "$source/tests/consumer" -B "$work/consumer" -G Ninja \
    -Dboardtrace_DIR="$prefix/lib/cmake/boardtrace" > "$work/consumer.log" 2>&1 &&
    cmake --build "$work/consumer" >> "$work/consumer.log" 2>&1 ||
    fail "find_package consumer failed: $(cat "$work/consumer.log")"
TRACY_NO_BROADCAST=1 "$work/consumer/consumer" | grep -q "^consumer: boardtrace " ||
    fail "the find_package consumer did not run"

# pkg-config from the moved prefix.
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs boardtrace) ||
    fail "pkg-config does not know boardtrace"
# shellcheck disable=SC2086 # the flags are words
cc "$source/tests/consumer/main.c" $flags -o "$work/pc-consumer" ||
    fail "building with pkg-config's flags ($flags) failed"
TRACY_NO_BROADCAST=1 "$work/pc-consumer" | grep -q "^consumer: boardtrace " ||
    fail "the pkg-config consumer did not run"
echo "check_installed: ok ($prefix)"
