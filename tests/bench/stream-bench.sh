#!/usr/bin/env bash
# tests/bench/stream-bench.sh — a short cleartext persistent-bind figure
# over net_memif, for before/after comparisons of the send path (the
# byte-stream layer): ldapfe (1 worker, CPU 0) ⟷ ldapfe-gen (CPU 1), as in
# run-bench.sh part 1 but with a small store and no slapd/callgrind.
#
#   tests/bench/stream-bench.sh BIN_DIR [RUNS] [SECONDS]
# BIN_DIR holds ldapfe, ldapfe-gen and ldapfectl. Prints per run binds/s and
# ldapfe busy µs per bind (worker busy cycles / binds, from telemetry around
# the generator's run), then the medians. Needs root (a namespace).
#
# LFE_SBENCH_CALLGRIND=1: instead, one run of ldapfe under callgrind (256
# connections keep it saturated, so idle polls are few): instructions per
# bind of the worker (lfe_worker_main inclusive, over the generator's
# window), which a machine shared with other jobs does not disturb.
# Namespace, work dir, daemon start/stop and cleanup: tests/integration/lib.sh
# (LFE_NS_TAG as there); the store is its lfe_make_gen_store.
BIN=$(cd "$1" && pwd)
source "$(dirname "$0")/../integration/lib.sh"
# BIN_DIR flat (copies of two builds to compare) or a build dir.
if [[ -x $BIN/dataplane/ldapfe ]]; then
	LFE_LDAPFE=$BIN/dataplane/ldapfe LFE_CTL=$BIN/mgmt/ldapfectl GEN=$BIN/gen/ldapfe-gen
else
	LFE_LDAPFE=$BIN/ldapfe LFE_CTL=$BIN/ldapfectl GEN=$BIN/ldapfe-gen
fi
RUNS=${2:-3}
DUR=${3:-4}
USERS=${LFE_BENCH_USERS:-10000}
CONNS=${LFE_BENCH_CONNS:-16}
[[ -x $GEN ]] || { echo "stream-bench.sh: no $GEN" >&2; exit 1; }
lfe_init sbench 52
# The daemon and the generator both in the server namespace, over memif.
NS=$LFE_SRV
WORK=$LFE_WORK
SUFFIX=$LFE_SUFFIX
lfe_make_gen_store "$USERS"
SOCK=$WORK/memif.sock
cat > "$WORK/l.conf" <<CONF
[store]
path = $LFE_STORE
[ldap]
port = 389
[port0]
dev = net_memif0,role=server,id=0,socket=$SOCK,socket-abstract=no
address = 10.99.52.1/24
[workers]
lcores = 0
CONF

telemetry() {
	lfe_telemetry /ldapfe/stats | "$PY" -c 'import json, sys
t = json.load(sys.stdin)["/ldapfe/stats"]["total"]
print(t["busy_cycles"], t["binds_ok"] + t["binds_failed"])'
}

if [[ ${LFE_SBENCH_CALLGRIND:-0} == 1 ]]; then
	LFE_WRAP="valgrind --tool=callgrind --collect-atstart=no --toggle-collect=lfe_worker_main
		--callgrind-out-file=$WORK/cg.out.%p" LFE_NOPING=1 LFE_READY_S=60 lfe_start "$WORK/l.conf" 0
	sleep 8   # memif's control channel under valgrind on a busy machine
	# memif's link may take longer than the generator waits under valgrind:
	# try again (the window is zeroed just before each try).
	for ((try = 1; try <= 4; try++)); do
		callgrind_control -z "$LFE_PID" >/dev/null 2>&1
		ip netns exec "$NS" timeout $((DUR + 120)) "$GEN" -l 1 --no-pci --no-huge -m 512 \
			--file-prefix "$LFE_PREFIX-gen" --log-level=lib.eal:error -- \
			--port "net_memif0,role=client,id=0,socket=$SOCK,socket-abstract=no" \
			--src-ip 10.99.52.2/24 --dst-ip 10.99.52.1 \
			--users "$USERS" --user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
			--workload persistent --conns 256 --rate max --duration "$DUR" --quiet \
			--connect-timeout-ms 20000 --json "$WORK/g.json" > "$WORK/gen.log" 2>&1 && break
		grep -q "still down" "$WORK/gen.log" && ((try < 4)) && continue
		echo "gen failed: $(tail -3 "$WORK/gen.log")" >&2
		exit 1
	done
	callgrind_control -d "$LFE_PID" >/dev/null 2>&1
	sleep 1
	lfe_stop_restart
	dump=$(ls "$WORK"/cg.out.*.1 | head -1)
	# Idle polls (the link coming up, retries) count in lfe_worker_main but
	# not in the receive path: lfe_tcp_input (TCP, stream, session, store)
	# plus lfe_tcp_flush (segments out) inclusive is the work of the binds.
	callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$dump" > "$WORK/ann.txt" 2>/dev/null || true
	irf() { awk -v f="$1" '$0 ~ f && !n++ { gsub(",", "", $1); print $1 }' "$WORK/ann.txt"; }
	ir=$(irf lfe_worker_main)
	ir_path=$(( $(irf ':lfe_tcp_input ') + $(irf ':lfe_tcp_flush ') ))
	# binds answered in the window: the generator's count (telemetry does
	# not answer under valgrind); the window also holds the connects.
	"$PY" - "$ir" "$ir_path" "$WORK/g.json" <<'PYEOF'
import json, sys
ir, path = int(sys.argv[1]), int(sys.argv[2]); g = json.load(open(sys.argv[3]))
b = max(g["binds"], 1)
print("callgrind: %d binds; per bind: %.0f instructions in lfe_tcp_input+lfe_tcp_flush, "
      "%.0f in the worker (idle polls included)" % (g["binds"], path / b, ir / b))
PYEOF
	exit 0
fi

res=()
for ((r = 1; r <= RUNS; r++)); do
	LFE_NOPING=1 lfe_start "$WORK/l.conf" 0
	sleep 1
	b0=$(telemetry)
	ip netns exec "$NS" timeout $((DUR + 60)) "$GEN" -l 1 --no-pci --no-huge -m 512 \
		--file-prefix "$LFE_PREFIX-gen" --log-level=lib.eal:error -- \
		--port "net_memif0,role=client,id=0,socket=$SOCK,socket-abstract=no" \
		--src-ip 10.99.52.2/24 --dst-ip 10.99.52.1 \
		--users "$USERS" --user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
		--workload persistent --conns "$CONNS" --rate max --duration "$DUR" --quiet \
		--json "$WORK/g.json" > "$WORK/gen.log" 2>&1 || echo "gen exit $?: $(tail -2 "$WORK/gen.log")" >&2
	b1=$(telemetry)
	lfe_stop_restart
	line=$("$PY" - "$WORK/g.json" "$b0" "$b1" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))
a = [int(x) for x in sys.argv[2].split()]; b = [int(x) for x in sys.argv[3].split()]
binds = max(b[1] - a[1], 1)
print("%.0f %.3f %d" % (g["binds_per_s"], (b[0] - a[0]) / g["tsc_hz"] * 1e6 / binds, g["errors"]["total"]))
PYEOF
)
	echo "run $r: binds/s busy_us/bind errors: $line"
	res+=("$line")
done
printf '%s\n' "${res[@]}" | "$PY" -c '
import sys, statistics
r = [l.split() for l in sys.stdin if l.strip()]
print("median: %.0f binds/s, %.3f busy us/bind" % (statistics.median(float(x[0]) for x in r),
      statistics.median(float(x[1]) for x in r)))'
