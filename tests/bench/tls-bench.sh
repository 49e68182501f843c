#!/usr/bin/env bash
# tests/bench/tls-bench.sh — TLS figures of issue 9 with ldapfe-gen over
# net_memif: ldapfe (1 worker, CPU 0) ⟷ ldapfe-gen (CPU 1), as in
# stream-bench.sh, a small store, LDAPS on 636 and cleartext on 389.
#
#   tests/bench/tls-bench.sh BIN_DIR [RUNS] [SECONDS]
#
# BIN_DIR holds ldapfe, ldapfe-gen and ldapfectl, or is a meson build dir
# (a release or -O3 build: build-release/).
# LFE_TBENCH_HANDSHAKE_THREADS=0: handshakes inline on the worker (see below).
# Rows (each the median of RUNS runs of SECONDS, ldapfe restarted per run):
#   persistent binds/s, cleartext             (LFE_BENCH_CONNS connections)
#   persistent binds/s over TLS 1.3, and its ratio to cleartext (the
#       generator's records by ldapfe's record layer too, gen/tlsc.h; row
#       tls_genossl: the generator on OpenSSL's records, --tls-records openssl)
#   full handshakes/s, ECDSA P-256 certificate  (session workload: connect,
#       handshake, bind, unbind, close; no resumption)
#   full handshakes/s, RSA-2048 certificate
#       (with handshake_threads = 1 the generator is the limit of these
#       rows: EAL runs ldapfe's crypto thread on the CPU no ldapfe lcore
#       polls, the generator's, where it takes ~40 % of the time (the
#       generator's "on CPU" share); and OpenSSL 3.0's client parses the
#       server's certificate through its decoder framework, ~0.26 ms a
#       handshake that a server never spends: the client's handshake costs
#       ~1.8 times the server's)
#   resumed handshakes/s (session workload, --tls-resume: TLS 1.3 tickets)
#   sessions/s in cleartext (the session rows' TCP and LDAP part, no TLS)
# with ldapfe's busy µs per bind (worker busy cycles / binds, telemetry
# around the generator's run; one bind per session, so for the session rows
# it is the cost of a whole session), and the busy share of the run of the
# worker and of the generator (with its busy µs per bind, and the share of
# the time its thread was on its CPU: busy is wall-clock, so time another
# thread ran on the generator's CPU in the middle of a busy poll counts in
# it): the side near 100 % is the limit. Busy cycles are wall-clock TSC: on a loaded machine
# they count the time a busy poll was preempted (tests/bench/bench_tls
# gives the server's TLS costs in thread CPU time). Certificates are made here with the
# openssl CLI. Needs root (a namespace). The machine's load is printed
# before and after: on a shared machine the figures move with it.
#
# LFE_TBENCH_CALLGRIND=1: instead, one run per row with ldapfe under
# callgrind: instructions per bind (per session) of the receive path and
# the segments out, a figure a shared machine does not disturb.
# Namespace, work dir, daemon start/stop and cleanup: tests/integration/lib.sh
# (LFE_NS_TAG, LFE_KEEP as there); the store is its lfe_make_gen_store.
BIN=$(cd "${1:?usage: tls-bench.sh BIN_DIR [RUNS] [SECONDS]}" && pwd)
source "$(dirname "$0")/../integration/lib.sh"
RUNS=${2:-3}
DUR=${3:-4}
USERS=${LFE_BENCH_USERS:-10000}
CONNS=${LFE_BENCH_CONNS:-16}
# [tls] handshake_threads: 1 (the default) runs handshake steps on a crypto
# thread, which needs a CPU no poll loop holds; 0 runs them on the worker
# (on a 2-CPU machine, where the worker and the generator each hold one,
# that is the per-core handshake figure).
HS_THREADS=${LFE_TBENCH_HANDSHAKE_THREADS:-1}
# BIN_DIR: the three programs side by side, or a meson build dir.
LFE_LDAPFE=$BIN/ldapfe GEN_BIN=$BIN/ldapfe-gen LFE_CTL=$BIN/ldapfectl
[[ -x $LFE_LDAPFE ]] || { LFE_LDAPFE=$BIN/dataplane/ldapfe GEN_BIN=$BIN/gen/ldapfe-gen LFE_CTL=$BIN/mgmt/ldapfectl; }
[[ -x $GEN_BIN ]] || { echo "tls-bench.sh: no $GEN_BIN" >&2; exit 1; }
lfe_init tbench 53
# The daemon and the generator both in the server namespace, over memif.
NS=$LFE_SRV
SADDR=$LFE_SADDR
CADDR=$LFE_CADDR
SUFFIX=$LFE_SUFFIX
WORK=$LFE_WORK

