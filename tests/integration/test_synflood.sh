#!/usr/bin/env bash
# A SYN flood from ldapfe-gen (--workload synflood: spoofed sources
# 10.99.46.64-127, every port in turn, no handshake ever completed) against
# the daemon on af_packet, while a real kernel client in the same namespace
# keeps binding:
#   - the daemon's half-open budget fills and it answers with SYN cookies
#     (telemetry tcp_syncookies grows; the generator counts SYN-ACKs back);
#   - a libldap client (ldap_cpb, connection per bind) and ldapwhoami bind
#     with no error during the flood, their handshakes through cookies;
#   - the SYN-ACK the kernel client gets during the flood still carries
#     timestamps, window scale and SACK-permitted (the cookie encodes them);
#   - SYN admission ([tcp] syn_rate = 2000, a tenth of the flood): SYNs over
#     the budget are dropped (tcp_syn_budget_dropped) and get no SYN-ACK,
#     while the kernel client, validated by a bind before the flood, keeps
#     its own budget: ldap_cpb's connection-per-bind rate stays far above
#     what a client whose SYNs were dropped nine times in ten could do
#     (each drop costs the kernel a 1 s SYN retransmission). With
#     validated_sources = 0 the same run fails (ldapwhoami times out).
# The generator shares the client's veth through af_packet; its sources
# are not the kernel's addresses, so the kernel drops their SYN-ACKs.
#   test_synflood.sh [SECONDS]   (flood length, default 8)
source "$(dirname "$0")/lib.sh"
SECS=${1:-8}
lfe_init synflood 46
GEN=$LFE_BUILD/gen/ldapfe-gen
CPB=$LFE_BUILD/tests/integration/ldap_cpb
[[ -x $GEN ]] || { echo "SKIP: $GEN not built"; exit 77; }
[[ -x $CPB ]] || { echo "SKIP: $CPB not built"; exit 77; }
command -v tcpdump >/dev/null || { echo "SKIP: no tcpdump"; exit 77; }
lfe_make_store
conf=$(lfe_conf 1)   # max_conns_per_core 1024: a half-open budget of 256
RATE=2000
printf '[tcp]\nsyn_rate = %s\n' "$RATE" >> "$conf"
lfe_start "$conf" 0
URI=ldap://$LFE_SADDR:389
DN=$(lfe_dn alice)
tstat() {
	lfe_telemetry /ldapfe/stats |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["/ldapfe/stats"]["total"][sys.argv[1]])' "$1"
}
cookies() { tstat tcp_syncookies; }
c0=$(cookies)
lfe_eq "no cookies before the flood" "$c0" 0
# One bind before the flood: the client's address completes a handshake.
lfe_cli timeout 10 ldapwhoami -x -H "$URI" -D "$DN" -w alice-pw >/dev/null || lfe_fail "bind before the flood"

lfe_cli timeout $((SECS + 30)) "$GEN" -l 1 --no-pci --no-huge -m 256 --file-prefix "$LFE_PREFIX-gen" \
	--log-level=lib.eal:error --vdev "net_af_packet1,iface=veth0,qpairs=1" -- --port net_af_packet1 \
	--src-ip 10.99.46.3/24 --src-ips 10.99.46.64-10.99.46.127 --dst-ip "$LFE_SADDR" \
	--workload synflood --flood-rate 20000 --duration "$SECS" --json "$LFE_WORK/flood.json" \
	> "$LFE_WORK/gen.log" 2>&1 &
GEN_PID=$!
LFE_EXTRA_PIDS=$GEN_PID
# Bounded: until the daemon has answered with cookies (the flood is on).
for ((i = 0; i < 100; i++)); do
	(($(cookies) > 0)) && break
	kill -0 "$GEN_PID" 2>/dev/null || break
	sleep 0.1
done
c1=$(cookies)
((c1 > 0)) || lfe_fail "no SYN cookies 10 s into the flood: $(tail -n 5 "$LFE_WORK/gen.log")"
lfe_log "ok: flood on, $c1 cookies so far"

# The kernel client's SYN-ACK during the flood.
lfe_dump "$LFE_WORK/syn.txt" 1 "dst host $LFE_CADDR and tcp[tcpflags] & (tcp-syn|tcp-ack) == (tcp-syn|tcp-ack)"
DUMP=$LFE_DUMP_PID

cw=$(cookies)
ok=0
for ((i = 0; i < 3; i++)); do
	out=$(lfe_cli timeout 10 ldapwhoami -x -H "$URI" -D "$DN" -w alice-pw 2>&1) && ok=$((ok + 1)) ||
		lfe_log "ldapwhoami: $out"
done
lfe_eq "ldapwhoami binds during the flood" "$ok" 3
lfe_cli timeout 30 "$CPB" "$URI" "$DN" alice-pw 2 2 > "$LFE_WORK/cpb.txt"
read -r total errors < <(awk '/^total/ { print $2, $4 }' "$LFE_WORK/cpb.txt")
c2=$(cookies)
kill -0 "$GEN_PID" 2>/dev/null || lfe_fail "the flood ended before the clients did (raise SECONDS)"
# Two threads for 2 s: dropped SYNs (1 s retransmissions) would allow a
# handful; a validated client does hundreds even at load.
((total >= 40)) || lfe_fail "ldap_cpb: $total sessions in 2 s during the flood (validated budget not applied?)"
lfe_eq "ldap_cpb errors during the flood" "$errors" 0
((c2 > cw)) || lfe_fail "no cookies while the clients bound ($cw -> $c2)"
lfe_log "ok: $total connection-per-bind sessions during the flood, cookies $cw -> $c2"
wait "$DUMP" || true
LFE_EXTRA_PIDS=$GEN_PID
synack=$(grep -m1 -A1 'Flags \[S\.\]' "$LFE_WORK/syn.txt" | tr '\n' ' ' || true)
[[ $synack == *"TS val"* && $synack == *wscale* && $synack == *sackOK* ]] ||
	lfe_fail "SYN-ACK during the flood lost options: $synack"
lfe_log "ok: SYN-ACK under the flood carries TS, wscale, sackOK"

rc=0
wait "$GEN_PID" || rc=$?
LFE_EXTRA_PIDS=
cat "$LFE_WORK/gen.log" >&2
((rc == 0)) || lfe_fail "ldapfe-gen exit $rc"
jget() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$LFE_WORK/flood.json" "$1"; }
syns=$(jget 'j["synflood"]["syns"]')
acks=$(jget 'j["synflood"]["synacks"]')
((syns >= SECS * 1000)) || lfe_fail "flood: only $syns SYNs in $SECS s"
((acks > 0)) || lfe_fail "flood: no SYN-ACK came back"
# The budget: the half-open budget (256, each SYN,ACK resent up to 4 times
# in the flood), then RATE a second (and its 1/64 s burst).
dropped=$(tstat tcp_syn_budget_dropped)
((dropped > 0)) || lfe_fail "no SYN dropped over the budget ($syns SYNs, $acks SYN-ACKs)"
((acks <= 256 * 5 + 64 + RATE * (SECS + 2))) || lfe_fail "flood: $acks SYN-ACKs for $syns SYNs at syn_rate $RATE"
lfe_log "ok: flood $syns SYNs, $acks SYN-ACKs back, $dropped dropped over the budget; daemon cookies $(cookies)"
lfe_cli timeout 10 ldapwhoami -x -H "$URI" -D "$DN" -w alice-pw >/dev/null || lfe_fail "bind after the flood"
lfe_stop
lfe_eq "clean stop" "$LFE_STOP_RC" 0
echo "PASS test_synflood"
