#!/bin/sh
# The SSH server of the full-system boards: a static dropbear (server and
# dropbearkey) cross-built from Debian's source package, the server that
# Buildroot and Yocto images ship. No SFTP server, no password logins, no
# X11: a key-only board whose file transfers go through exec channels.
#
# Usage: tools/board/system/dropbear.sh ARCH   (riscv64 or aarch64)
# Prints the folder holding `dropbear` and `dropbearkey`; builds them only
# when $BOARDTRACE_BOARD_CACHE (default <repo>/build/.board) lacks them.
set -eu

top=$(cd "$(dirname "$0")/../../.." && pwd)
cache=${BOARDTRACE_BOARD_CACHE:-$top/build/.board}
jobs=${BOARDTRACE_JOBS:-$(nproc 2>/dev/null || echo 2)}

say() { printf 'dropbear: %s\n' "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}

[ $# = 1 ] || {
    sed -n '/^# Usage/,/^# when/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
case $1 in
riscv64) triple=riscv64-linux-gnu machine=f300 ;;
aarch64) triple=aarch64-linux-gnu machine=b700 ;;
*) die "ARCH $1: expected riscv64 or aarch64" ;;
esac
out=$cache/dropbear-$1
if [ -x "$out/dropbear" ] && [ -x "$out/dropbearkey" ]; then
    printf '%s\n' "$out"
    exit 0
fi

mkdir -p "$cache"
if command -v flock >/dev/null; then
    exec 9>"$cache/.dropbear.lock"
    flock 9
    if [ -x "$out/dropbear" ] && [ -x "$out/dropbearkey" ]; then
        printf '%s\n' "$out"
        exit 0
    fi
fi
src=
for d in "${BT_DEPS_SOURCE_DIR:-$top/.deps}"/dropbear-*/; do
    [ -f "$d/configure" ] && src=${d%/}
done
[ -n "$src" ] || die "no dropbear source in ${BT_DEPS_SOURCE_DIR:-$top/.deps}/dropbear-*; run tools/fetch-deps.sh dropbear"
command -v "$triple-gcc" >/dev/null || die "$triple-gcc not found; install Debian's gcc-$triple"

build=$out.build
rm -rf "$build" "$out"
mkdir -p "$build"
log=$build/build.log
say "building static $1 dropbear from $src (log: $log)"
# The board's options: keys only, no SFTP server, no X11.
cat >"$build/localoptions.h" <<'EOF'
#define DROPBEAR_SVR_PASSWORD_AUTH 0
#define DROPBEAR_SFTPSERVER 0
#define DROPBEAR_X11FWD 0
#define DEFAULT_PATH "/usr/bin:/usr/sbin:/bin:/sbin"
EOF
if ! (
    cd "$build" &&
        "$src/configure" --host="$triple" --enable-static --disable-zlib \
            --disable-pam --disable-lastlog --disable-utmp --disable-utmpx \
            --disable-wtmp --disable-wtmpx --disable-pututline \
            --disable-pututxline &&
        make -j"$jobs" PROGRAMS="dropbear dropbearkey" STATIC=1 &&
        "$triple-strip" dropbear dropbearkey
) >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "dropbear build failed; see $log"
fi
for p in dropbear dropbearkey; do
    m=$(LC_ALL=C od -An -tx1 -j18 -N2 "$build/$p" | tr -d ' \n')
    [ "$m" = "$machine" ] || die "built $build/$p is not an $1 ELF (e_machine bytes $m)"
done
mkdir -p "$out"
cp "$build/dropbear" "$build/dropbearkey" "$out/"
say "dropbear ready: $out"
printf '%s\n' "$out"
