#!/bin/bash
# tests/integration/test_cpb.sh — connection-per-bind from a real kernel
# client (libldap, 16 threads: connect + simple bind + unbind each time)
# against ldapfe on af_packet. The client closes first, so each session
# leaves a TIME_WAIT on the client; Linux reuses such a port only when the
# connection had timestamps (tcp_tw_reuse). With a small port range the
# rate must hold from the first to the last 5 s (it collapses to a tenth
# without timestamps); tcpdump must show timestamps, window scale and
# SACK-permitted negotiated; a client with net.ipv4.tcp_timestamps=0 must
# still bind (and get no timestamps back).
#
#   test_cpb.sh [SECONDS]   (default 20; LFE_CPB_PORTS: client ports, default 8192)
source "$(dirname "$0")/lib.sh"
CPB=$LFE_BUILD/tests/integration/ldap_cpb
SECS=${1:-20}
PORTS=${LFE_CPB_PORTS:-8192}
[[ -x $CPB ]] || { echo "SKIP: $CPB not built"; exit 77; }
command -v tcpdump >/dev/null || { echo "SKIP: no tcpdump"; exit 77; }
lfe_init cpb 90
lfe_make_store
conf=$(lfe_conf 1)
lfe_start "$conf" 0
# A port range that TIME_WAIT fills within seconds at this rate.
lfe_cli sysctl -qw net.ipv4.ip_local_port_range="40000 $((40000 + PORTS - 1))"
URI=ldap://$LFE_SADDR:389
DN=$(lfe_dn alice)

# dump FILE: capture SYN,ACKs on the client's veth; returns once
# tcpdump listens (bounded), its PID in $dump.
dump() {
	lfe_dump "$1" 2 'tcp[tcpflags] & (tcp-syn|tcp-ack) == (tcp-syn|tcp-ack)'
	dump=$LFE_DUMP_PID
}
# synack FILE: the first SYN,ACK tcpdump saw (empty if none).
synack() { grep -m1 -A1 'Flags \[S\.\]' "$1" | tr '\n' ' ' || true; }

# The handshake of the first sessions, as the client's kernel sees it.
dump "$LFE_WORK/syn.txt"
lfe_cli timeout $((SECS + 30)) "$CPB" "$URI" "$DN" alice-pw 16 "$SECS" > "$LFE_WORK/cpb.txt"
wait "$dump" || true
cat "$LFE_WORK/cpb.txt" >&2
cat "$LFE_WORK/syn.txt" >&2
synack=$(synack "$LFE_WORK/syn.txt")
[[ $synack == *"TS val"* ]] || lfe_fail "SYN,ACK without timestamps: $synack"
[[ $synack == *wscale* ]] || lfe_fail "SYN,ACK without window scale: $synack"
[[ $synack == *sackOK* ]] || lfe_fail "SYN,ACK without SACK-permitted: $synack"
lfe_log "ok: SYN,ACK negotiates timestamps, wscale, sackOK"

read -r first last errors total cpu < <(awk -v n="$SECS" '
	/^sec/ { if ($2 <= 5) f += $4; if ($2 > n - 5) l += $4 }
	/^total/ { e = $4; t = $2; c = $6 + $8 }
	END { print f + 0, l + 0, e + 0, t + 0, c + 0 }' "$LFE_WORK/cpb.txt")
lfe_log "connection-per-bind: first 5 s $first, last 5 s $last, total $total, errors $errors, client cpu ${cpu}s"
((total > 0)) || lfe_fail "no binds"
lfe_eq "bind errors" "$errors" 0
((last * 2 >= first)) || lfe_fail "rate collapsed: first 5 s $first, last 5 s $last"
lfe_log "ok: rate holds"

# A client without timestamps still works (and gets none back).
lfe_cli sysctl -qw net.ipv4.tcp_timestamps=0
lfe_cli sysctl -qw net.ipv4.ip_local_port_range="10000 60999"
dump "$LFE_WORK/syn0.txt"
lfe_cli timeout 40 "$CPB" "$URI" "$DN" alice-pw 4 3 > "$LFE_WORK/cpb0.txt"
wait "$dump" || true
read -r total0 errors0 < <(awk '/^total/ { print $2, $4 }' "$LFE_WORK/cpb0.txt")
((total0 > 0)) || lfe_fail "no binds without timestamps"
lfe_eq "bind errors without timestamps" "$errors0" 0
synack=$(synack "$LFE_WORK/syn0.txt")
[[ -n $synack && $synack != *"TS val"* ]] || lfe_fail "timestamps answered though not offered: $synack"
lfe_log "ok: client without timestamps: $total0 binds, SYN,ACK without TS"
lfe_stop
lfe_eq "clean stop" "$LFE_STOP_RC" 0
