#!/bin/sh
# An emulated board that runs a real distribution: a minimal Debian userland
# (riscv64: trixie, aarch64: bookworm) with its own glibc, dynamic loader,
# OpenSSH and Python. Its own sshd runs chrooted in the userland, listening
# on 127.0.0.1, and every program on it (sshd itself, the shell, what
# boardtrace uploads) runs through qemu user mode (binfmt_misc), in a private
# mount namespace that holds the userland's /proc.
#
# Usage: tools/board/debian.sh [--dir DIR] [--arch A] COMMAND
#   build              build the userland for A once into the cache (needs
#                      Debian's archive: tools/setup.sh --system does it); for
#                      aarch64 also the next suite's glibc (see newer-libc)
#   newer-libc         print the folder holding a glibc newer than the
#                      board's (aarch64: trixie's libc6), to link test
#                      programs the board's glibc is too old for
#   python-sysroot     print a folder holding the userland's Python headers
#                      (usr/include/python3.X and its pyconfig.h), unpacked
#                      from the cache once: what the extension for the
#                      board's Python is built against (BT_PYTHON_SYSROOT)
#   start [--no-sftp]  start the board (riscv64 unless --arch aarch64)
#   stop               stop it and keep its state
#   status             say whether it runs (exit 0) or not (exit 1)
#   env                print BOARD_* variables for the shell (port, key, ...)
#   purge              stop it and delete its state (keys, rootfs)
#
# DIR (default $BOARDTRACE_BOARD_DIR, else <repo>/build/.board/debian-A)
# holds the board's state, private (0700): its rootfs (unpacked from the
# cache at each start, so every start is a fresh board), keys and logs. The
# userland is cached in $BOARDTRACE_CACHE/debian (default
# ~/.cache/boardtrace/debian), named by architecture, suite and package list.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
arch=
dir=${BOARDTRACE_BOARD_DIR:-}
cache=${BOARDTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boardtrace}/debian

# What a developer board image usually has beside the base system: OpenSSH
# (with SFTP), Python with its headers, the usual process and network tools.
packages=openssh-server,openssh-sftp-server,python3,python3-dev,procps,iproute2,ca-certificates

say() { printf 'debian-board: %s\n' "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}

usage() {
    sed -n '/^# Usage/,/^#   purge/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

set_arch() {
    case $1 in
    riscv64) suite=trixie debarch=riscv64 ;;
    aarch64) suite=bookworm debarch=arm64 ;;
    *) die "--arch $1: expected riscv64 or aarch64" ;;
    esac
    arch=$1
    hash=$(printf '%s %s %s\n' "$suite" "$debarch" "$packages" | sha256sum | cut -c1-12)
    tarball=$cache/$arch-$suite-$hash.tar.zst
    newer=$cache/$arch-newer-libc
}

# The archive this machine's own Debian packages come from (its apt
# sources): no archive is named here.
archive() {
    host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(TARGET_OF)' 2>/dev/null |
        awk -v s="$host_suite" '$2 == s && $3 == "deb" { print $1; exit }')
    [ -n "$uri" ] || die "no deb entry for Debian $host_suite in this machine's apt sources to take the archive's address from"
    printf '%s\n' "$uri"
}

# First stage on the host, second stage (the packages' scripts) under qemu
# user mode: mmdebstrap does both into one tarball.
cmd_build() {
    if [ -f "$tarball" ]; then
        say "userland cached: $tarball"
        return 0
    fi
    command -v mmdebstrap >/dev/null || die "mmdebstrap not found; tools/setup.sh --system installs it"
    [ -r "/proc/sys/fs/binfmt_misc/qemu-$arch" ] ||
        die "qemu-$arch is not registered with binfmt_misc; tools/setup.sh does it"
    mkdir -p "$cache"
    exec 9>"$cache/.build.lock"
    flock 9
    [ -f "$tarball" ] && return 0
    uri=$(archive)
    log=$cache/$arch-$suite.log
    say "building the Debian $suite $debarch userland from $uri (minbase + $packages; log: $log)"
    start=$(date +%s)
    # The ticker lets go of the cache lock (fd 9) first: its sleep outlives
    # the kill by up to a minute and must not hold up the next set-up.
    (
        exec 9>&-
        while sleep 60 && kill -0 $$ 2>/dev/null; do
            say "still building the $debarch userland: $(($(date +%s) - start)) s so far"
        done
    ) >&2 &
    ticker=$!
    if ! mmdebstrap --variant=minbase --architectures="$debarch" --include="$packages" \
        --format=tar "$suite" - "$uri" 2>"$log" | zstd -q -T0 -o "$tarball.part" ||
        ! grep -q '^I: success' "$log"; then
        kill "$ticker" 2>/dev/null
        rm -f "$tarball.part"
        tail -n 20 "$log" >&2
        die "building the $debarch userland failed; see $log"
    fi
    kill "$ticker" 2>/dev/null
    if [ "$arch" = aarch64 ]; then
        # Only unpacked (no scripts run): the files to link against.
        if ! mmdebstrap --variant=extract --architectures=arm64 --include=libc6 trixie \
            "$newer.part.tar" "$uri" >>"$log" 2>&1; then
            rm -f "$tarball.part" "$newer.part.tar"
            die "fetching trixie's arm64 libc6 failed; see $log"
        fi
        rm -rf "$newer" "$newer.part"
        mkdir -p "$newer.part"
        tar -xf "$newer.part.tar" -C "$newer.part" --numeric-owner
        rm -f "$newer.part.tar"
        mv "$newer.part" "$newer"
    fi
    mv "$tarball.part" "$tarball"
    say "userland built in $(($(date +%s) - start)) s: $tarball ($(($(stat -c %s "$tarball") >> 20)) MiB)"
}

