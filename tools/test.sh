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
# debian), on the full-system boards (label system) and on a board farm run
# by a real LAVA (label lava) come last. Exits non-zero if any step fails,
# after running all; the last lines name every suite that passed, failed or
# was not run (and why).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
say() { printf 'test: %s\n' "$*"; }

if [ -z "${BT_NETGUARD:-}" ]; then
    # With what the full-system boards need (qemu-system, their kernels, the
    # Debian userlands): every machine this runs on can have them, all from
    # Debian, so a set-up that fails is a failure of the run, named at the
    # end; the suites that do not need it still run.
    export BT_SETUP_FAILED=
    if ! "$top/tools/setup.sh" --system; then
        BT_SETUP_FAILED="tools/setup.sh --system failed (its last lines above say where)"
        "$top/tools/setup.sh" || exit 1
    fi
    exec "$top/tools/netguard.sh" "$0" "$@"
fi

presets=${*:-host-riscv64 aarch64 riscv64-x60 host-default}
jobs=${BT_JOBS:-$(nproc 2>/dev/null || echo 2)}
failed=""
passed=""
notrun="" # suites skipped, each with why: named again in the final summary
built=""  # presets whose build succeeded (what later suites take programs from)
if [ -n "${BT_SETUP_FAILED:-}" ]; then
    say "setup FAILED: $BT_SETUP_FAILED"
    failed="$failed setup"
fi
for p in $presets; do
    say "=== $p: configure, build, test ==="
    start=$(date +%s)
    mkdir -p build
    log="build/$p.configure.log"
    if cmake --preset "$p" -DBT_WERROR=ON >"$log" 2>&1 || { cat "$log"; false; }; then
        if cmake --build --preset "$p" -j "$jobs"; then
            built="$built $p"
            if ctest --preset "$p" -j "$jobs"; then
                say "$p passed in $(($(date +%s) - start)) s"
                passed="$passed $p"
            else
                say "$p FAILED (its tests; the build succeeded)"
                failed="$failed $p"
            fi
            [ "$p" = host-riscv64 ] || continue
            # The host build also runs the fuzz targets, each for a bounded
            # time, whatever its tests said: they need only the build.
            say "=== host: fuzz the stream decoder, the .tracy reader, the instruction decoder and the ELF reader ==="
            start=$(date +%s)
            if ctest --preset fuzz; then
                say "fuzz passed in $(($(date +%s) - start)) s"
                passed="$passed fuzz"
            else
                say "fuzz FAILED"
                failed="$failed fuzz"
            fi
            continue
        fi
    fi
    say "$p FAILED (configure or build)"
    failed="$failed $p"
    if [ "$p" = host-riscv64 ]; then
        say "fuzz NOT RUN: the host-riscv64 build failed"
        notrun="$notrun fuzz(host-riscv64 build failed)"
    fi
done

# The Debian boards (label debian), the full-system boards (label system)
# and the LAVA board farm (label lava), after the presets: the aarch64
# boards' programs (the system board's, the Debian arm64 board's capture and
# Python extension) come from the aarch64 preset's build; the farm's Debian
# riscv64 boards need only host-riscv64's. They run whenever those builds
# succeeded, whatever the presets' own tests said.
builds_missing() {
    m=""
    for b in "$@"; do
        case " $built " in *" $b "*) ;; *) m="$m $b" ;; esac
    done
    printf '%s' "$m"
}
case " $presets " in
*" host-riscv64 "*)
    for suite in debian system lava; do
        case $suite in
        debian) say "=== debian: tests on the Debian riscv64 and arm64 boards ===" ;;
        system) say "=== system: tests on the full-system riscv64 and aarch64 boards ===" ;;
        lava) say "=== lava: a board farm of Debian riscv64 boards run by a real LAVA ===" ;;
        esac
        if [ $suite = lava ]; then
            missing=$(builds_missing host-riscv64)
        else
            missing=$(builds_missing host-riscv64 aarch64)
        fi
        if [ -n "$missing" ]; then
            say "$suite NOT RUN: its programs come from the build of$missing, which failed"
            notrun="$notrun $suite(build of$missing failed)"
        elif [ -n "${BT_SETUP_FAILED:-}" ]; then
            # Counted as failed above (setup): what it needs is not there.
            say "$suite NOT RUN: $BT_SETUP_FAILED"
            notrun="$notrun $suite(setup failed)"
        else
            start=$(date +%s)
            if ctest --preset $suite; then
                say "$suite passed in $(($(date +%s) - start)) s"
                passed="$passed $suite"
            else
                say "$suite FAILED"
                failed="$failed $suite"
            fi
        fi
    done
    ;;
esac

# The summary names every suite: passed, failed, and not run with why (a
# suite not run because of a failure above: that failure fails the run).
say "passed:${passed:- none}"
[ -z "$notrun" ] || say "NOT RUN:$notrun"
if [ -n "$failed" ]; then
    say "FAILED:$failed"
    exit 1
fi
say "every suite that ran passed"
