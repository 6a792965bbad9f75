#!/bin/sh
# A full-system emulated board: qemu-system-riscv64 or qemu-system-aarch64
# (-machine virt) booting a real Linux kernel (tools/board/system/kernel.sh)
# into an initramfs with a static busybox, a static dropbear as its SSH
# server and the target's shared C and C++ libraries. Its network is qemu's
# user-mode network, restricted: the board reaches nothing, and only its SSH
# port is forwarded, to a port on 127.0.0.1. For what needs the board's own
# kernel: sampling, system tracing, a reboot, a lost network, dropbear.
# tools/board/board.sh (qemu user mode) stays the fast board for the rest.
#
# Usage: tools/board/system.sh [--dir DIR] [--arch A] COMMAND
#   start [--disk MIB] [--smp N] [--mem MIB]
#                     build what is missing, boot, wait for SSH (bounded by
#                     $BOARDTRACE_BOOT_TIMEOUT, default 300 s) and print the
#                     boot time; --disk adds a persistent disk of MIB MiB at
#                     /data on the board, kept across restarts; --smp: CPUs
#                     (default 2 on a host with 4 or more, else 1)
#   stop              power the board off (the disk and keys stay)
#   status            say whether it runs (exit 0) or not (exit 1)
#   env               print BOARD_* variables for the shell, like board.sh
#   ssh [COMMAND]     run COMMAND on the board (a shell without one)
#   put FILE PATH     copy FILE to PATH on the board, executable (the board
#                     has no SFTP or scp: it goes through cat)
#   reboot            reset the board (qemu monitor) and wait for SSH again
#   net off|on        cut or restore the board's network link
#   kill-session      kill every dropbear child serving a session, as when
#                     the board's SSH server loses one
#   fill-disk [PATH]  fill the file system holding PATH (default /tmp)
#   unfill-disk [PATH]
#                     remove what fill-disk wrote
#   purge             stop it and delete its state
#
# A is riscv64 (the default) or aarch64. DIR (default $BOARDTRACE_BOARD_DIR,
# else <repo>/build/.board/system-A) holds the board's state, private (0700).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tools/board
cache=${BOARDTRACE_BOARD_CACHE:-$top/build/.board}
arch=riscv64
dir=

say() { printf 'system-board: %s\n' "$*" >&2; }
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
    riscv64)
        triple=riscv64-linux-gnu
        qemu="qemu-system-riscv64"
        console=ttyS0
        loader=ld-linux-riscv64-lp64d.so.1
        ;;
    aarch64)
        triple=aarch64-linux-gnu
        qemu="qemu-system-aarch64"
        console=ttyAMA0
        loader=ld-linux-aarch64.so.1
        ;;
    *) die "--arch $1: expected riscv64 or aarch64" ;;
    esac
    arch=$1
}

running() {
    [ -f "$dir/qemu.pid" ] && kill -0 "$(cat "$dir/qemu.pid")" 2>/dev/null
}

# One line to the qemu monitor (HMP) on its private unix socket.
monitor() {
    python3 - "$dir/monitor.sock" "$*" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
def until_prompt():
    data = b""
    while not data.endswith(b"(qemu) "):
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data
until_prompt()
s.sendall(sys.argv[2].encode() + b"\n")
out = until_prompt().decode(errors="replace")
lines = [l for l in out.replace("\r", "").split("\n")[1:] if l and l != "(qemu) "]
print("\n".join(lines))
PY
}

ssh_board() {
    port=$(cat "$dir/port")
    ssh -q -o BatchMode=yes -o ConnectTimeout=20 -o ServerAliveInterval=5 \
        -o ServerAliveCountMax=3 -o StrictHostKeyChecking=yes \
        -o UserKnownHostsFile="$dir/known_hosts" -o GlobalKnownHostsFile=/dev/null \
        -i "$dir/client_ed25519" -p "$port" root@127.0.0.1 "$@"
}

