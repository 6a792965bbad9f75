#!/bin/sh
# Simulates a fresh Debian 12 machine to check that the README's commands work
# from a clean clone: debootstraps a minimal bookworm system (once) into
# DIR, clones the current commit into it, and runs the command (default
# tools/test.sh) inside it as root. Needs root, debootstrap and Debian's
# archive. Usage: tools/check-fresh-machine.sh DIR [command...]
set -eu

[ $# -ge 1 ] || { echo "usage: $0 DIR [command...]" >&2; exit 2; }
root=$1
shift
[ $# -gt 0 ] || set -- tools/test.sh
top=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'fresh-machine: %s\n' "$*"; }

if [ ! -x "$root/usr/bin/apt-get" ]; then
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap
    # From the archive this machine's own packages come from.
    mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(TARGET_OF)' 2>/dev/null |
        awk '$2 == "bookworm" && $3 == "deb" { print $1; exit }')
    [ -n "$mirror" ] || { say "no deb entry for bookworm in this machine's apt sources" >&2; exit 1; }
    say "debootstrapping Debian 12 (bookworm, minbase) into $root from $mirror"
    debootstrap --variant=minbase bookworm "$root" "$mirror"
fi

mounted=""
cleanup() {
    for m in $mounted; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM
# On a machine "/" is a mount point; in a plain chroot it is not, and the
# tests' private mount namespaces (unshare --mount makes "/" private) fail
# there. Mounted onto itself, the new root is one.
mount --bind "$root" "$root"
mounted="$root"
for fs in proc sys dev dev/pts; do
    mkdir -p "$root/$fs"
    mount --bind "/$fs" "$root/$fs"
    mounted="$root/$fs $mounted"
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Debian's installer writes /etc/hosts: localhost, and the machine's own name
# (127.0.1.1). debootstrap writes none, and a look-up of either name then
# leaves for the network.
[ -s "$root/etc/hosts" ] ||
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\nff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n\n' >"$root/etc/hosts"
grep -qw "$(hostname)" "$root/etc/hosts" || printf '127.0.1.1\t%s\n' "$(hostname)" >>"$root/etc/hosts"
# So are the certificate authorities this machine adds to the public ones (a
# proxy between it and the npm registry signs with one): a fresh machine
# elsewhere reaches the registry with the public ones alone.
extra_ca=""
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    extra_ca="NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt"
fi

# A fresh machine has git to clone with; nothing else is preinstalled here.
chroot "$root" sh -c 'command -v git >/dev/null || { apt-get update -qq && apt-get install -y -qq git ca-certificates >/dev/null; }'
[ -z "$extra_ca" ] || chroot "$root" update-ca-certificates >/dev/null
rm -rf "$root/root/boardtrace"
git clone -q "$top" "$root/root/boardtrace"
say "running '$*' in a fresh clone inside $root"
chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb $extra_ca sh -c 'cd /root/boardtrace && "$@"' sh "$@"