echo "load before: $(uptime)"
lfe_make_gen_store "$USERS"

# A CA and two server certificates for SADDR: ECDSA P-256 and RSA-2048.
P=$WORK/pki
mkdir -p "$P"
ossl() { openssl "$@" >/dev/null 2>&1 || { echo "tls-bench.sh: openssl $1 failed" >&2; exit 1; }; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/ca.key" \
	-out "$P/ca.crt" -days 2 -subj "/CN=ldapfe bench CA"
printf 'subjectAltName = IP:%s\nextendedKeyUsage = serverAuth\n' "$SADDR" > "$P/ext"
for k in ec rsa; do
	if [[ $k == ec ]]; then kopt=(-newkey ec -pkeyopt ec_paramgen_curve:P-256); else kopt=(-newkey rsa:2048); fi
	ossl req "${kopt[@]}" -nodes -keyout "$P/$k.key" -out "$P/$k.csr" -subj "/CN=$SADDR"
	ossl x509 -req -in "$P/$k.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
		-out "$P/$k.crt" -days 2 -extfile "$P/ext"
done

SOCK=$WORK/memif.sock
for k in ec rsa; do
	cat > "$WORK/$k.conf" <<CONF
[store]
path = $LFE_STORE
[ldap]
port = 389
ldaps_ports = 636
max_conns_per_core = 65536
[tls]
certificate = $P/$k.crt
key = $P/$k.key
handshake_threads = $HS_THREADS
# the generator's one address stands for many clients: its LFE_BENCH_CONNS
# handshakes at once are not a flood from one source (default 16)
handshake_per_source = 1024
[port0]
dev = net_memif0,role=server,id=0,socket=$SOCK,socket-abstract=no
address = $SADDR/24
[workers]
lcores = 0
CONF
done
# The same ECDSA context with OpenSSL's records throughout (the comparison
# row: [tls] record_layer = openssl; the default is ldapfe's, tlsrec.c).
sed '/^\[tls\]$/a record_layer = openssl' "$WORK/ec.conf" > "$WORK/ecossl.conf"

telemetry() {
	lfe_telemetry /ldapfe/stats | "$PY" -c 'import json, sys
t = json.load(sys.stdin)["/ldapfe/stats"]["total"]
print(t["busy_cycles"], t["binds_ok"] + t["binds_failed"])'
}

# one CERT WORKLOAD GEN_ARGS...: one run; prints "ops/s busy_us/bind errors
# full resumed" (ops: binds/s for persistent, sessions/s for session).
one() {
	local cert=$1 wl=$2; shift 2
	# A daemon that died leaves its socket behind, and the next could not
	# bind it.
	rm -f "$SOCK"
	LFE_NOPING=1 lfe_start "$WORK/$cert.conf" 0
	sleep 1
	local b0 b1
	b0=$(telemetry)
	rm -f "$WORK/g.json"
	ip netns exec "$NS" timeout $((DUR + 60)) "$GEN_BIN" -l 1 --no-pci --no-huge -m 512 \
		--file-prefix "$LFE_PREFIX-gen" --log-level=lib.eal:error -- \
		--port "net_memif0,role=client,id=0,socket=$SOCK,socket-abstract=no" \
		--src-ip "$CADDR/24" --dst-ip "$SADDR" \
		--users "$USERS" --user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
		--workload "$wl" --conns "$CONNS" --rate max --duration "$DUR" --quiet \
		--connect-timeout-ms 10000 --json "$WORK/g.json" "$@" > "$WORK/gen.log" 2>&1 ||
		echo "gen exit $?: $(grep -h 'errors\|error:\|tls' "$WORK/gen.log" | head -3)" >&2
	if ! b1=$(telemetry 2>/dev/null); then
		echo "  ldapfe was gone at the end of the run: $(dmesg 2>/dev/null | grep -a "ldapfe\[$LFE_PID\]" | tail -1)" >&2
		wait "$LFE_PID" 2>/dev/null || true
		LFE_PID=
		return 1
	fi
	lfe_stop_restart
	if [[ ! -s $WORK/g.json ]]; then   # a run that produced nothing: one error, no figures
		echo "  no report from ldapfe-gen: $(tail -2 "$WORK/gen.log" | tr '\n' ' ')" >&2
		echo "0 0 1 0 0 0 0 0 0"
		return
	fi
	"$PY" - "$WORK/g.json" "$b0" "$b1" "$wl" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))
