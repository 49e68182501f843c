#!/usr/bin/env bash
# IPv4/TCP checksum offload ([portN] checksum_offload) on DPDK's net_tap,
# whose PMD offers receive and transmit IPv4+TCP checksum offload (and does
# it in software). The tap interface appears in the daemon's namespace
# (lfe-csum*-srv): its kernel side gets 10.99.NET.2 and every client runs
# there, so the kernel's TCP checks every checksum ldapfe's port puts out.
#   mode auto (default): the port says rx and tx offload (startup log and
#     `ldapfectl status`), ldapwhoami/ldapsearch work, i.e. the kernel
#     accepts our segments whose checksums the port finished from the
#     pseudo-header sums we wrote;
#   mode off: checksum_offload = off, the same through the software path.
# Both: a bare ACK to no connection is answered with a RST; the same ACK
# with its TCP checksum broken, or its IPv4 header checksum broken, is not,
# and is counted in drop_tcp_csum / drop_ip_csum.
# Frames are crafted with an AF_PACKET socket on the tap (python3, no scapy).
source "$(dirname "$0")/lib.sh"
mode=${1:-auto}
# Debian's librte-net-tap23 (libdpdk-dev depends on it) and a tun device.
compgen -G "/usr/lib/*/dpdk/pmds-*/librte_net_tap.so*" >/dev/null && [[ -c /dev/net/tun ]] ||
	{ echo "SKIP: no net_tap PMD or /dev/net/tun"; exit 77; }
if [[ $mode == off ]]; then lfe_init csumoff 44; else lfe_init csum 43; fi
lfe_make_store
TAP=lfet${LFE_NET}$$
TAP=${TAP:0:15}
KADDR=10.99.$LFE_NET.2   # the kernel's end of the tap
srv() { ip netns exec "$LFE_SRV" "$@"; }
ctl() { "$LFE_CTL" --prefix "$LFE_PREFIX" "$@"; }

conf=$(lfe_conf 1)
sed -i "s|^dev = .*|dev = net_tap0,iface=$TAP|" "$conf"
[[ $mode == off ]] && sed -i "/^dev = /a checksum_offload = off" "$conf"
# The one-level search below runs to the end, however slow the machine.
sed -i "/^\[ldap\]/a request_slice_us = 1000000" "$conf"

# The tap exists only once the daemon has started its port: ping after.
LFE_NOPING=1 lfe_start "$conf" 0
srv ip addr add "$KADDR/24" dev "$TAP"
srv ip link set "$TAP" up
for ((i = 0; i < 20; i++)); do
	srv ping -c 1 -W 1 "$LFE_SADDR" >/dev/null 2>&1 && break
done
srv ping -c 1 -W 1 "$LFE_SADDR" >/dev/null 2>&1 || lfe_fail "ldapfe does not answer ping on the tap"

# What the port got, in the log and in the status.
if [[ $mode == off ]]; then want="software"; else want="offload"; fi
grep -q "port0 checksums: rx $want, tx $want" "$LFE_LOG" ||
	lfe_fail "startup log: $(grep 'checksums' "$LFE_LOG" || echo 'no checksums line')"
lfe_log "ok: startup log says rx $want, tx $want"
st=$(ctl status)
grep -q "^port0: .* checksums rx $want tx $want" <<<"$st" || lfe_fail "status port line: $st"
js=$(ctl status --json)
lfe_eq "status --json checksum_offload" \
	"$("$PY" -c 'import json,sys; c=json.loads(sys.argv[1])["ports"][0]["checksum_offload"]; print(c["rx"], c["tx"])' "$js")" \
	"$([[ $mode == off ]] && echo "False False" || echo "True True")"

# Real clients through the kernel's TCP: every segment we send must carry
# right checksums or the kernel drops it and the client times out.
H=ldap://$LFE_SADDR
for ((i = 0; i < 5; i++)); do
	got=$(srv timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn alice)" -w alice-pw 2>&1) ||
		lfe_fail "ldapwhoami $i: $got"
	[[ $got == "dn:$(lfe_dn alice)" ]] || lfe_fail "ldapwhoami $i: $got"
