#!/usr/bin/env bash
# A SYN flood spoofing a legitimate client's own address cannot lock it
# out (SYN cookies before caps, common/share.h), shipped defaults:
# 20,000 SYNs carrying the client's address from a raw socket in its
# namespace (source ports 1024-9999, below its ephemeral range), while
# the client itself connects and binds with kernel sockets; its kernel
# does not answer the flood's SYN,ACKs (a policy rule blackholes TCP from
# port 389 to ports 1024-9999 before the local table), as a spoofed
# victim elsewhere would not see them. Asserts:
#   - every bind of the client during the flood succeeds, none waiting
#     for a SYN retransmission (p99 < 500 ms), and cookies were out;
#   - right after the flood 200 sessions of the client all succeed;
#   - nothing was refused for the source (conns_src_capped 0).
# Fails on the code before: half-open connections counted against the
# per-source cap (256), so the client's SYNs were answered RST.
#   test_spoof.sh [SYNS]   (default 20000)
source "$(dirname "$0")/lib.sh"
SYNS=${1:-20000}
lfe_init spoof 111
BURST=$LFE_ROOT/tests/integration/ldapburst.py
lfe_make_store
conf=$(lfe_conf 1)
sed -i '/^max_conns_per_core/d' "$conf"   # the shipped default (4096)
lfe_start "$conf" 0
DN=$(lfe_dn alice)
tstat() {
	lfe_telemetry /ldapfe/stats |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["/ldapfe/stats"]["total"].get(sys.argv[1], 0))' "$1"
}
burst() { lfe_cli timeout 60 "$PY" "$BURST" "$@"; }
jv() { "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())[sys.argv[1]])' "$1"; }
lfe_cli ip rule add pref 100 lookup local
lfe_cli ip rule del pref 0
lfe_cli ip rule add pref 10 iif veth0 ipproto tcp sport 389 dport 1024-9999 blackhole

r=$(burst seq "$LFE_SADDR" 389 "$DN" alice-pw 1 --timeout 5)
lfe_eq "bind before the flood" "$(jv ok <<< "$r")" 1

# The flood: SYNS over ~4 s; the client binds meanwhile, once the
# half-open budget (1,024) is full.
burst flood "$LFE_CADDR" "$LFE_SADDR" 389 "$SYNS" 1024 9999 $((SYNS / 4)) > "$LFE_WORK/flood.json" &
FPID=$!
LFE_EXTRA_PIDS=$FPID
sleep 0.5
during=$(burst seq "$LFE_SADDR" 389 "$DN" alice-pw 100 --timeout 10)
kill -0 "$FPID" 2>/dev/null || lfe_fail "the flood ended before the client's binds did (slow machine?)"
cook=$(tstat tcp_syncookies)
wait "$FPID" || lfe_fail "flood failed"
LFE_EXTRA_PIDS=
lfe_log "flood: $(cat "$LFE_WORK/flood.json"); client during it: $during; cookies $cook"
after=$(burst seq "$LFE_SADDR" 389 "$DN" alice-pw 200 --timeout 10)
lfe_log "200 sessions right after: $after"
((cook > 0)) || lfe_fail "no SYN cookies: the flood did not fill the half-open budget"
lfe_eq "binds during the flood" "$(jv ok <<< "$during")" 100
p99=$("$PY" -c 'import json,sys; print(int(json.loads(sys.argv[1])["lat_ms"][1]))' "$during")
((p99 < 500)) || lfe_fail "bind latency p99 $p99 ms during the flood (a SYN waited for its retransmission)"
lfe_eq "sessions right after the flood" "$(jv ok <<< "$after")" 200
lfe_eq "nothing refused for the source" "$(tstat conns_src_capped)" 0
lfe_stop
lfe_eq "clean stop" "$LFE_STOP_RC" 0
echo "PASS test_spoof"
