#!/usr/bin/env bash
# Legitimate bind rate under a SYN flood (issue #10: "SYN flood from the
# generator at its full rate while legitimate clients keep >= 90 % of their
# bind rate"). One daemon worker (CPU 0, busy polling), two paths:
#  memif:    ldapfe-gen (CPU 1) binds, persistent (GEN_CONNS connections) and
#            session (connect, bind, unbind per session), first alone, then
#            with --flood-ips beside it in the same process and lcore
#            (187 spoofed addresses x 51,000 ports, at each rate of
#            LFE_SFB_SYN_RATES, "max": as fast as the port takes them; the
#            flood's SYNs leave after the poll's legit frames): two generator processes on one memif
#            daemon crash DPDK's memif PMD, and one process keeps the CPUs
#            to two busy pollers. Legit binds at LFE_SFB_GEN_RATE (default
#            max: then the flood also takes the generator's own time);
#  afpacket: the daemon on af_packet; in the client namespace a libldap
#            client (tests/integration/ldap_cpb, THREADS threads, kernel
#            TCP) binds, persistent and connection-per-bind, alone, then
#            while ldapfe-gen --workload synflood (CPU 1, af_packet on the
#            same veth) floods the daemon's port.
# Each figure is the median of RUNS runs (alone and flooded alternate).
# Prints per path and mode: legit binds/s alone and under the flood, the
# ratio, the SYN rate sent, SYN-ACKs back, the daemon's cookies sent, its
# busy share and every drop counter that moved. Not part of the test suite.
#   tests/bench/synflood-bench.sh [SECONDS] [THREADS]   (default 5 8)
#   LFE_SFB_PATHS="memif afpacket"  LFE_SFB_RUNS=3  LFE_SFB_SYN_RATES="20000 100000 max"
#   LFE_SFB_GEN_RATE=max  LFE_SFB_GEN_CONNS=16  LFE_SFB_REPLY=none|rst (the flood's answer to SYN-ACKs)
#   LFE_SFB_FRAMECNT=4096 (the daemon's af_packet ring)
#   LFE_SFB_OUT=BUILD/synflood-bench (runs.jsonl: one line per run)
source "$(dirname "$0")/../integration/lib.sh"
SECS=${1:-5}
TH=${2:-8}
RUNS=${LFE_SFB_RUNS:-3}
PATHS=${LFE_SFB_PATHS:-memif afpacket}
GEN_RATE=${LFE_SFB_GEN_RATE:-max}
GEN_CONNS=${LFE_SFB_GEN_CONNS:-16}
REPLY=${LFE_SFB_REPLY:-none}
CPB=$LFE_BUILD/tests/integration/ldap_cpb
GEN=$LFE_BUILD/gen/ldapfe-gen
[[ -x $CPB ]] || { echo "SKIP: $CPB not built"; exit 77; }
[[ -x $GEN ]] || { echo "SKIP: $GEN not built"; exit 77; }
lfe_init synfloodbench 47
lfe_make_store
lfe_make_users 1
DN=$(lfe_dn alice)
URI=ldap://$LFE_SADDR:389
conf=$(lfe_conf 1)
sed -i 's/max_conns_per_core = 1024/max_conns_per_core = 65536/; s/idle_sleep_us = 20/idle_sleep_us = 0/' "$conf"
# af_packet: a receive ring of 4096 frames (the PMD's default is 512), as a
# NIC's; a flood fills 512 in a fraction of a millisecond of any stall.
sed -i "s/^dev = net_af_packet0,iface=veth0,qpairs=1$/&,framecnt=${LFE_SFB_FRAMECNT:-4096}/" "$conf"
SOCK=$LFE_WORK/memif.sock
sed "s|^dev = .*|dev = net_memif0,role=server,id=0,socket=$SOCK,socket-abstract=no|" "$conf" > "$LFE_WORK/memif.conf"
FLOOD_IPS=10.99.47.64-10.99.47.250   # 187 x 256 (per-source cap) > the half-open budget: cookies

