#!/bin/sh
# The emulated RISC-V board for tests and the demo: a real OpenSSH server on
# 127.0.0.1 whose sessions run a static riscv64 busybox (built from Debian's
# source package) through qemu user mode. One command starts, stops, describes.
# `--arch aarch64` makes an ARM64 board the same way.
#
# Usage: tools/board/board.sh [--dir DIR] COMMAND [--dir DIR]
#   build [--arch A]   build the busybox for A (riscv64 or aarch64; cached)
#   start [--no-sftp] [--arch A]
#                      start the board (SFTP on unless --no-sftp; riscv64
#                      unless --arch aarch64)
#   stop               stop it and keep its keys
#   status             say whether it runs (exit 0) or not (exit 1)
#   env                print BOARD_* variables for the shell (port, key, ...)
#   purge              stop it and delete its state (keys, rootfs)
#
# DIR (or --state DIR; default $BOARDTRACE_BOARD_DIR, else
# <repo>/build/.board/board) holds the board's state, private (0700). The
# busybox build is cached in $BOARDTRACE_BOARD_CACHE (default
# <repo>/build/.board), shared by all boards.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${BOARDTRACE_BOARD_CACHE:-$top/build/.board}
dir=${BOARDTRACE_BOARD_DIR:-$cache/board}
sftp_server=${BOARDTRACE_SFTP_SERVER:-/usr/lib/openssh/sftp-server}
sshd=/usr/sbin/sshd
arch=riscv64

say() { printf 'board: %s\n' "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}

usage() {
    sed -n '/^# Usage/,/^#   purge/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

busybox_source() {
    for d in "${BT_DEPS_SOURCE_DIR:-$top/.deps}"/busybox-*/; do
        if [ -f "$d/Makefile" ]; then
            printf '%s\n' "${d%/}"
            return 0
        fi
    done
    return 1
}

# The cross compiler, kernel ARCH and ELF e_machine (little-endian bytes) of
# each board architecture.
set_arch() {
    case $1 in
    riscv64) triple=riscv64-linux-gnu kernel_arch=riscv machine=f300 ;;
    aarch64) triple=aarch64-linux-gnu kernel_arch=arm64 machine=b700 ;;
    *) die "--arch $1: expected riscv64 or aarch64" ;;
    esac
    arch=$1
}

# Builds busybox out of tree from Debian's source with the cross compiler:
# defconfig, static, without the applets that need kernel headers we lack.
build_busybox() {
    bb=$cache/busybox-$arch/busybox
    if [ -x "$bb" ]; then
        return 0
    fi
    mkdir -p "$cache"
    # Boards started at the same time build once: the others wait here.
    if command -v flock >/dev/null; then
        exec 9>"$cache/.build.lock"
        flock 9
        [ -x "$bb" ] && return 0
    fi
    src=$(busybox_source) ||
        die "no busybox source in ${BT_DEPS_SOURCE_DIR:-$top/.deps}/busybox-*; run tools/fetch-deps.sh busybox"
    command -v "$triple-gcc" >/dev/null ||
        die "$triple-gcc not found; install Debian's gcc-$triple"
    out=$cache/busybox-$arch
    mkdir -p "$out"
    log=$out/build.log
    say "building static $arch busybox from $src (log: $log)"
    jobs=${BOARDTRACE_JOBS:-2}
    make() { command make -C "$src" O="$out" ARCH="$kernel_arch" CROSS_COMPILE="$triple-" "$@"; }
    if ! {
        make defconfig &&
            sed -i -e 's/^# CONFIG_STATIC is not set/CONFIG_STATIC=y/' \
                -e 's/^CONFIG_TC=y/# CONFIG_TC is not set/' \
                -e 's/^CONFIG_FEATURE_TC_INGRESS=y/# CONFIG_FEATURE_TC_INGRESS is not set/' \
                "$out/.config" &&
            yes '' | make oldconfig &&
            make -j"$jobs" busybox
    } >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        die "busybox build failed; see $log"
    fi
    unset -f make
    file_out=$(LC_ALL=C od -An -tx1 -j18 -N2 "$out/busybox" | tr -d ' \n')
    [ "$file_out" = "$machine" ] ||
        die "built $out/busybox is not an $arch ELF (e_machine bytes $file_out, expected $machine)"
    say "busybox ready: $bb"
}

# binfmt_misc must run the board's ELF files through qemu, for busybox itself
# and for every program uploaded to the board.
check_binfmt() {
    binfmt=/proc/sys/fs/binfmt_misc/qemu-$arch
    if [ -r "$binfmt" ] && grep -q '^enabled' "$binfmt"; then
        return 0
    fi
    conf=/usr/lib/binfmt.d/qemu-$arch.conf
    if [ -w /proc/sys/fs/binfmt_misc/register ] && [ -r "$conf" ]; then
        say "registering qemu-$arch with binfmt_misc from $conf"
        cat "$conf" >/proc/sys/fs/binfmt_misc/register
        return 0
    fi
    die "$arch programs cannot run: $binfmt is missing; install qemu-user-static and register it (tools/setup.sh does)"
}

make_rootfs() {
    rootfs=$dir/rootfs
    mkdir -p "$rootfs/bin" "$rootfs/root" "$rootfs/tmp"
    chmod 1777 "$rootfs/tmp"
    cp "$cache/busybox-$arch/busybox" "$rootfs/bin/busybox"
    # The applet list comes from the board's busybox itself, through qemu.
    for a in $("$rootfs/bin/busybox" --list); do
        [ "$a" = busybox ] || ln -sf busybox "$rootfs/bin/$a"
    done
}