# The initramfs: busybox, dropbear, the target's shared libraries (so the
# board runs dynamically linked programs as a real one does), keys, and the
# board's /etc from tools/board/system/rootfs.
make_initramfs() {
    kernel=$1
    dropbear=$2
    busybox=$3
    r=$dir/initramfs
    rm -rf "$r"
    mkdir -p "$r/bin" "$r/sbin" "$r/lib" "$r/etc/dropbear" "$r/root/.ssh"
    cp -R "$here/system/rootfs/." "$r/"
    cp "$busybox" "$r/bin/busybox"
    ln -s bin/busybox "$r/init"
    ln -s busybox "$r/bin/sh"
    cp "$dropbear/dropbear" "$r/sbin/dropbear"
    cp "$dropbear/dropbearkey" "$r/bin/dropbearkey"
    libs=/usr/$triple/lib
    for l in "$loader" libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 \
        libgcc_s.so.1 libstdc++.so.6 libatomic.so.1; do
        [ -e "$libs/$l" ] || die "$libs/$l missing; install Debian's libc6-$triple-cross family (tools/setup.sh does)"
        cp -L "$libs/$l" "$r/lib/$l"
    done
    "$triple-strip" --strip-unneeded "$r"/lib/lib*.so* 2>/dev/null || true
    if [ -d "$kernel/modules" ]; then
        mkdir -p "$r/lib/modules"
        cp "$kernel"/modules/*.ko "$r/lib/modules/"
        cp "$kernel/modules.order" "$r/etc/modules"
    fi
    printf 'boardtrace-%s\n' "$arch" >"$r/etc/hostname"
    printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"
    printf 'root:*:19000:0:99999:7:::\n' >"$r/etc/shadow"
    printf 'root:x:0:\ntty:x:5:\n' >"$r/etc/group"
    printf 'passwd: files\ngroup: files\nshadow: files\n' >"$r/etc/nsswitch.conf"
    cp "$dir/host_key" "$r/etc/dropbear/host_key"
    cp "$dir/client_ed25519.pub" "$r/root/.ssh/authorized_keys"
    chmod 700 "$r/root" "$r/root/.ssh"
    chmod 600 "$r/root/.ssh/authorized_keys" "$r/etc/dropbear/host_key" "$r/etc/shadow"
    (cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$dir/initramfs.cpio"
    rm -rf "$r"
}

# The host key is made by the board's own dropbearkey (through qemu user
# mode), so known_hosts is written before the board boots.
make_keys() {
    dropbear=$1
    if [ ! -f "$dir/host_key" ]; then
        "$dropbear/dropbearkey" -t ed25519 -f "$dir/host_key" >/dev/null 2>&1 ||
            die "dropbearkey failed (does binfmt_misc run $arch programs? tools/setup.sh registers qemu)"
    fi
    "$dropbear/dropbearkey" -y -f "$dir/host_key" 2>/dev/null | grep '^ssh-' | cut -d' ' -f1,2 >"$dir/host_key.pub"
    [ -s "$dir/host_key.pub" ] || die "could not read the public part of $dir/host_key"
    [ -f "$dir/client_ed25519" ] ||
        ssh-keygen -q -t ed25519 -N '' -C boardtrace-client -f "$dir/client_ed25519"
}

ready_count() {
    grep -c '^boardtrace-board: ready' "$dir/console.log" 2>/dev/null || true
}

# Waits for the console's n-th "ready" line, then for an SSH login; prints
# the seconds it took since $1 (date +%s.%N).
wait_ready() {
    since=$1
    want=$2
    limit=${BOARDTRACE_BOOT_TIMEOUT:-300}
    while [ "$(ready_count)" -lt "$want" ]; do
        running || {
            tail -n 30 "$dir/console.log" >&2
            die "qemu exited while the board booted; console above, full log $dir/console.log"
        }
        if grep -q '^boardtrace-board: failed' "$dir/console.log"; then
            tail -n 30 "$dir/console.log" >&2
            die "the board failed to come up; console above, full log $dir/console.log"
        fi
        if [ "$(echo "$(date +%s.%N) - $since > $limit" | bc)" = 1 ]; then
            tail -n 30 "$dir/console.log" >&2
            die "the board was not ready within $limit s (BOARDTRACE_BOOT_TIMEOUT); console above"
        fi
        sleep 0.2
    done
    ssh_board true || die "the board says it is ready but SSH login fails; see $dir/console.log"
    echo "$(date +%s.%N) - $since" | bc | sed 's/^\./0./' | cut -c1-5
}

cmd_start() {
    disk=
    # Two CPUs where the host has room for them; on a smaller host a
    # descheduled vCPU would lose the guest's timer interrupts unevenly.
    smp=1
    [ "$(nproc 2>/dev/null || echo 1)" -lt 4 ] || smp=2
    mem=
    while [ $# -gt 0 ]; do
        case $1 in
        --disk) disk=${2:?--disk needs a size in MiB} && shift ;;
        --smp) smp=${2:?--smp needs a count} && shift ;;
        --mem) mem=${2:?--mem needs a size in MiB} && shift ;;
        *) die "start: unknown option '$1'" ;;
        esac
        shift
    done
    if running; then
        say "already running: restarting it"
        cmd_stop
    fi
    command -v "$qemu" >/dev/null ||
        die "$qemu not found; tools/setup.sh --system installs qemu-system-misc and qemu-system-arm"
    (umask 077 && mkdir -p "$dir")
    chmod 700 "$dir"
    kernel=$("$here/system/kernel.sh" "$arch")
    dropbear=$("$here/system/dropbear.sh" "$arch")
    "$here/board.sh" build --arch "$arch"
    busybox=$cache/busybox-$arch/busybox
    make_keys "$dropbear"
    make_initramfs "$kernel" "$dropbear" "$busybox"
    case $arch in
    riscv64)
        # qemu's bundled OpenSBI is the firmware.
        set -- -machine virt -bios default -kernel "$kernel/Image" \
            -device virtio-net-device,netdev=net0 -device virtio-rng-device
        [ -n "$mem" ] || mem=512
        ;;
    aarch64)
        set -- -machine virt -cpu cortex-a72 -kernel "$kernel/vmlinuz" \
            -device virtio-net-device,netdev=net0 -device virtio-rng-device
        [ -n "$mem" ] || mem=768
        ;;
    esac
    if [ -n "$disk" ]; then
        if [ ! -f "$dir/disk.img" ]; then
            truncate -s "${disk}M" "$dir/disk.img"
            chmod 600 "$dir/disk.img"
        fi
        set -- "$@" -drive "file=$dir/disk.img,format=raw,if=none,id=disk0" -device virtio-blk-device,drive=disk0
    fi
    rm -f "$dir/monitor.sock" "$dir/qemu.pid"
    : >"$dir/console.log"
    chmod 600 "$dir/console.log"
    tries=0
    start=$(date +%s.%N)
    while :; do
        tries=$((tries + 1))
        port=$(random_port)
        port_in_use "$port" && continue
        # restrict=on: the board reaches neither the host nor anything
        # beyond; the forwarded SSH port is the only way in.
        if "$qemu" "$@" -nodefaults -display none -smp "$smp" -m "$mem" \
            -initrd "$dir/initramfs.cpio" \
            -append "console=$console" \
            -netdev "user,id=net0,restrict=on,ipv6=off,hostfwd=tcp:127.0.0.1:$port-:22" \
            -serial "file:$dir/console.log" \
            -monitor "unix:$dir/monitor.sock,server=on,wait=off" \
            -pidfile "$dir/qemu.pid" -daemonize 2>"$dir/qemu.log"; then
            break
        fi
        [ "$tries" -lt 5 ] || die "$qemu did not start: $(cat "$dir/qemu.log")"
    done
    printf '[127.0.0.1]:%s %s\n' "$port" "$(cat "$dir/host_key.pub")" >"$dir/known_hosts"
    printf '%s\n' "$port" >"$dir/port"
    printf '%s\n' "$arch" >"$dir/arch"
    secs=$(wait_ready "$start" 1)
    printf '%s\n' "$secs" >"$dir/boot-seconds"
    say "running: root@127.0.0.1:$port ($arch, $(ssh_board uname -r), dropbear, no sftp), ready in $secs s, state in $dir"
}

cmd_stop() {
    if running; then
        pid=$(cat "$dir/qemu.pid")
        monitor quit >/dev/null 2>&1 || kill "$pid"
        n=0
        while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 50 ]; do
            sleep 0.1
            n=$((n + 1))
        done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
        say "stopped (pid $pid)"
    else
        say "not running"
    fi
    rm -f "$dir/qemu.pid" "$dir/monitor.sock"
}

cmd_env() {
    running || die "not running; start it with: $0 --arch $arch start"
    port=$(cat "$dir/port")
    printf 'BOARD_HOST=127.0.0.1\nBOARD_PORT=%s\nBOARD_USER=root\n' "$port"
    printf 'BOARD_TARGET=%s\n' "$(q "root@127.0.0.1:$port")"
    printf 'BOARD_KEY=%s\nBOARD_KNOWN_HOSTS=%s\n' "$(q "$dir/client_ed25519")" "$(q "$dir/known_hosts")"
    printf 'BOARD_SFTP=0\nBOARD_DIR=%s\nBOARD_ARCH=%s\nBOARD_KIND=system\n' "$(q "$dir")" "$arch"
    printf 'BOARD_BOOT_SECONDS=%s\n' "$(cat "$dir/boot-seconds" 2>/dev/null || echo 0)"
}

cmd_reboot() {
    running || die "not running"
    n=$(ready_count)
    start=$(date +%s.%N)
    monitor system_reset >/dev/null
    secs=$(wait_ready "$start" $((n + 1)))
    say "rebooted, ready again in $secs s"
}

cmd_net() {
    running || die "not running"
    case ${1-} in
    off | on) monitor "set_link net0 $1" >/dev/null ;;
    *) die "net: expected off or on" ;;
    esac
    say "network $1"
}

# Kills each dropbear that serves a session: not the listener (its pid file)
# and not the one serving this command.
cmd_kill_session() {
    running || die "not running"
    ssh_board 'l=$(cat /run/dropbear.pid); n=0
        for p in $(pidof dropbear); do
            if [ "$p" != "$l" ] && [ "$p" != "$PPID" ]; then kill -9 "$p" && n=$((n + 1)); fi
        done
        echo "killed $n session(s)"' >&2
}

cmd_put() {
    running || die "not running"
    [ $# = 2 ] || die "put: expected FILE PATH"
    [ -f "$1" ] || die "put: $1 is not a file"
    ssh_board "p=$(q "$2"); cat >\"\$p.part\" && chmod 755 \"\$p.part\" && mv \"\$p.part\" \"\$p\"" <"$1" ||
        die "put: copying $1 to the board's $2 failed"
}

cmd_fill() {
    running || die "not running"
    path=${1:-/tmp}
    case $path in /*) ;; *) die "fill-disk: PATH must be absolute" ;; esac
    # The path goes into a remote shell: quoted.
    ssh_board "p=$(q "$path"); dd if=/dev/zero of=\"\$p/.boardtrace-fill\" bs=65536 2>/dev/null; df -k \"\$p\" | tail -n 1" >&2
}

cmd_unfill() {
    running || die "not running"
    path=${1:-/tmp}
    ssh_board "rm -f $(q "$path")/.boardtrace-fill"
}

. "$top/tools/board/common.sh"
set_arch "$arch"
[ -n "$dir" ] || dir=${BOARDTRACE_BOARD_DIR:-$cache/system-$arch}
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac
case $command in
start) cmd_start "$@" ;;
stop) cmd_stop ;;
status)
    if running; then
        say "running on port $(cat "$dir/port"), pid $(cat "$dir/qemu.pid")"
    else
        say "not running"
        exit 1
    fi
    ;;
env) cmd_env ;;
ssh) ssh_board "$@" ;;
put) cmd_put "$@" ;;
reboot) cmd_reboot ;;
net) cmd_net "$@" ;;
kill-session) cmd_kill_session ;;
fill-disk) cmd_fill "$@" ;;
unfill-disk) cmd_unfill "$@" ;;
purge)
    cmd_stop
    rm -rf "$dir"
    ;;
*) usage ;;
esac
