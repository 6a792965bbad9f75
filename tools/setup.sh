#!/bin/sh
# Prepares a Debian 12 machine for building and testing boardtrace: installs
# every host dependency from Debian (only what is missing), makes sure qemu's
# binfmt_misc handlers for riscv64 and aarch64 are registered so target
# binaries also run when executed directly, and unpacks the Debian source
# packages compiled for the boards. Idempotent; says what it does.
# With --system also what the full-system boards need (tools/board/system.sh):
# qemu-system, the kernel build tools and source, and their kernels, built or
# downloaded once into ~/.cache/boardtrace (tools/board/system/kernel.sh); and
# the Debian boards' userlands (tools/board/debian.sh), cached there too.
# LAVA (lava-server, lava-dispatcher, lavacli, PostgreSQL) is always
# installed: the board-farm tests (ctest --preset lava, tests/integration/lava)
# are part of tools/test.sh. No service of it is started or needed: the tests
# start their own LAVA (lava-fixture.sh).
set -eu

system=0
for arg in "$@"; do
    case $arg in
    --system) system=1 ;;
    *)
        echo "usage: tools/setup.sh [--system]" >&2
        exit 2
        ;;
    esac
done

top=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'setup: %s\n' "$*"; }

if [ "$(id -u)" = 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
else
    say "needs root (or sudo) to install packages and register binfmt handlers" >&2
    exit 1
fi

# Build tools, cross compilers, emulator, libraries, ssh, and the tools the
# tests and the emulated board use.
packages="
    build-essential cmake ninja-build pkg-config git file binutils
    clang clang-format llvm libclang-rt-dev
    gcc-riscv64-linux-gnu g++-riscv64-linux-gnu libc6-dev-riscv64-cross
    gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
    qemu-user-static
    libssh-dev libzstd-dev liblz4-dev zlib1g-dev libcmocka-dev
    openssh-server openssh-client
    dpkg-dev xz-utils bzip2 bc zstd lz4 python3 python3-dev
    iproute2 tcpdump chromium
"
# LAVA for the board-farm tests, which start their own (lava-fixture.sh: its
# own PostgreSQL cluster, server, scheduler and worker) and use no service of
# the packages: PostgreSQL is only recommended by lava-server, so named here.
packages="$packages lava-server lava-dispatcher lavacli postgresql"
# Node.js and npm run speedscope's importer (tests/report). A machine that
# already has them (NodeSource's nodejs, which bundles npm and conflicts with
# Debian's npm package) keeps its own; only a machine without them gets
# Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    packages="$packages nodejs npm"
fi

# The full-system boards: qemu-system with its OpenSBI firmware, and what
# builds the riscv64 kernel from Debian's linux-source-6.1.
if [ "$system" = 1 ]; then
    packages="$packages
    qemu-system-misc qemu-system-arm opensbi
    linux-source-6.1 flex bison libssl-dev libelf-dev cpio
    mmdebstrap arch-test
"
fi

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -n "$missing" ]; then
    say "installing from Debian:$missing"
    $as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
    say "all Debian packages already installed"
fi

# qemu user mode through binfmt_misc: a fresh machine or container may not
# have the file system mounted, and qemu-user-static's own registration then
# silently did nothing.
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/register" ]; then
    say "mounting binfmt_misc on $binfmt"
    $as_root mount -t binfmt_misc binfmt_misc "$binfmt"
fi
for arch in riscv64 aarch64; do
    if [ -e "$binfmt/qemu-$arch" ]; then
        say "qemu-$arch binfmt handler already registered"
        continue
    fi
    conf=/usr/lib/binfmt.d/qemu-$arch.conf
    [ -f "$conf" ] || { say "missing $conf (package qemu-user-static)" >&2; exit 1; }
    say "registering the qemu-$arch binfmt handler from $conf"
    # The F flag makes the kernel open the interpreter now, so the handler
    # also works inside chroots and private mount namespaces.
    grep -v '^#' "$conf" | $as_root tee "$binfmt/register" >/dev/null
done

"$top/tools/fetch-deps.sh"
# speedscope's own importer, which checks boardtrace-report's speedscope
# output (tests/report): the version package-lock.json pins.
if [ ! -d "$top/tests/report/node/node_modules/speedscope" ]; then
    say "installing speedscope (npm) for tests/report"
    npm ci --prefix "$top/tests/report/node" --no-audit --no-fund >/dev/null
fi
if [ "$system" = 1 ]; then
    # The arm64 kernel is Debian's own package, fetched while the network is
    # there (the tests run without one); the riscv64 kernel is built once.
    for arch in riscv64 aarch64; do
        k=$("$top/tools/board/system/kernel.sh" "$arch") || exit 1
        say "$arch kernel: $k ($(cat "$k/version"))"
    done
    # The Debian boards' userlands (riscv64 trixie, arm64 bookworm), built
    # once from Debian's archive into the same cache.
    for arch in riscv64 aarch64; do
        "$top/tools/board/debian.sh" --arch "$arch" build || exit 1
    done
fi
say "ready"
