#!/usr/bin/env bash
# ldapfe-gen's hold workload against the daemon (one worker, af_packet/veth):
#   - LFE_HOLD_CONNS (default 100000) connections from 16 source addresses
#     (--src-ips, more than one address's 64k ports would give), opened at
#     a paced --syn-rate, all established and held, under a per-source cap
#     of N/16 + 64: the generator must spread them evenly (a block of ports
#     per connection put 6,375 on each of the first 15 addresses, and the
#     cap refused 915 for ever; run-bench's 1M lost 76,038 that way);
#   - while they are held, the daemon's `ldapfectl status` counts at least
#     that many open connections on its worker, and binds on a random 5 %
#     of them are all answered right (no mismatch of any kind);
#   - bind p50/p99, the generator's and the daemon's memory are printed;
#   - memory per held connection (issue #10: at most 1 KiB): the figure the
#     daemon prints at start and `ldapfectl status` shows is ≤ 1024 B, and
#     the daemon's RSS grows by at most LFE_HOLD_MAX_B (default 1200) bytes
#     per held connection (RSS with N held minus RSS before the first;
#     some of them bound, so their DNs count too).
# Server-side limits come from the config only: max_conns_per_core and
# max_conns_per_source sized for N, first_request_ms = 0 (held connections
# that never bind are not closed after 10 s).
# 100,000 is issue #10's CI figure (about 18 s on an idle machine; the
# daemon's RSS grows by ~0.7 KB per held connection: 0.37 KB of TCP control
# block and table, a 256 B session slot, the DN chunks of the bound ones;
# it was ~2.9 KB with the DNs in every slot); LFE_HOLD_SECONDS (default 6)
# is how long they are held.
source "$(dirname "$0")/lib.sh"
# meson test sets MALLOC_PERTURB_, which fills every allocation and so
# makes the lazily touched per-connection buffers resident: the RSS figures
# would measure the test harness.
unset MALLOC_PERTURB_
N=${LFE_HOLD_CONNS:-100000}
MAX_B=${LFE_HOLD_MAX_B:-1200}
HOLD_S=${LFE_HOLD_SECONDS:-6}
NIPS=16
lfe_init hold 23
GEN=${LFE_GEN:-$LFE_BUILD/gen/ldapfe-gen}   # LFE_GEN: another build's generator
[[ -x $GEN ]] || { echo "SKIP: $GEN not built"; exit 77; }
SRC_LO=10.99.23.100
SRC_HI=10.99.23.$((100 + NIPS - 1))

lfe_make_gen_store 1000

conf=$LFE_WORK/ldapfe.conf
cat > "$conf" <<EOF
[store]
path = $LFE_STORE
[ldap]
port = 389
max_conns_per_core = $((N + 1024))
max_conns_per_source = $((N / NIPS + 64))
first_request_ms = 0
[port0]
dev = net_af_packet0,iface=veth0,qpairs=1
address = $LFE_SADDR/24
[workers]
idle_sleep_us = 20
verifier_threads = 1
EOF
lfe_start "$conf" 0
# The generator owns the client side from here: no kernel address that
# would answer the server's segments with resets.
lfe_cli ip addr flush dev veth0
idle_b=$(sed -n 's/.*memory per idle connection \([0-9]*\) B.*/\1/p' "$LFE_LOG" | head -1)
[[ -n $idle_b ]] || lfe_fail "no memory figure at start: $(grep -m1 'memory per' "$LFE_LOG")"
((idle_b <= 1024)) || lfe_fail "the daemon says an idle connection costs $idle_b B (> 1024)"
status_mem=$("$LFE_CTL" --prefix "$LFE_PREFIX" status | grep '^memory: per idle connection') ||
	lfe_fail "ldapfectl status shows no memory line"
[[ $status_mem == "memory: per idle connection $idle_b B"* ]] || lfe_fail "status: $status_mem; start: $idle_b B"
rss0=$(awk '/VmRSS/ {print $2}' "/proc/$LFE_PID/status")