pid_running() {
    [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null
}

make_rootfs() {
    rootfs=$dir/rootfs
    rm -rf "$rootfs"
    mkdir -p "$rootfs"
    zstd -dc "$tarball" | tar -xf - -C "$rootfs" --numeric-owner
    mkdir -p "$rootfs/run/sshd" "$rootfs/root/.ssh"
    chmod 700 "$rootfs/root/.ssh"
    chmod 1777 "$rootfs/tmp"
}

make_keys() {
    [ -f "$dir/host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C boardtrace-debian-board -f "$dir/host_ed25519_key"
    [ -f "$dir/client_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C boardtrace-client -f "$dir/client_ed25519"
    install -m 600 "$dir/host_ed25519_key" "$rootfs/etc/ssh/boardtrace_host_ed25519_key"
    install -m 600 "$dir/client_ed25519.pub" "$rootfs/root/.ssh/authorized_keys"
}

# The board's own sshd, with its own SFTP server; a config of its own so the
# image's defaults stay as Debian ships them.
make_config() {
    port=$1
    sftp=$2
    {
        printf '# Generated by tools/board/debian.sh\n'
        printf 'ListenAddress 127.0.0.1\nPort %s\n' "$port"
        printf 'HostKey /etc/ssh/boardtrace_host_ed25519_key\nPidFile /run/sshd.pid\n'
        printf 'PermitRootLogin prohibit-password\nPubkeyAuthentication yes\n'
        printf 'PasswordAuthentication no\nKbdInteractiveAuthentication no\n'
        printf 'UsePAM no\nPrintMotd no\nPrintLastLog no\n'
        printf 'AllowTcpForwarding local\nX11Forwarding no\nPermitTunnel no\n'
        if [ "$sftp" = 1 ]; then
            printf 'Subsystem sftp /usr/lib/openssh/sftp-server\n'
        fi
    } >"$rootfs/etc/ssh/boardtrace_sshd_config"
}

listening() {
    hex=$(printf '%04X' "$1")
    grep -q "^ *[0-9]*: 0100007F:$hex 00000000:0000 0A " /proc/net/tcp 2>/dev/null
}

cmd_start() {
    sftp=1
    for a in "$@"; do
        case $a in
        --no-sftp) sftp=0 ;;
        --sftp) sftp=1 ;;
        *) die "start: unknown option '$a' (expected --sftp or --no-sftp)" ;;
        esac
    done
    [ "$(id -u)" = 0 ] || die "needs root (chroot and a private mount namespace)"
    [ -f "$tarball" ] ||
        die "no $debarch userland in $cache; build it once with: tools/setup.sh --system (or $0 --arch $arch build)"
    if pid_running; then
        say "already running (pid $(cat "$dir/pid")): restarting it"
        cmd_stop
    fi
    (umask 077 && mkdir -p "$dir")
    chmod 700 "$dir"
    make_rootfs
    make_keys
    tries=0
    while :; do
        tries=$((tries + 1))
        port=$(random_port)
        port_in_use "$port" && continue
        make_config "$port" "$sftp"
        : >"$dir/sshd.log"
        # The mounts live in the namespace and go with its last process.
        unshare -m --propagation private sh -c '
            mount -t proc proc "$1/proc" && mount -t devpts -o newinstance devpts "$1/dev/pts" &&
                exec chroot "$1" /usr/sbin/sshd -D -e -f /etc/ssh/boardtrace_sshd_config' \
            sh "$rootfs" >>"$dir/sshd.log" 2>&1 &
        echo $! >"$dir/pid"
        # sshd runs under qemu: wait for its socket, not for a time.
        n=0
        while pid_running && ! listening "$port" && [ "$n" -lt 1200 ]; do
            sleep 0.1
            n=$((n + 1))
        done
        listening "$port" && break
        cmd_stop >/dev/null 2>&1
        [ "$tries" -lt 5 ] || die "the board's sshd did not start; see $dir/sshd.log"
    done
    printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_ed25519_key.pub")" >"$dir/known_hosts"
    printf '%s\n' "$port" >"$dir/port"
    printf '%s\n' "$sftp" >"$dir/sftp"
    printf '%s\n' "$arch" >"$dir/arch"
    glibc=$(chroot "$rootfs" /usr/bin/ldd --version 2>/dev/null | sed -n '1s/.* \([0-9][0-9.]*\)$/\1/p')
    printf '%s\n' "$glibc" >"$dir/glibc"
    say "running: root@127.0.0.1:$port (Debian $suite $debarch, glibc $glibc, sftp $([ "$sftp" = 1 ] && echo on || echo off)), state in $dir"
}

