#!/usr/bin/env bash
# scripts/callgrind-csum.sh [auto|off] — callgrind instructions per whole
# cleartext session (connect, bind, unbind, close) of ldapfe's worker on
# net_tap, with [port0] checksum_offload = auto (the PMD's rx and tx
# checksum offload) or off. Not a test; needs root and valgrind.
#
# The daemon (build-cg: -O3 -g) runs under callgrind in a namespace with
# the tap; python3 in the same namespace runs N, then 2N sequential
# sessions through the kernel's TCP, then nothing for the 2N window's
# duration (idle_sleep_us = 0: an idle poll is the same code in every
# window). Collected: lfe_worker_main, less the clock-paced work
# (timers, store renew, control poll, publish), as tests/bench's recipe.
# Per session = (window(2N) - window(N) - idle polls) / N, where the idle
# polls of a window are its loop iterations (calls of lfe_tcp_flush, once
# per iteration) times the cost of one iteration in the idle window.
# Printed by group: ldapfe's own files, LMDB, libcrypto, net_tap's PMD
# (its software checksum emulation is not ours and is no cost on a NIC),
# other DPDK, libc. Run each mode 3 times; take the median.
source "$(dirname "$0")/../tests/integration/lib.sh"
mode=${1:-auto}
N=${LFE_CG_SESSIONS:-100}
BUILD_CG=${LFE_CG_BUILD:-$LFE_ROOT/build-cg}
lfe_init cgcsum 43
lfe_make_store
TAP=lfecg$$
TAP=${TAP:0:15}
KADDR=10.99.$LFE_NET.2
srv() { ip netns exec "$LFE_SRV" "$@"; }
conf=$(lfe_conf 1)
sed -i -e "s/^idle_sleep_us = .*/idle_sleep_us = 0/" "$conf"
sed -i "s|^dev = .*|dev = net_tap0,iface=$TAP\nchecksum_offload = $mode|" "$conf"
OUT=$LFE_WORK/cg
mkdir -p "$OUT"
# lfe_start runs this wrapper, which execs valgrind: LFE_PID is valgrind's.
LFE_LDAPFE=$LFE_WORK/vg.sh
cat > "$LFE_LDAPFE" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --fair-sched=yes --collect-atstart=no \\
	--toggle-collect=lfe_worker_main --toggle-collect=lfe_tcp_timers \\
	--toggle-collect=lfe_store_reader_renew --toggle-collect=lfe_worker_ctl_poll \\
	--toggle-collect='publish*' --callgrind-out-file="$OUT/cg.%p" \\
	"$BUILD_CG/dataplane/ldapfe" "\$@"
EOF
chmod +x "$LFE_LDAPFE"
LFE_NOPING=1 lfe_start "$conf" 0
grep "checksums" "$LFE_LOG" >&2
srv ip addr add "$KADDR/24" dev "$TAP"
srv ip link set "$TAP" up
for ((i = 0; i < 30; i++)); do srv ping -c 1 -W 1 "$LFE_SADDR" >/dev/null 2>&1 && break; done

sessions() {
	srv timeout 600 "$PY" - "$LFE_SADDR" "$1" "$(lfe_dn alice)" alice-pw <<'EOF'
import socket, sys
addr, n, dn, pw = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4].encode()
def tlv(t, v):
    return bytes([t, len(v)]) + v
bind = tlv(0x30, b"\x02\x01\x01" + tlv(0x60, b"\x02\x01\x03" + tlv(0x04, dn) + tlv(0x80, pw)))
unbind = b"\x30\x05\x02\x01\x02\x42\x00"
for i in range(n):
    s = socket.create_connection((addr, 389), timeout=30)
    s.sendall(bind)
    r = s.recv(256)
    if len(r) < 14 or r[-7:-4] != b"\x0a\x01\x00":
        sys.exit("bind %d: %r" % (i, r))
    s.sendall(unbind)
    s.close()
EOF
}
dump() { srv callgrind_control -d "$1" "$LFE_PID" >/dev/null; }
sessions 20                          # warm-up: ARP, caches, first-bind paths
srv callgrind_control -z "$LFE_PID" >/dev/null
sessions "$N"; dump winN
t0=$(date +%s.%N); sessions $((2 * N)); t1=$(date +%s.%N); dump win2N
sleep "$(echo "$t1 - $t0" | bc)"; dump idle
lfe_stop_restart
FN="lfe_tcp_flush lfe_csum_add lfe_net_parse_rx lfe_net_build_tcp build_tcp"
for w in winN win2N idle; do
	f=$(ls "$OUT"/cg.*."$w"* 2>/dev/null | head -1 || true)
	[[ -n $f ]] || f=$(grep -l "^desc: Trigger: .*$w" "$OUT"/cg.* | head -1)
	"$PY" "$(dirname "$0")/cg_layers.py" "$f" $FN > "$OUT/$w.json"
done
"$PY" - "$OUT" "$N" "$mode" <<'EOF'
import json, sys
out, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
w = {k: json.load(open("%s/%s.json" % (out, k))) for k in ("winN", "win2N", "idle")}
it = {k: w[k]["calls"].get("lfe_tcp_flush", 0) for k in w}
groups = sorted(set().union(*(w[k]["groups"] for k in w)))
per = {}
for g in groups:
    idle_it = w["idle"]["groups"].get(g, 0) / max(it["idle"], 1)
    a = w["winN"]["groups"].get(g, 0) - idle_it * it["winN"]
    b = w["win2N"]["groups"].get(g, 0) - idle_it * it["win2N"]
    per[g] = (b - a) / n
own = sum(v for g, v in per.items() if "/" in g)
print("mode %s: %d sessions per window; iterations N %d 2N %d idle %d" % (mode, n, it["winN"], it["win2N"], it["idle"]))
for g in sorted(per, key=lambda g: -per[g]):
    if abs(per[g]) >= 1:
        print("  %-22s %8.0f" % (g, per[g]))
print("  %-22s %8.0f" % ("ldapfe own code", own))
for f in ("lfe_csum_add", "lfe_net_parse_rx", "build_tcp"):
    d = w["win2N"]["fns"].get(f, 0) - w["winN"]["fns"].get(f, 0)
    print("  self %-17s %8.0f" % (f, d / n))
json.dump({"mode": mode, "per_session": per, "own": own}, open("%s/result.json" % out, "w"))
EOF
