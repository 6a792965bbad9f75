#!/bin/sh
# Runs every test suite: prepares the machine (tools/setup.sh), then for each
# preset configures with warnings as errors, builds, and runs ctest. By default
# host-riscv64 (the host suite, the riscv64 suite under qemu, and the
# end-to-end demo on the emulated board) followed by bounded fuzzing runs,
# aarch64 and riscv64-x60 (under qemu), and host-default (the options a plain
# configure gets: tracing off); or the presets named as arguments.
# After the set-up, the suites run inside tools/netguard.sh: a private network
# namespace with only loopback, which lists any packet that tries to leave and
# then fails the run. Exits non-zero if any step fails, after running all.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
say() { printf 'test: %s\n' "$*"; }

"$top/tools/setup.sh" || exit 1
if [ -z "${BT_NETGUARD:-}" ]; then
    exec "$top/tools/netguard.sh" "$0" "$@"
fi

presets=${*:-host-riscv64 aarch64 riscv64-x60 host-default}
jobs=${BT_JOBS:-$(nproc 2>/dev/null || echo 2)}
failed=""
for p in $presets; do
    say "=== $p: configure, build, test ==="
    start=$(date +%s)
    mkdir -p build
    log="build/$p.configure.log"
    if cmake --preset "$p" -DBT_WERROR=ON >"$log" 2>&1 || { cat "$log"; false; }; then
        if cmake --build --preset "$p" -j "$jobs" && ctest --preset "$p" -j "$jobs"; then
            say "$p passed in $(($(date +%s) - start)) s"
            [ "$p" = host-riscv64 ] || continue
            # The host build also runs the fuzz targets, each for a bounded time.
            say "=== host: fuzz the stream decoder, the .tracy reader, the instruction decoder and the ELF reader ==="
            start=$(date +%s)
            if ctest --preset fuzz; then
                say "fuzz passed in $(($(date +%s) - start)) s"
                continue
            fi
            p="$p-fuzz"
        fi
    fi
    say "$p FAILED"
    failed="$failed $p"
done

if [ -n "$failed" ]; then
    say "failed presets:$failed"
    exit 1
fi
say "all presets passed: $presets"
