#!/bin/sh
# The Linux kernels of the full-system boards, cached outside the clone.
#
# Usage: tools/board/system/kernel.sh [--check] ARCH
#   riscv64   cross-builds Debian's linux-source-6.1 with riscv64.config
#             (beside this script) on top of allnoconfig
#   aarch64   Debian's own arm64 kernel package (apt-get download, multiarch)
#             and the modules the board loads from its initramfs
# Prints the folder that holds the kernel: `Image` (riscv64) or `vmlinuz`,
# `modules/` and `modules.order` (aarch64), and `version`. Builds or
# downloads it only when the cache lacks it. With --check, builds nothing:
# prints the folder and exits 0 if cached, else says why and exits 1.
#
# The cache is $BOARDTRACE_KERNEL_CACHE (default ~/.cache/boardtrace/kernel),
# one folder per architecture, source version and configuration, so a change
# to either builds a new kernel and an unchanged one is never rebuilt.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${BOARDTRACE_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boardtrace/kernel}
jobs=${BOARDTRACE_JOBS:-$(nproc 2>/dev/null || echo 2)}
# The virtio drivers of the aarch64 board, built as modules in Debian's
# kernel, with their dependencies.
# ext4 finds its checksum (crc32c) through the crypto API, not a symbol.
aarch64_modules="virtio_mmio virtio_net virtio_blk virtio_rng crc32c_generic ext4"