make_keys() {
    [ -f "$dir/host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C boardtrace-board -f "$dir/host_ed25519_key"
    [ -f "$dir/client_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C boardtrace-client -f "$dir/client_ed25519"
    cp "$dir/client_ed25519.pub" "$dir/authorized_keys"
    chmod 600 "$dir/authorized_keys"
}

# Every session, whatever the client asked, runs through this wrapper: the
# board's busybox shell with only the board's applets on PATH, or the SFTP
# server when the board offers SFTP.
make_session() {
    sftp=$1
    r=$dir/rootfs
    {
        printf '#!/bin/sh\n# Generated by tools/board/board.sh: a board session.\n'
        printf 'cd %s || exit 1\n' "'$r/root'"
        if [ "$sftp" = 1 ]; then
            printf 'if [ "${SSH_ORIGINAL_COMMAND-}" = %s ]; then exec %s -d %s; fi\n' \
                "'$sftp_server'" "'$sftp_server'" "'$r/root'"
        fi
        printf 'set -- env -i HOME=%s PATH=%s TMPDIR=%s USER="$(id -un)" LOGNAME="$(id -un)" SHELL=/bin/sh TERM="${TERM:-dumb}" %s sh\n' \
            "'$r/root'" "'$r/bin'" "'$r/tmp'" "'$r/bin/busybox'"
        printf 'if [ -n "${SSH_ORIGINAL_COMMAND+set}" ]; then exec "$@" -c "$SSH_ORIGINAL_COMMAND"; fi\n'
        printf 'exec "$@" -l\n'
    } >"$dir/session"
    chmod 700 "$dir/session"
}

make_config() {
    port=$1
    sftp=$2
    {
        printf '# Generated by tools/board/board.sh\n'
        printf 'ListenAddress 127.0.0.1\nPort %s\n' "$port"
        printf 'HostKey %s/host_ed25519_key\nPidFile %s/sshd.pid\n' "$dir" "$dir"
        printf 'AuthorizedKeysFile %s/authorized_keys\n' "$dir"
        printf 'PermitRootLogin prohibit-password\nPubkeyAuthentication yes\n'
        printf 'PasswordAuthentication no\nKbdInteractiveAuthentication no\n'
        printf 'UsePAM no\nStrictModes no\nPrintMotd no\nPrintLastLog no\n'
        printf 'AllowTcpForwarding local\nX11Forwarding no\nPermitTunnel no\n'
        printf 'ForceCommand %s/session\n' "$dir"
        if [ "$sftp" = 1 ]; then
            printf 'Subsystem sftp %s\n' "$sftp_server"
        fi
    } >"$dir/sshd_config"
}

pid_running() {
    [ -f "$dir/sshd.pid" ] && kill -0 "$(cat "$dir/sshd.pid")" 2>/dev/null
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
    if pid_running; then
        say "already running (pid $(cat "$dir/sshd.pid")): restarting it"
        cmd_stop
    fi
    [ -x "$sshd" ] || die "$sshd not found; install openssh-server"
    check_binfmt
    build_busybox
    (umask 077 && mkdir -p "$dir")
    chmod 700 "$dir"
    make_rootfs
    make_keys
    make_session "$sftp"
    if [ "$(id -u)" = 0 ] && [ ! -d /run/sshd ]; then
        mkdir -p /run/sshd && chmod 755 /run/sshd
    fi
    : >"$dir/sshd.log"
    tries=0
    while :; do
        tries=$((tries + 1))
        port=$(random_port)
        port_in_use "$port" && continue
        make_config "$port" "$sftp"
        # Without -D sshd returns once it listens, so the port is ready.
        if "$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log"; then
            break
        fi
        [ "$tries" -lt 5 ] || die "sshd did not start; see $dir/sshd.log"
    done
    n=0
    while [ ! -s "$dir/sshd.pid" ] && [ "$n" -lt 50 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    pid_running || die "sshd exited after start; see $dir/sshd.log"
    printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_ed25519_key.pub")" >"$dir/known_hosts"
    printf '%s\n' "$port" >"$dir/port"
    printf '%s\n' "$sftp" >"$dir/sftp"
    printf '%s\n' "$arch" >"$dir/arch"
    say "running: $(id -un)@127.0.0.1:$port ($arch, sftp $([ "$sftp" = 1 ] && echo on || echo off)), state in $dir"
}

cmd_stop() {
    if pid_running; then
        pid=$(cat "$dir/sshd.pid")
        kill "$pid"
        n=0
        while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 50 ]; do
            sleep 0.1
            n=$((n + 1))
        done
        say "stopped (pid $pid)"
    else
        say "not running"
    fi
    rm -f "$dir/sshd.pid"
}

cmd_env() {
    pid_running || die "not running; start it with: $0 start"
    port=$(cat "$dir/port")
    user=$(id -un)
    printf 'BOARD_HOST=127.0.0.1\nBOARD_PORT=%s\nBOARD_USER=%s\n' "$port" "$(q "$user")"
    printf 'BOARD_TARGET=%s\n' "$(q "$user@127.0.0.1:$port")"
    printf 'BOARD_KEY=%s\nBOARD_KNOWN_HOSTS=%s\n' "$(q "$dir/client_ed25519")" "$(q "$dir/known_hosts")"
    printf 'BOARD_ROOTFS=%s\nBOARD_SFTP=%s\nBOARD_DIR=%s\n' "$(q "$dir/rootfs")" "$(cat "$dir/sftp")" "$(q "$dir")"
    printf 'BOARD_ARCH=%s\n' "$(cat "$dir/arch" 2>/dev/null || echo riscv64)"
}

. "$top/tools/board/common.sh"
set_arch "$arch"
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac
case $command in
build) build_busybox ;;
start) cmd_start "$@" ;;
stop) cmd_stop ;;
status)
    if pid_running; then
        say "running on port $(cat "$dir/port"), pid $(cat "$dir/sshd.pid")"
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