a = [int(x) for x in sys.argv[2].split()]; b = [int(x) for x in sys.argv[3].split()]
binds = max(b[1] - a[1], 1)
t = g["tls"] or {}
ops = g["sessions_per_s"] if sys.argv[4] == "session" else g["binds_per_s"]
# Which side was the limit: the worker's and the generator's busy share
# of the run (a side near 100 % is it; both well below: the machine).
wall = g["tsc_hz"] * g["duration_s"]
# The generator's share of its CPU beside its busy share: busy is
# wall-clock and counts what ran in its place on its CPU (the server's
# crypto thread: EAL puts it on a CPU no lcore of ldapfe polls, here the
# generator's); its busy us per bind less than its share of the CPU
# lost to others is an estimate of its own cost.
print("%.0f %.2f %d %d %d %.0f %.0f %.2f %.0f" % (ops, (b[0] - a[0]) / g["tsc_hz"] * 1e6 / binds,
      g["errors"]["total"], t.get("handshakes_full", 0), t.get("handshakes_resumed", 0),
      100.0 * (b[0] - a[0]) / wall, 100.0 * g["gen_busy_cycles"] / wall,
      g["gen_busy_us_per_bind"], 100.0 * g.get("gen_cpu_share", 0)))
PYEOF
}

# cg CERT WORKLOAD CONNS RATE GEN_ARGS...: one run with ldapfe under
# callgrind at a rate it keeps up with under valgrind (so few handshakes or
# binds are in flight at the end; the persistent rows' CONNS handshakes
# count in the window); prints, from lfe_tcp_input inclusive (TCP in, TLS,
# LDAP, store, the answer queued; not the segments out, whose flush also
# runs on idle polls, except a handshake step's flight, which the input
# itself pushes out: a few hundred instructions on the ~1M of a
# handshake): instructions per bind without the handshakes, and
# instructions per handshake (SSL_do_handshake inclusive / handshakes the
# generator completed). A loaded machine does not disturb these counts.
# Handshakes run inline here ([tls] handshake_threads = 0): only the
# worker thread is collected, and on the crypto thread they would not be
# counted at all. The annotations stay in WORK/cg-*.txt.
cg() {
	local cert=$1 wl=$2 conns=$3 rate=$4; shift 4
	rm -f "$WORK"/cg.out.* "$SOCK"
	sed '/^\[tls\]$/a handshake_threads = 0' "$WORK/$cert.conf" > "$WORK/$cert-cg.conf"
	LFE_WRAP="valgrind --tool=callgrind --collect-atstart=no --toggle-collect=lfe_worker_main
		--callgrind-out-file=$WORK/cg.out.%p" LFE_NOPING=1 LFE_READY_S=60 lfe_start "$WORK/$cert-cg.conf" 0
	local try
	sleep 8   # memif's control channel under valgrind on a busy machine
	for ((try = 1; try <= 4; try++)); do
		callgrind_control -z "$LFE_PID" >/dev/null 2>&1
		ip netns exec "$NS" timeout $((DUR + 120)) "$GEN_BIN" -l 1 --no-pci --no-huge -m 512 \
			--file-prefix "$LFE_PREFIX-gen" --log-level=lib.eal:error -- \
			--port "net_memif0,role=client,id=0,socket=$SOCK,socket-abstract=no" \
			--src-ip "$CADDR/24" --dst-ip "$SADDR" \
			--users "$USERS" --user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
			--workload "$wl" --conns "$conns" --rate "$rate" --duration "$DUR" --quiet \
			--connect-timeout-ms 20000 --json "$WORK/g.json" "$@" > "$WORK/gen.log" 2>&1 && break
		grep -q "still down" "$WORK/gen.log" && ((try < 4)) && continue
		echo "gen failed: $(tail -3 "$WORK/gen.log")" >&2
		break
	done
	callgrind_control -d "$LFE_PID" >/dev/null 2>&1
	sleep 1
	lfe_stop_restart
	local dump ann=$WORK/cg-$cert-$wl-$*.txt
	ann=${ann// /}
	dump=$(ls "$WORK"/cg.out.*.1 | head -1)
	callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$dump" > "$ann" 2>/dev/null || true
	# callgrind_annotate writes "." for a count of 0
	irf() { awk -v f="$1" '$0 ~ f && !n++ { gsub(",", "", $1); print ($1 == "." ? 0 : $1) }' "$ann"; }
	"$PY" - "$(irf ':lfe_tcp_input ')" "$(irf ':SSL_do_handshake ')" "$WORK/g.json" <<'PYEOF'
import json, sys
inp, hs = int(sys.argv[1] or 0), int(sys.argv[2] or 0); g = json.load(open(sys.argv[3]))
t = g["tls"] or {}
nhs = max(t.get("handshakes_full", 0) + t.get("handshakes_resumed", 0), 1)
print("%.0f %.0f %d/%d/%d" % ((inp - hs) / max(g["binds"], 1), hs / nhs, g["errors"]["total"],
      g["binds"], nhs))
PYEOF
}

if [[ ${LFE_TBENCH_CALLGRIND:-0} == 1 ]]; then
	declare -A CG
	CG[clear]=$(cg ec persistent 4 1000 --dport 389)
	CG[tls]=$(cg ec persistent 4 1000 --tls --tls-version 1.3)
	CG[tls_ossl]=$(cg ecossl persistent 4 1000 --tls --tls-version 1.3)
	CG[full_ec]=$(cg ec session 4 50 --tls --tls-version 1.3)
	CG[full_rsa]=$(cg rsa session 4 50 --tls --tls-version 1.3)
	CG[resumed]=$(cg ec session 4 50 --tls --tls-version 1.3 --tls-resume)
	echo "callgrind: ldapfe's instructions in lfe_tcp_input (TCP in, TLS, LDAP, store, answer queued)"
	f() { set -- $1; echo "$1"; }      # per bind
	h() { set -- $1; echo "$2"; }      # per handshake
	echo "per bind, handshakes excluded: cleartext $(f "${CG[clear]}"), TLS 1.3 $(f "${CG[tls]}") (record_layer = openssl: $(f "${CG[tls_ossl]}"))"
	echo "per handshake: full ECDSA P-256 $(h "${CG[full_ec]}"), full RSA-2048 $(h "${CG[full_rsa]}"), resumed $(h "${CG[resumed]}")"
	echo "(errors/binds/handshakes: $(for k in clear tls tls_ossl full_ec full_rsa resumed; do set -- ${CG[$k]}; printf '%s %s ' "$k" "$3"; done))"
	echo "load after: $(uptime)"
	exit 0
fi

# row NAME CERT WORKLOAD GEN_ARGS...: RUNS runs, then the median line.
declare -A MED
row() {
	local name=$1 cert=$2 wl=$3; shift 3
	local res=() r line
	for ((r = 1; r <= RUNS; r++)); do
		# A run whose daemon was gone at the end has no figures: once more,
		# then counted as an error. DPDK 22.11's memif server can fault
		# when the generator's side disconnects while the worker polls
		# (its interrupt thread unmaps the rings under the poll; dmesg:
		# segfault in librte_net_memif).
		line=$(one "$cert" "$wl" "$@") || line=$(one "$cert" "$wl" "$@") ||
			line="0 0 1 0 0 0 0 0 0"
		echo "  $name run $r: ops/s busy_us/bind errors hs_full hs_resumed worker% gen% gen_us/bind gen_on_cpu%: $line" >&2
		res+=("$line")
	done
	MED[$name]=$(printf '%s\n' "${res[@]}" | "$PY" -c '
import sys, statistics
r = [l.split() for l in sys.stdin if l.strip()]
print("%.0f %.2f %d %.0f %.0f %.2f %.0f" % (statistics.median(float(x[0]) for x in r),
      statistics.median(float(x[1]) for x in r), sum(int(x[2]) for x in r),
      *(statistics.median(float(x[i]) for x in r) for i in (5, 6, 7, 8))))')
}

# LFE_TBENCH_ROWS: the rows to run (names below; default all), e.g.
# "clear tls tls_ossl" for the record-layer comparison alone.
ROWS=${LFE_TBENCH_ROWS:-clear tls tls_ossl tls_genossl full_ec full_rsa resumed resumed_ossl clear_s}
declare -A ROWDEF=(
	[clear]="ec persistent --dport 389"
	[tls]="ec persistent --tls --tls-version 1.3"
	[tls_ossl]="ecossl persistent --tls --tls-version 1.3"
	[tls_genossl]="ec persistent --tls --tls-version 1.3 --tls-records openssl"
	[full_ec]="ec session --tls --tls-version 1.3"
	[full_rsa]="rsa session --tls --tls-version 1.3"
	[resumed]="ec session --tls --tls-version 1.3 --tls-resume"
	[resumed_ossl]="ecossl session --tls --tls-version 1.3 --tls-resume"
	[resumed12]="ec session --tls --tls-version 1.2 --tls-resume"
	[clear_s]="ec session --dport 389")
for r in $ROWS; do
	[[ -n ${ROWDEF[$r]:-} ]] || { echo "tls-bench.sh: no row $r" >&2; exit 1; }
	# shellcheck disable=SC2086
	row "$r" ${ROWDEF[$r]}
done

echo "ldapfe 1 worker (CPU 0) ⟷ ldapfe-gen (CPU 1) over net_memif, $CONNS connections, rate max;"
echo "median of $RUNS runs of $DUR s; busy µs per bind of the worker (per session in the session rows)"
args=()
for r in $ROWS; do args+=("$r" "${MED[$r]}"); done
"$PY" - "${args[@]}" <<'PYEOF'
import sys
names = {"clear": "persistent binds/s, cleartext",
         "tls": "persistent binds/s, TLS 1.3",
         "tls_ossl": "persistent binds/s, TLS 1.3, record_layer = openssl",
         "tls_genossl": "persistent binds/s, TLS 1.3, gen --tls-records openssl",
         "full_ec": "full handshakes/s, ECDSA P-256 (session)",
         "full_rsa": "full handshakes/s, RSA-2048 (session)",
         "resumed": "resumed handshakes/s, TLS 1.3 tickets (session)",
         "resumed_ossl": "resumed handshakes/s, record_layer = openssl",
         "resumed12": "resumed handshakes/s, TLS 1.2 tickets (no ECDHE)",
         "clear_s": "sessions/s, cleartext (session: the TCP and LDAP part)"}
a = sys.argv[1:]
rows = {a[i]: a[i + 1].split() for i in range(0, len(a), 2)}
for k, r in rows.items():
    print("%-52s %9s/s  busy %7s us  errors %s  worker %3s%%  gen %3s%% (%s us; on CPU %s%%)" %
          (names[k], r[0], r[1], r[2], r[3], r[4], r[5], r[6]))
for k in ("tls", "tls_ossl", "tls_genossl"):
    if k in rows and "clear" in rows:
        print("%-52s %9.0f %%" % ("TLS / cleartext (persistent, %s)" % names[k].split(", ")[-1],
              100.0 * float(rows[k][0]) / max(float(rows["clear"][0]), 1)))
PYEOF
echo "load after: $(uptime)"