lfe_cli timeout $((HOLD_S + 50 + N / 10000)) "$GEN" -l 1 --no-pci --no-huge -m 256 --file-prefix "$LFE_PREFIX-gen" \
	--log-level=lib.eal:error --vdev "net_af_packet1,iface=veth0,qpairs=1" -- --port net_af_packet1 \
	--src-ip "$LFE_CADDR/24" --src-ips "$SRC_LO-$SRC_HI" --dst-ip "$LFE_SADDR" --users 1000 \
	--user-fmt "uid=user%07u,ou=people,$LFE_SUFFIX" --password-fmt 'pw%07u' \
	--workload hold --conns "$N" --syn-rate 20000 --bind-frac 0.05 --rate 2000 --duration "$HOLD_S" \
	--connect-timeout-ms 5000 --json "$LFE_WORK/hold.json" > "$LFE_WORK/gen.log" 2>&1 &
GEN_PID=$!
LFE_EXTRA_PIDS=$GEN_PID

# Wait (bounded) until the generator holds them all, then ask the daemon.
for ((i = 0; i < 400 + N / 1000; i++)); do
	grep -q "hold: .* connections established" "$LFE_WORK/gen.log" && break
	kill -0 "$GEN_PID" 2>/dev/null || break
	sleep 0.1
done
grep -q "hold: $N of $N connections established" "$LFE_WORK/gen.log" ||
	lfe_fail "not all held: $(grep -h 'hold:\|error\|opening' "$LFE_WORK/gen.log" | tail -3)"
# A handshake's last ACK lost on the way leaves the server in SYN_RCVD until
# its SYN-ACK is retransmitted and answered: give it a few seconds.
for ((i = 0; i < 20; i++)); do
	open=$("$LFE_CTL" --prefix "$LFE_PREFIX" status --json |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["conns_active"])')
	((open >= N)) && break
	sleep 0.25
done
((open >= N)) || lfe_fail "daemon status: $open connections open while the generator holds $N;" \
	"generator: $(grep 'established=' "$LFE_WORK/gen.log" | tail -1)" \
	"($(lfe_telemetry /ldapfe/stats | "$PY" -c 'import json,sys; t=json.load(sys.stdin)["/ldapfe/stats"]["total"]; print({k: v for k, v in t.items() if v and ("tcp" in k or "conn" in k or "drop" in k)})'))"
lfe_log "ok: daemon counts $open open connections"
rss=$(awk '/VmRSS/ {print $2}' "/proc/$LFE_PID/status")
dn_bytes=$(lfe_telemetry /ldapfe/stats | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["/ldapfe/stats"]["total"]["dn_pool_bytes"])')
per_b=$(((rss - rss0) * 1024 / N))
lfe_log "daemon RSS $rss0 KiB before, $rss KiB with $N held: $per_b B per held connection" \
	"(the daemon says $idle_b B idle; bound DNs hold $dn_bytes B now)"
((per_b <= MAX_B)) || lfe_fail "daemon RSS grew by $per_b B per held connection (> $MAX_B)"

rc=0
wait "$GEN_PID" || rc=$?
LFE_EXTRA_PIDS=
((rc == 0)) || lfe_fail "ldapfe-gen exit $rc: $(tail -n 8 "$LFE_WORK/gen.log")"
jget() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$LFE_WORK/hold.json" "$1"; }
lfe_eq "held at the end of the measured time" "$(jget 'j["hold"]["established"]')" "$N"
lfe_eq "no mismatch of any kind" "$(jget 'j["errors"]["total"]')" 0
b=$(jget 'j["binds_ok"]')
binders=$(jget 'j["hold"]["binders"]')
((b >= 1000 && binders >= N / 40 && binders <= N / 10)) || lfe_fail "binds: $b ok from $binders binding connections"
lfe_eq "every bind right" "$(jget 'j["binds"] == j["binds_ok"]')" True
lfe_log "ok: $b binds on $binders of $N held connections," \
	"p50 $(jget 'j["latency_us"]["p50"]') us p99 $(jget 'j["latency_us"]["p99"]') us;" \
	"opened in $(jget 'j["hold"]["open_s"]') s; generator RSS $(jget 'j["gen_rss_kib"]') KiB;" \
	"daemon RSS $rss KiB (+$per_b B per held connection)"
lfe_stop
[[ $LFE_STOP_RC == 0 ]] || lfe_fail "ldapfe stop: $LFE_STOP_RC"
echo "PASS test_hold"
