#!/bin/sh
# Runs every test suite: prepares the machine (tools/setup.sh), then for each
# preset configures with warnings as errors, builds, and runs ctest. By default
# host-riscv64 (the host suite, the riscv64 suite under qemu, and the
# end-to-end demo on the emulated board) followed by bounded fuzzing runs,
# aarch64 and riscv64-x60 (under qemu), and host-default (the options a plain
# configure gets: tracing off); or the presets named as arguments.
# After the set-up, the suites run inside tools/netguard.sh: a private network
# namespace with only loopback, which lists any packet that tries to leave and
# then fails the run. With host-riscv64, the tests on the Debian boards (label
# debian) and on the full-system boards (label system) come last. Exits non-zero if any step fails, after running all;
# the last lines name every suite that passed, failed or was not run (and why).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
say() { printf 'test: %s\n' "$*"; }

if [ -z "${BT_NETGUARD:-}" ]; then
    # With what the full-system boards need (qemu-system, their kernels) when
    # the machine can have it; without it their tests are skipped, saying so.
    export BT_SYSTEM_SKIP=
    if ! "$top/tools/setup.sh" --system; then
        BT_SYSTEM_SKIP="tools/setup.sh --system failed (above): no qemu-system, board kernels or Debian userlands"
        "$top/tools/setup.sh" || exit 1
    fi
    exec "$top/tools/netguard.sh" "$0" "$@"
fi

presets=${*:-host-riscv64 aarch64 riscv64-x60 host-default}
jobs=${BT_JOBS:-$(nproc 2>/dev/null || echo 2)}
failed=""
passed=""
notrun="" # suites skipped, each with why: named again in the final summary
for p in $presets; do
    say "=== $p: configure, build, test ==="
    start=$(date +%s)
    mkdir -p build
    log="build/$p.configure.log"
    if cmake --preset "$p" -DBT_WERROR=ON >"$log" 2>&1 || { cat "$log"; false; }; then
        if cmake --build --preset "$p" -j "$jobs" && ctest --preset "$p" -j "$jobs"; then
            say "$p passed in $(($(date +%s) - start)) s"
            passed="$passed $p"
            [ "$p" = host-riscv64 ] || continue
            # The host build also runs the fuzz targets, each for a bounded time.
            say "=== host: fuzz the stream decoder, the .tracy reader, the instruction decoder and the ELF reader ==="
            start=$(date +%s)
            if ctest --preset fuzz; then
                say "fuzz passed in $(($(date +%s) - start)) s"
                passed="$passed fuzz"
                continue
            fi
            p="fuzz"
        fi
    fi
    say "$p FAILED"
    failed="$failed $p"
    if [ "$p" = host-riscv64 ]; then
        say "fuzz NOT RUN: the host-riscv64 build or its tests failed"
        notrun="$notrun fuzz(host-riscv64 failed)"
    fi
done

# The Debian boards (label debian) and the full-system boards (label
# system), after the presets: the aarch64 boards' programs (the system
# board's, the Debian arm64 board's capture and Python extension) come from
# the aarch64 preset's build.
case " $presets " in
*" host-riscv64 "*)
    say "=== debian: tests on the Debian riscv64 and arm64 boards ==="
    if [ -n "${BT_SYSTEM_SKIP:-}" ]; then
        say "debian NOT RUN: $BT_SYSTEM_SKIP"
        notrun="$notrun debian(no userlands)"
    elif case " $failed " in *" host-riscv64 "* | *" aarch64 "*) true ;; *) false ;; esac; then
        say "debian NOT RUN: its programs come from the host-riscv64 and aarch64 builds, and one failed"
        notrun="$notrun debian(a build it needs failed)"
    else
        start=$(date +%s)
        if ctest --preset debian; then
            say "debian passed in $(($(date +%s) - start)) s"
            passed="$passed debian"
        else
            say "debian FAILED"
            failed="$failed debian"
        fi
    fi
    say "=== system: tests on the full-system riscv64 and aarch64 boards ==="
    if [ -n "${BT_SYSTEM_SKIP:-}" ]; then
        say "system NOT RUN: $BT_SYSTEM_SKIP"
        notrun="$notrun system(no qemu-system or kernels)"
    elif ! command -v qemu-system-riscv64 >/dev/null || ! command -v qemu-system-aarch64 >/dev/null; then
        say "system NOT RUN: qemu-system-riscv64 or qemu-system-aarch64 is missing"
        notrun="$notrun system(no qemu-system)"
    elif case " $failed " in *" host-riscv64 "* | *" aarch64 "*) true ;; *) false ;; esac; then
        say "system NOT RUN: its programs come from the host-riscv64 and aarch64 builds, and one failed"
        notrun="$notrun system(a build it needs failed)"
    else
        start=$(date +%s)
        if ctest --preset system; then
            say "system passed in $(($(date +%s) - start)) s"
            passed="$passed system"
        else
            say "system FAILED"
            failed="$failed system"
        fi
    fi
    ;;
esac

# The summary names every suite: passed, failed, and not run with why (a
# suite this machine cannot run does not fail the run, but is never silent).
say "passed:${passed:- none}"
[ -z "$notrun" ] || say "NOT RUN:$notrun"
if [ -n "$failed" ]; then
    say "FAILED:$failed"
    exit 1
fi
say "every suite that ran passed"