stats() {   # stats FILE: the daemon's totals and port 0's counters (JSON; {} if it never answers)
	local k
	for ((k = 0; k < 3; k++)); do stats_once "$1" 2>/dev/null && return 0; sleep 1; done
	lfe_log "warning: no telemetry from the daemon"
	echo '{}' > "$1"
}
stats_once() {
	{ lfe_telemetry /ldapfe/stats; lfe_telemetry /ethdev/stats,0; } | "$PY" -c '
import json, sys
d = json.JSONDecoder()
t, s = sys.stdin.read(), {}
i = 0
while i < len(t):
    if t[i].isspace():
        i += 1
        continue
    o, i = d.raw_decode(t, i)
    s.update(o)
tot = s["/ldapfe/stats"]["total"]
tot.update({"port_" + k: v for k, v in s.get("/ethdev/stats", {}).items() if isinstance(v, int)})
json.dump(tot, sys.stdout)' > "$1"
}
legit() {   # legit MODE FILE: binds/s of ldap_cpb over SECS
	local extra=
	[[ $1 == persistent ]] && extra=persistent
	lfe_cli timeout $((SECS + 30)) "$CPB" "$URI" "$DN" alice-pw "$TH" "$SECS" $extra > "$2" ||
		lfe_log "ldap_cpb exit $? (a client stuck past its 5 s timeouts)"
	awk -v n="$SECS" '/^total/ { t = $2; if ($4 > 0) print "ldap_cpb errors", $4 > "/dev/stderr" }
		END { printf "%.1f\n", t / n }' "$2"
}
SYN_RATES=${LFE_SFB_SYN_RATES:-20000 100000 max}
flood_start() {   # flood_start JSON: the flood runs SECS + 3 s, its PID in FLOOD
	lfe_cli timeout $((SECS + 40)) "$GEN" -l 1 --no-pci --no-huge -m 512 --file-prefix "$LFE_PREFIX-gen" \
		--log-level=lib.eal:error --vdev "net_af_packet1,iface=veth0,qpairs=1" -- --port net_af_packet1 \
		--src-ip "10.99.47.3/24" --src-ips "$FLOOD_IPS" --dst-ip "$LFE_SADDR" \
		--workload synflood --flood-rate "$rate" --flood-reply "$REPLY" --duration $((SECS + 3)) --quiet \
		--json "$1" > "$1.log" 2>&1 &
	FLOOD=$!
	LFE_EXTRA_PIDS=$FLOOD
}

# memif: the daemon without the veth (lfe_start pings over it).
start_memif() {
	: > "$LFE_WORK/ldapfe.log"
	ip netns exec "$LFE_SRV" "$LFE_LDAPFE" -l 0 --no-pci --no-huge -m 768 --file-prefix "$LFE_PREFIX" \
		--log-level=lib.eal:error -- --config "$LFE_WORK/memif.conf" > "$LFE_WORK/ldapfe.log" 2>&1 &
	LFE_PID=$!
	for ((i = 0; i < 200; i++)); do
		grep -q "ldapfe: ready" "$LFE_WORK/ldapfe.log" && return 0
		kill -0 "$LFE_PID" 2>/dev/null || break
		sleep 0.1
	done
	lfe_fail "ldapfe (memif) not ready: $(tail -n 5 "$LFE_WORK/ldapfe.log")"
}
gen_memif() {   # gen_memif MODE JSON [ARGS...]: one ldapfe-gen run, legit (and flood)
	local mode=$1 json=$2 wl=persistent
	shift 2
	[[ $mode == session ]] && wl=session
	ip netns exec "$LFE_SRV" timeout $((SECS + 60)) "$GEN" -l 1 --no-pci --no-huge -m 512 \
		--file-prefix "$LFE_PREFIX-gen" --log-level=lib.eal:error -- \
		--port "net_memif0,role=client,id=0,socket=$SOCK,socket-abstract=no" \
		--src-ip "$LFE_CADDR/24" --dst-ip "$LFE_SADDR" --user-fmt "uid=user%u,ou=people,$LFE_SUFFIX" \
		--password-fmt 'pw-%u' --users 1 --workload "$wl" --conns "$GEN_CONNS" --rate "$GEN_RATE" \
		--duration "$SECS" --quiet --json "$json" "$@" > "$json.log" 2>&1 ||
		lfe_log "ldapfe-gen exit $?: $(tail -n 3 "$json.log")"
	"$PY" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["binds_per_s"])' "$json"
}