cmd_stop() {
    if pid_running; then
        pid=$(cat "$dir/pid")
        kill "$pid" 2>/dev/null || true
        n=0
        while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 100 ]; do
            sleep 0.1
            n=$((n + 1))
        done
        kill -9 "$pid" 2>/dev/null || true
        say "stopped (pid $pid)"
    else
        say "not running"
    fi
    # What the board's sessions left running goes with it.
    if [ -d "$dir/rootfs" ]; then
        for p in /proc/[0-9]*; do
            [ "$(readlink "$p/root" 2>/dev/null)" = "$dir/rootfs" ] && kill -9 "${p#/proc/}" 2>/dev/null
        done
    fi
    rm -f "$dir/pid"
}

cmd_env() {
    pid_running || die "not running; start it with: $0 --arch $arch start"
    port=$(cat "$dir/port")
    printf 'BOARD_HOST=127.0.0.1\nBOARD_PORT=%s\nBOARD_USER=root\n' "$port"
    printf 'BOARD_TARGET=%s\n' "$(q "root@127.0.0.1:$port")"
    printf 'BOARD_KEY=%s\nBOARD_KNOWN_HOSTS=%s\n' "$(q "$dir/client_ed25519")" "$(q "$dir/known_hosts")"
    printf 'BOARD_ROOTFS=%s\nBOARD_SFTP=%s\nBOARD_DIR=%s\n' "$(q "$dir/rootfs")" "$(cat "$dir/sftp")" "$(q "$dir")"
    printf 'BOARD_ARCH=%s\nBOARD_KIND=debian\nBOARD_SUITE=%s\nBOARD_GLIBC=%s\n' "$arch" "$suite" "$(cat "$dir/glibc")"
}

. "$top/tools/board/common.sh"
# Without --arch: the one the board in DIR was started with, else riscv64.
if [ -z "$arch" ] && [ -n "$dir" ] && [ -f "$dir/arch" ]; then
    arch=$(cat "$dir/arch")
fi
set_arch "${arch:-riscv64}"
[ -n "$dir" ] || dir=$top/build/.board/debian-$arch
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac
case $command in
build) cmd_build ;;
newer-libc)
    [ "$arch" = aarch64 ] || die "newer-libc: only the aarch64 board (bookworm) has a newer suite here"
    [ -f "$newer/usr/lib/aarch64-linux-gnu/libc.so.6" ] ||
        die "no newer glibc in $newer; build it once with: tools/setup.sh --system (or $0 --arch aarch64 build)"
    printf '%s\n' "$newer/usr/lib/aarch64-linux-gnu"
    ;;
python-sysroot)
    [ -f "$tarball" ] ||
        die "no $debarch userland in $cache; build it once with: tools/setup.sh --system (or $0 --arch $arch build)"
    py=$cache/$arch-$suite-$hash-python
    if ! [ -f "$py/.done" ]; then
        rm -rf "$py.part" && mkdir -p "$py.part"
        zstd -dcq "$tarball" | tar -x -C "$py.part" --wildcards './usr/include/python3*' \
            './usr/include/*-linux-gnu/python3*' ||
            die "no Python headers in $tarball (python3-dev)"
        touch "$py.part/.done"
        rm -rf "$py" && mv "$py.part" "$py"
    fi
    printf '%s\n' "$py"
    ;;
start) cmd_start "$@" ;;
stop) cmd_stop ;;
status)
    if pid_running; then
        say "running on port $(cat "$dir/port"), pid $(cat "$dir/pid")"
    else
        say "not running"
        exit 1
    fi
    ;;
env) cmd_env ;;
purge)
    cmd_stop
    rm -rf "$dir"
    ;;
*) usage ;;
esac