done
lfe_log "ok: 5 x ldapwhoami"
dn=$(srv timeout 10 ldapsearch -x -LLL -H "$H" -b "$LFE_SUFFIX" -s sub "(uid=carol)" dn mail | sed -n 's/^dn: //p')
lfe_eq "ldapsearch uid=carol" "$dn" "$(lfe_dn carol)"
# Responses over many full-sized segments: a one-level search of 300
# entries, of which the daemon sends what fits one search's output bound
# (158 here, ~16 KB: a dozen full-sized segments).
lfe_make_users 300
n=$(srv timeout 30 ldapsearch -x -LLL -H "$H" -D "$(lfe_dn bob)" -w bob-pw -b "ou=people,$LFE_SUFFIX" \
	-s one "(objectClass=inetOrgPerson)" cn sn uid 2>/dev/null | grep -c '^dn: ' || true)
((n >= 100)) || lfe_fail "one-level search returned $n entries"
lfe_log "ok: one-level search returned $n entries"

# Counters absent from telemetry are 0.
stat_of() {
	lfe_telemetry /ldapfe/stats | "$PY" -c 'import json,sys; t=json.load(sys.stdin)["/ldapfe/stats"]["total"]; print(" ".join(str(t.get(k, 0)) for k in sys.argv[1:]))' "$@"
}
# Counters are published every few ms: wait (bounded) until they settle.
settled() {
	local a b i
	a=$(stat_of "$@")
	for ((i = 0; i < 20; i++)); do
		sleep 0.1
		b=$(stat_of "$@")
		[[ $a == "$b" ]] && break
		a=$b
	done
	echo "$a"
}

# probe BREAK: send a bare ACK from the kernel's end to port 389 (no such
# connection) with BREAK = none | tcp | ip checksum broken; print 1 when
# a RST for it came back within 1 s, else 0.
probe() {
	srv timeout 10 "$PY" - "$TAP" "$KADDR" "$LFE_SADDR" "$1" <<'EOF'
import os, random, socket, struct, sys, time
ifname, src, dst, brk = sys.argv[1:5]

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

sa, da = socket.inet_aton(src), socket.inet_aton(dst)
# The daemon's MAC from the kernel's neighbour table (ping filled it).
mac = None
for line in os.popen("ip neigh show " + dst).read().split("\n"):
    f = line.split()
    if "lladdr" in f:
        mac = bytes.fromhex(f[f.index("lladdr") + 1].replace(":", ""))
if mac is None:
    sys.exit("no neighbour entry for " + dst)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind((ifname, 0))
ours = s.getsockname()[4]
sport, ack = random.randint(20000, 30000), random.getrandbits(32)
tcp = struct.pack("!HHIIBBHHH", sport, 389, random.getrandbits(32), ack, 5 << 4, 0x10, 1024, 0, 0)
c = csum(sa + da + struct.pack("!BBH", 0, 6, len(tcp)) + tcp)
if brk == "tcp":
    c ^= 0x0101
tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), random.getrandbits(16), 0x4000, 64, 6, 0, sa, da)
c = csum(ip)
if brk == "ip":
    c ^= 0x0101
ip = ip[:10] + struct.pack("!H", c) + ip[12:]
s.send(mac + ours + b"\x08\x00" + ip + tcp)
s.settimeout(0.2)
end = time.monotonic() + 1.0
while time.monotonic() < end:
    try:
        f = s.recv(2048)
    except socket.timeout:
        continue
    if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6 or f[26:30] != da:
        continue
    t = f[14 + (f[14] & 15) * 4:]
    sp, dp, seq = struct.unpack("!HHI", t[:8])
    if sp == 389 and dp == sport and t[13] & 0x04 and seq == ack:
        print(1)
        sys.exit(0)
print(0)
EOF
}

read -r tcp0 ip0 <<<"$(settled drop_tcp_csum drop_ip_csum)"
lfe_eq "bare ACK with right checksums answered with RST" "$(probe none)" 1
lfe_eq "bare ACK with a broken TCP checksum not answered" "$(probe tcp)" 0
lfe_eq "bare ACK with a broken IPv4 checksum not answered" "$(probe ip)" 0
read -r tcp1 ip1 <<<"$(settled drop_tcp_csum drop_ip_csum)"
lfe_eq "drop_tcp_csum counted the broken TCP checksum" "$((tcp1 - tcp0))" 1
lfe_eq "drop_ip_csum counted the broken IPv4 checksum" "$((ip1 - ip0))" 1

lfe_stop
lfe_eq "clean exit" "$LFE_STOP_RC" 0
lfe_log "PASS"