OUT=${LFE_SFB_OUT:-$LFE_BUILD/synflood-bench}
mkdir -p "$OUT"
R=$OUT/runs.jsonl   # one line per run, kept (the work dir is not)
: > "$R"
record() {   # record PATH MODE ALONE UNDER S0 S1 FLOOD_JSON (and $rate)
	"$PY" - "$@" "$rate" >> "$R" <<'PYEOF'
import json, sys
path, mode, alone, under = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
rate = sys.argv[8]
s0, s1 = json.load(open(sys.argv[5])), json.load(open(sys.argv[6]))
try:
    f = json.load(open(sys.argv[7]))["synflood"]
except (OSError, ValueError, KeyError):
    f = {}   # the flood did not report (its log says why)
d = {k: s1[k] - s0.get(k, 0) for k in s1 if isinstance(s1[k], int)}
drops = {k: v for k, v in d.items() if v and (k.startswith("drop_") or k in
         ("conns_table_full", "conns_src_capped", "tcp_resets", "tcp_syn_budget_dropped", "port_imissed", "port_ierrors",
          "port_rx_nombuf", "port_oerrors"))}
busy = 100.0 * d.get("busy_cycles", 0) / max(d.get("total_cycles", 0), 1)
print(json.dumps({"path": path, "mode": mode, "rate": rate, "alone": alone, "under": under, "syn_s": f.get("syns_per_s", 0),
                  "synack_s": f.get("synacks_per_s", 0), "refused": f.get("tx_refused", 0), "cookies": d.get("tcp_syncookies", 0), "busy_pct": busy,
                  "rx_pkts": d.get("port_ipackets", 0), "drops": drops}))
PYEOF
	lfe_log "$1 $2 flood $rate run $r: alone $3/s, under flood $4/s ($(tail -n 1 "$R"))"
}
for path in $PATHS; do
[[ $path == memif ]] || continue
start_memif
# Users: the store has alice..dave; the generator binds as user0 (pw-0).
for rate in $SYN_RATES; do
for mode in persistent session; do
	for ((r = 1; r <= RUNS; r++)); do
		alone=$(gen_memif "$mode" "$LFE_WORK/alone-memif-$mode-$r.json")
		stats "$LFE_WORK/s0.json"
		under=$(gen_memif "$mode" "$LFE_WORK/flood-memif-$mode-$r.json" --flood-ips "$FLOOD_IPS" \
			--flood-rate "$rate" --flood-reply "$REPLY")
		stats "$LFE_WORK/s1.json"
		record memif "$mode" "$alone" "$under" "$LFE_WORK/s0.json" "$LFE_WORK/s1.json" \
			"$LFE_WORK/flood-memif-$mode-$r.json"
	done
done
done
lfe_stop
done

[[ " $PATHS " == *" afpacket "* ]] && lfe_start "$conf" 0
[[ " $PATHS " == *" afpacket "* ]] &&
for rate in $SYN_RATES; do
for mode in persistent cpb; do
	for ((r = 1; r <= RUNS; r++)); do
		alone=$(legit "$mode" "$LFE_WORK/alone-$mode-$r.txt")
		stats "$LFE_WORK/s0.json"
		flood_start "$LFE_WORK/flood-$mode-$r.json"
		sleep 2   # the half-open budget fills, cookies are on
		under=$(legit "$mode" "$LFE_WORK/under-$mode-$r.txt")
		kill -0 "$FLOOD" 2>/dev/null || lfe_log "warning: the flood ended before the client"
		stats "$LFE_WORK/s1.json"
		wait "$FLOOD" || lfe_log "ldapfe-gen exit $?: $(tail -n 3 "$LFE_WORK/flood-$mode-$r.json.log")"
		LFE_EXTRA_PIDS=
		record afpacket "$mode" "$alone" "$under" "$LFE_WORK/s0.json" "$LFE_WORK/s1.json" \
			"$LFE_WORK/flood-$mode-$r.json"
	done
done
done
[[ " $PATHS " == *" afpacket "* ]] && lfe_stop
"$PY" - "$R" "$SECS" "$TH" "$RUNS" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PYEOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("synflood-bench: %s s per run, %s client threads, median of %s runs; %s CPUs, load %s" % tuple(sys.argv[2:7]))
print("%-27s %9s %9s %7s %10s %10s %9s %5s  %s" % ("path/mode/flood rate", "alone b/s", "flood b/s", "ratio",
      "SYN/s sent", "SYN-ACK/s", "cookies", "busy", "drops (daemon, summed over the flooded runs)"))
for pm in dict.fromkeys((r["path"], r["mode"], r["rate"]) for r in rows):
    rs = [r for r in rows if (r["path"], r["mode"], r["rate"]) == pm]
    med = lambda k: statistics.median(r[k] for r in rs)
    ratio = statistics.median(r["under"] / r["alone"] if r["alone"] else 0 for r in rs)
    drops = {}
    for r in rs:
        for k, v in r["drops"].items():
            drops[k] = drops.get(k, 0) + v
    print("%-27s %9.0f %9.0f %6.1f%% %10.0f %10.0f %9.0f %4.0f%%  %s" % ("/".join(pm), med("alone"),
          med("under"), 100 * ratio, med("syn_s"), med("synack_s"), med("cookies"), med("busy_pct"),
          ", ".join("%s %d" % kv for kv in sorted(drops.items())) or "none"))
PYEOF