say() { printf 'kernel: %s\n' "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}

check=0
if [ "${1-}" = --check ]; then
    check=1
    shift
fi
[ $# = 1 ] || {
    sed -n '/^# Usage/,/^# `modules.order`/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
arch=$1

# Takes the cache lock so that boards started together build once.
lock() {
    mkdir -p "$cache"
    if command -v flock >/dev/null; then
        exec 9>"$cache/.lock"
        flock 9
    fi
}

# Files the kernel folder into the cache in one rename, so an interrupted
# build never leaves a half kernel that looks cached.
commit() {
    rm -rf "$out"
    mv "$tmp" "$out"
    say "cached: $out"
}

riscv64() {
    src_tar=/usr/src/linux-source-6.1.tar.xz
    version=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || version=
    config=$here/riscv64.config
    hash=$(cat "$config" | sha256sum | cut -c1-12)
    if [ -z "$version" ]; then
        # Without the source package the newest cached kernel of this
        # configuration still serves.
        for d in "$cache"/riscv64-*-"$hash"; do
            [ -f "$d/Image" ] && out=$d
        done
        if [ -n "${out-}" ]; then
            printf '%s\n' "$out"
            return 0
        fi
        [ "$check" = 1 ] && die "no cached riscv64 kernel and no linux-source-6.1 to build one"
        die "linux-source-6.1 is not installed (tools/setup.sh --system installs it)"
    fi
    out=$cache/riscv64-$version-$hash
    if [ -f "$out/Image" ]; then
        printf '%s\n' "$out"
        return 0
    fi
    [ "$check" = 0 ] || die "no cached riscv64 kernel for linux-source-6.1 $version and riscv64.config $hash"
    lock
    if [ -f "$out/Image" ]; then
        printf '%s\n' "$out"
        return 0
    fi
    command -v riscv64-linux-gnu-gcc >/dev/null || die "riscv64-linux-gnu-gcc not found; install gcc-riscv64-linux-gnu"
    for t in flex bison bc; do
        command -v $t >/dev/null || die "$t not found; tools/setup.sh --system installs the kernel build tools"
    done
    tmp=$cache/.riscv64-build.$$
    rm -rf "$tmp"
    mkdir -p "$tmp/src" "$tmp/obj"
    log=$cache/riscv64-build.log
    say "building the riscv64 kernel from linux-source-6.1 $version with $config ($jobs jobs; log: $log)"
    start=$(date +%s)
    tar -xJf "$src_tar" -C "$tmp/src" --strip-components=1
    k() { make -C "$tmp/src" O="$tmp/obj" ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu- "$@"; }
    # The build is long and its output goes to the log: a line every minute
    # says it is still going and how far it got (on stderr, so that no sleep
    # holds the caller's capture of stdout open).
    # The ticker lets go of the cache lock (fd 9) first: its sleep outlives
    # the kill by up to a minute and must not hold up the next set-up.
    (
        exec 9>&-
        while sleep 60 && kill -0 $$ 2>/dev/null; do
            say "still building the riscv64 kernel: $(grep -c '^  CC ' "$log" 2>/dev/null) files compiled, $(($(date +%s) - start)) s so far"
        done
    ) >&2 &
    ticker=$!
    if ! {
        k KCONFIG_ALLCONFIG="$config" allnoconfig && k -j"$jobs" Image
    } >"$log" 2>&1; then
        kill "$ticker" 2>/dev/null
        tail -n 20 "$log" >&2
        rm -rf "$tmp"
        die "the riscv64 kernel build failed; see $log"
    fi
    kill "$ticker" 2>/dev/null
    # A line of the fragment that Kconfig dropped (a missing dependency)
    # would silently give a board without the feature.
    dropped=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$config" | while read -r l; do
        grep -qx "$l" "$tmp/obj/.config" || printf ' %s' "$l"
    done)
    if [ -n "$dropped" ]; then
        rm -rf "$tmp"
        die "riscv64.config lines that Kconfig did not keep:$dropped"
    fi
    secs=$(($(date +%s) - start))
    mkdir "$tmp/kernel"
    cp "$tmp/obj/arch/riscv/boot/Image" "$tmp/obj/.config" "$tmp/obj/System.map" "$tmp/kernel/"
    printf 'linux-source-6.1 %s, riscv64.config %s, built in %s s\n' "$version" "$hash" "$secs" >"$tmp/kernel/version"
    rm -rf "$tmp/src" "$tmp/obj"
    tmp=$tmp/kernel
    commit
    rmdir "$cache/.riscv64-build.$$"
    say "riscv64 kernel built in $secs s"
    printf '%s\n' "$out"
}

aarch64() {
    # The package the arm64 kernel metapackage points at, e.g.
    # linux-image-6.1.0-56-arm64.
    pkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\):arm64$/\1/p' | head -n 1) || pkg=
    if [ -z "$pkg" ]; then
        for d in "$cache"/aarch64-*; do
            [ -f "$d/vmlinuz" ] && out=$d
        done
        if [ -n "${out-}" ]; then
            printf '%s\n' "$out"
            return 0
        fi
        [ "$check" = 1 ] && die "no cached aarch64 kernel and apt knows no arm64 kernel package"
        [ "$(id -u)" = 0 ] || die "apt knows no arm64 packages; as root run: dpkg --add-architecture arm64 && apt-get update"
        say "adding the arm64 architecture to dpkg for Debian's arm64 kernel package"
        dpkg --add-architecture arm64
        apt-get update -qq
        pkg=$(apt-cache depends linux-image-arm64:arm64 |
            sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\):arm64$/\1/p' | head -n 1)
        [ -n "$pkg" ] || die "apt still knows no linux-image-arm64:arm64"
    fi
    version=$(apt-cache show "$pkg:arm64" | sed -n 's/^Version: //p' | head -n 1)
    out=$cache/aarch64-$pkg-$version
    if [ -f "$out/vmlinuz" ]; then
        printf '%s\n' "$out"
        return 0
    fi
    [ "$check" = 0 ] || die "no cached aarch64 kernel for $pkg $version"
    lock
    if [ -f "$out/vmlinuz" ]; then
        printf '%s\n' "$out"
        return 0
    fi
    tmp=$cache/.aarch64-get.$$
    rm -rf "$tmp"
    mkdir -p "$tmp/deb" "$tmp/kernel/modules"
    say "downloading Debian's $pkg $version (arm64)"
    (cd "$tmp/deb" && apt-get download -qq "$pkg:arm64=$version") 2>&1 | grep -v 'unsandboxed as root' >&2 || true
    deb=$(ls "$tmp"/deb/*.deb 2>/dev/null | head -n 1)
    [ -n "$deb" ] || die "apt-get download $pkg:arm64 gave no package"
    dpkg-deb -x "$deb" "$tmp/x"
    kver=${pkg#linux-image-}
    cp "$tmp/x/boot/vmlinuz-$kver" "$tmp/kernel/vmlinuz"
    cp "$tmp/x/boot/config-$kver" "$tmp/kernel/config"
    cp "$tmp/x/boot/System.map-$kver" "$tmp/kernel/System.map"
    mods=$tmp/x/lib/modules/$kver
    # The package has no modules.dep (depmod writes it at install time):
    # each module names its dependencies in its .modinfo section, and the
    # board loads them depth first, dependencies before the module.
    : >"$tmp/kernel/modules.order"
    module_file() {
        dash=$(printf '%s' "$1" | tr _ -)
        f=$(find "$mods/kernel" \( -name "$1.ko" -o -name "$dash.ko" \) | head -n 1)
        [ -n "$f" ] || die "$pkg has no module $1"
        printf '%s\n' "$f"
    }
    add_module() {
        f=$(module_file "$1")
        for d in $(strings -a "$f" | sed -n 's/^depends=//p' | tr , ' '); do
            add_module "$d"
        done
        f=$(module_file "$1")
        file=$(basename "$f")
        grep -qx "$file" "$tmp/kernel/modules.order" && return 0
        cp "$f" "$tmp/kernel/modules/$file"
        printf '%s\n' "$file" >>"$tmp/kernel/modules.order"
    }
    for m in $aarch64_modules; do
        add_module "$m"
    done
    printf '%s %s (Debian arm64), modules: %s\n' "$pkg" "$version" "$(tr '\n' ' ' <"$tmp/kernel/modules.order")" >"$tmp/kernel/version"
    rm -rf "$tmp/x" "$tmp/deb"
    tmp=$tmp/kernel
    commit
    rmdir "$cache/.aarch64-get.$$"
    printf '%s\n' "$out"
}

case $arch in
riscv64) riscv64 ;;
aarch64) aarch64 ;;
*) die "ARCH $arch: expected riscv64 or aarch64" ;;
esac
