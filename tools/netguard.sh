#!/bin/sh
# Runs a command in a private network namespace where only loopback works, so
# nothing boardtrace's tests, demo or tools do can send a packet off this
# machine. The namespace also has a decoy interface, leak0, holding the
# default IPv4 and IPv6 routes: a packet that tries to leave (a broadcast to
# 255.255.255.255, a name lookup through the resolver, a connect to a real
# address) goes there instead of failing unseen, tcpdump records it, and the
# guard lists it and exits non-zero even when the command itself passed.
#
#   tools/netguard.sh COMMAND [ARG...]
#
# Needs root (unshare -n) and iproute2; without them it says so and runs the
# command unguarded. Without tcpdump there is no decoy: a packet that tries to
# leave fails as unreachable, unlisted. Exit status: the command's, or 99 when
# the command passed but a packet tried to leave.
set -u

say() { printf 'netguard: %s\n' "$*" >&2; }

if [ $# -eq 0 ]; then
    say "usage: tools/netguard.sh COMMAND [ARG...]"
    exit 2
fi

if [ "${BT_NETGUARD:-}" != inside ]; then
    if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1 || ! command -v ip >/dev/null 2>&1; then
        say "not root, or unshare/ip missing: running without the loopback-only guard"
        BT_NETGUARD=off exec "$@"
    fi
    if ! unshare -n true 2>/dev/null; then
        say "this machine refuses a private network namespace (unshare -n): running without the guard"
        BT_NETGUARD=off exec "$@"
    fi
    BT_NETGUARD=inside exec unshare -n "$0" "$@"
fi

# Inside the private namespace from here on.
export BT_NETGUARD=active
ip link set lo up || { say "cannot bring up loopback in the namespace"; exit 1; }

workdir=$(mktemp -d "${TMPDIR:-/tmp}/netguard.XXXXXX") || exit 1
trap 'rm -rf "$workdir"' EXIT
sniffer=""
if command -v tcpdump >/dev/null 2>&1; then
    # leak0's peer, leak1, has no address: what reaches it is dropped, after
    # the sniffer saw it. Fixed neighbour entries avoid ARP and neighbour
    # discovery, so the only frames on the pair are packets a program sent.
    decoy_mac=02:62:74:00:00:02
    ip link add leak0 address 02:62:74:00:00:01 type veth peer name leak1 address "$decoy_mac" &&
        ip link set leak0 addrgenmode none && ip link set leak1 addrgenmode none &&
        ip link set leak0 up && ip link set leak1 up &&
        ip addr add 192.0.2.1/24 dev leak0 &&
        ip -6 addr add 2001:db8::1/64 dev leak0 nodad &&
        ip neigh add 192.0.2.2 lladdr "$decoy_mac" dev leak0 nud permanent &&
        ip -6 neigh add 2001:db8::2 lladdr "$decoy_mac" dev leak0 nud permanent &&
        ip route add default via 192.0.2.2 dev leak0 &&
        ip -6 route add default via 2001:db8::2 dev leak0 || {
        say "cannot set up the decoy interface"
        exit 1
    }
    tcpdump -Z root -i leak1 -n -U -w "$workdir/leaked.pcap" >"$workdir/tcpdump.log" 2>&1 &
    sniffer=$!
    n=0
    while ! grep -q listening "$workdir/tcpdump.log" 2>/dev/null && [ $n -lt 50 ]; do
        sleep 0.1
        n=$((n + 1))
    done
else
    say "tcpdump is missing: packets that try to leave fail as unreachable but are not listed"
fi
say "running in a loopback-only network namespace"

"$@"
status=$?

[ -n "$sniffer" ] || exit "$status"

# The kernel's own multicast listener reports are not ours to count.
sleep 0.5
kill "$sniffer" 2>/dev/null
wait "$sniffer" 2>/dev/null
tcpdump -n -r "$workdir/leaked.pcap" 'not arp and not (ip6 and (ip6 proto 0 or icmp6))' \
    >"$workdir/leaked.txt" 2>/dev/null
leaked=$(grep -c . "$workdir/leaked.txt")
if [ "$leaked" != 0 ]; then
    say "FAILED: $leaked packet(s) tried to leave this machine:"
    sed 's/^/netguard:   /' "$workdir/leaked.txt" >&2
    [ "$status" = 0 ] && status=99
    exit "$status"
fi
say "no packet tried to leave loopback"
exit "$status"
