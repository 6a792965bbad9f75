#!/bin/sh
# Unpacks Debian's source packages of the libraries boardtrace compiles for its
# target boards (lz4, zstd, zlib, cmocka; busybox for the emulated boards, dropbear
# for the full-system ones) into .deps/, the folder the CMake build looks in
# by default (BT_DEPS_SOURCE_DIR). Adds a deb-src entry for Debian's archive
# if none exists. Idempotent.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
dest=${BT_DEPS_SOURCE_DIR:-$top/.deps}
packages=${*:-lz4 libzstd zlib cmocka busybox dropbear}

say() { printf 'fetch-deps: %s\n' "$*"; }

have_source() {
    # A package is present when a folder named after it (with version) exists.
    for d in "$dest/$1"-*/; do
        [ -d "$d" ] && return 0
    done
    return 1
}

missing=""
for p in $packages; do
    have_source "$p" || missing="$missing $p"
done
if [ -z "$missing" ]; then
    say "sources already in $dest:$(for p in $packages; do printf ' %s' "$p"; done)"
    exit 0
fi

if ! command -v dpkg-source >/dev/null 2>&1; then
    say "dpkg-source is missing: install Debian's dpkg-dev (tools/setup.sh does)" >&2
    exit 1
fi

list=/etc/apt/sources.list.d/boardtrace-src.sources
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    [ "$(id -u)" = 0 ] || { say "no deb-src entry and not root: add one or run as root" >&2; exit 1; }
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    # The archive is the one this machine's own binary packages come from
    # (its apt sources): boardtrace names no archive of its own.
    uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(TARGET_OF)' 2>/dev/null |
        awk -v s="$suite" '$2 == s && $3 == "deb" { print $1; exit }')
    [ -n "$uri" ] || { say "no deb entry for Debian $suite in this machine's apt sources to take the archive's address from" >&2; exit 1; }
    say "adding a deb-src entry for Debian $suite from $uri ($list)"
    cat >"$list" <<SRC
Types: deb-src
URIs: $uri
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt-get update -qq
fi

mkdir -p "$dest"
cd "$dest"
for p in $missing; do
    say "unpacking Debian's source package $p into $dest"
    if ! apt-get source -qq "$p" >"$dest/.apt-source-$p.log" 2>&1; then
        # The package lists may predate the deb-src entry; refresh once.
        [ "$(id -u)" = 0 ] && apt-get update -qq
        apt-get source -qq "$p" >"$dest/.apt-source-$p.log" 2>&1 || {
            say "apt-get source $p failed; see $dest/.apt-source-$p.log" >&2
            exit 1
        }
    fi
    have_source "$p" || { say "apt-get source $p did not unpack a $p-* folder" >&2; exit 1; }
done
say "done"
