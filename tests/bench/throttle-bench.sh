#!/usr/bin/env bash
# tests/bench/throttle-bench.sh — right-password binds of other users during
# a wrong-password flood, with the brute-force throttle off and on.
# Not CI; prints figures (medians of LFE_TB_RUNS runs).
#
# Setup: ldapfe with one worker lcore on CPU 0 and two net_memif ports
# (10.99.76.1 and 10.99.77.1). Two ldapfe-gen processes, both on CPU 1:
#   good   users 0..U/2-1, right passwords, persistent connections, a fixed
#          offered rate (LFE_TB_GOOD_RATE) — it shares CPU 1 with the flood,
#          so it cannot run "max" and stay comparable;
#   flood  users U/2..U-1, 100 % wrong passwords, --rate max: whatever CPU 1
#          has left (about half of it), from one source address.
# Four cases: {throttle off, on} x {flood off, on}, interleaved in each of
# the rounds. The figure is good's
# binds_ok per second under flood over the same without flood, per throttle
# setting; the daemon's busy share comes from its telemetry.
#
# Environment (defaults): LFE_TB_USERS=20000, LFE_TB_RUNS=3,
#   LFE_TB_DURATION=5 (s), LFE_TB_GOOD_RATE=30000, LFE_TB_CONNS=16,
#   LFE_TB_BUILD=build-release, LFE_NS_TAG (added to names).
# Needs root. Everything started is stopped by PID.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
USERS=${LFE_TB_USERS:-20000}
RUNS=${LFE_TB_RUNS:-3}
DUR=${LFE_TB_DURATION:-5}
GOOD_RATE=${LFE_TB_GOOD_RATE:-30000}
CONNS=${LFE_TB_CONNS:-16}
BUILD=${LFE_TB_BUILD:-$ROOT/build-release}
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD
TAG=${LFE_NS_TAG:-}
PY=/usr/bin/python3
SUFFIX="dc=example,dc=com"
LDAPFE=$BUILD/dataplane/ldapfe
CTL=$BUILD/mgmt/ldapfectl
GEN=$BUILD/gen/ldapfe-gen
PFX=lfe-thrb$TAG

[[ $EUID -eq 0 ]] || { echo "throttle-bench.sh: needs root" >&2; exit 1; }
for b in "$LDAPFE" "$CTL" "$GEN"; do [[ -x $b ]] || { echo "build $b first" >&2; exit 1; }; done
log() { echo "[$(date +%T)] $*" >&2; }
die() { echo "throttle-bench.sh: $*" >&2; exit 1; }

WORK=$(mktemp -d /tmp/lfe-thrb.XXXXXX)
LFE_PID= G1= G2=
cleanup() {
	local rc=$?
	set +e
	for p in $G1 $G2 $LFE_PID; do
		kill -0 "$p" 2>/dev/null && { kill -TERM "$p"; sleep 0.3; kill -KILL "$p" 2>/dev/null; }
		wait "$p" 2>/dev/null
	done
	rm -rf "/var/run/dpdk/$PFX-srv" "/var/run/dpdk/$PFX-good" "/var/run/dpdk/$PFX-flood" "$WORK"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "store: $USERS users ({SSHA})"
mkdir -p "$WORK/store"
"$PY" "$ROOT/tests/gen/mkldif.py" "$USERS" "$SUFFIX" > "$WORK/users.ldif"
"$CTL" --store "$WORK/store" init --suffix "$SUFFIX" >/dev/null
"$CTL" --store "$WORK/store" import "$WORK/users.ldif" >/dev/null

# conf THROTTLE(true|false): the daemon's config.
conf() {
	cat <<EOF
[store]
path = $WORK/store
[ldap]
port = 389
max_conns_per_core = 4096
[port0]
dev = net_memif0,role=server,id=0,socket=$WORK/good.sock,socket-abstract=no
address = 10.99.76.1/24
[port1]
dev = net_memif1,role=server,id=0,socket=$WORK/flood.sock,socket-abstract=no
address = 10.99.77.1/24
[workers]
lcores = 0
[throttle]
enabled = $1
src_failures = 100
dn_failures = 5
window_ms = 60000
penalty_ms = 60000
EOF
}

telemetry() {
	timeout 10 "$PY" - "/var/run/dpdk/$PFX-srv/dpdk_telemetry.v2" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
json.loads(s.recv(16384).decode())
s.send(b"/ldapfe/stats")
t = json.loads(s.recv(1 << 20).decode())["/ldapfe/stats"]["total"]
print(t["busy_cycles"], t["total_cycles"], t["binds_ok"], t["binds_failed"], t["binds_throttled"])
EOF
}

# gen NAME SOCK SRC DST ARGS...: one generator on CPU 1, in the background.
gen() {
	local name=$1 sock=$2 src=$3 dst=$4; shift 4
	timeout $((DUR + 40)) "$GEN" -l 1 --no-pci --no-huge -m 256 --file-prefix "$PFX-$name" \
		--log-level=lib.eal:error -- \
		--port "net_memif0,role=client,id=0,socket=$sock,socket-abstract=no" \
		--src-ip "$src/24" --dst-ip "$dst" --user-fmt "uid=user%07u,ou=people,$SUFFIX" \
		--password-fmt 'pw%07u' --workload persistent --conns "$CONNS" --duration "$DUR" \
		--connect-timeout-ms 10000 --quiet --json "$WORK/$name.json" "$@" > "$WORK/$name.log" 2>&1
}

# one THROTTLE FLOOD(0|1) RUN: prints "good_ok_per_s flood_binds_per_s busy_pct throttled"
one() {
	local thr=$1 flood=$2
	conf "$thr" > "$WORK/ldapfe.conf"
	rm -f "$WORK"/*.json
	"$LDAPFE" -l 0 --no-pci --no-huge -m 512 --file-prefix "$PFX-srv" --log-level=lib.eal:error \
		-- --config "$WORK/ldapfe.conf" > "$WORK/ldapfe.log" 2>&1 &
	LFE_PID=$!
	local i
	for ((i = 0; i < 300; i++)); do
		grep -q "ldapfe: ready" "$WORK/ldapfe.log" && break
		kill -0 "$LFE_PID" 2>/dev/null || die "ldapfe exited: $(tail -3 "$WORK/ldapfe.log")"
		sleep 0.1
	done
	local half=$((USERS / 2)) t0 t1
	gen good "$WORK/good.sock" 10.99.76.2 10.99.76.1 --users "$half" --user-base 0 \
		--rate "$GOOD_RATE" &
	G1=$!
	if ((flood)); then
		gen flood "$WORK/flood.sock" 10.99.77.2 10.99.77.1 --users "$half" --user-base "$half" \
			--wrong-pct 100 --rate max &
		G2=$!
	fi
	sleep 2   # connected and running: measure the daemon inside the window
	t0=$(telemetry)
	sleep $((DUR - 3))
	t1=$(telemetry)
	# Exit 1 (a mismatch, or binds unanswered when the run ends) still
	# writes the JSON, and mismatches of good are counted below; 2 means
	# the generator could not run.
	local ok=1 rc
	wait "$G1" && rc=0 || rc=$?
	((rc <= 1)) || { log "good generator exit $rc: $(tail -n 2 "$WORK/good.log")"; ok=0; }
	G1=
	if ((flood)); then
		wait "$G2" && rc=0 || rc=$?
		((rc <= 1)) || { log "flood generator exit $rc: $(tail -n 2 "$WORK/flood.log")"; ok=0; }
		G2=
	fi
	[[ -f $WORK/good.json && ( $flood == 0 || -f $WORK/flood.json ) ]] || ok=0
	kill -TERM "$LFE_PID"
	wait "$LFE_PID" || true
	LFE_PID=
	((ok)) || return 1
	"$PY" - "$WORK/good.json" "$WORK/flood.json" "$flood" "$t0" "$t1" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
f = json.load(open(sys.argv[2]))["binds_per_s"] if sys.argv[3] == "1" else 0.0
a, b = [list(map(int, s.split())) for s in sys.argv[4:6]]
busy = 100.0 * (b[0] - a[0]) / max(1, b[1] - a[1])
# Right passwords of good answered otherwise (49 would be a throttle false
# positive) are the last field.
print("%.0f %.0f %.1f %d %.1f %d" % (g["binds_ok"] / g["duration_s"], f, busy, b[4] - a[4],
                                     g["latency_us"]["p99"], g["errors"]["rc_unexpected_for_ok"]))
EOF
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# The four cases are interleaved within each round, so load from elsewhere
# on the machine spreads over all of them alike.
declare -A ROWS GOOD FLOOD BUSY THR P99 BAD
for ((r = 1; r <= RUNS; r++)); do
	for thr in false true; do
		for flood in 0 1; do
			# A generator that could not run (a connect timeout on a
			# loaded machine) costs the run one retry.
			row=$(one "$thr" "$flood") || row=$(one "$thr" "$flood") || die "run failed twice"
			log "round $r throttle=$thr flood=$flood: good ok/s, flood binds/s, daemon busy %, throttled, good p99 us, good answered not-ok: $row"
			ROWS[$thr-$flood]+="$row"$'\n'
		done
	done
done
for k in "${!ROWS[@]}"; do
	col() { printf '%s' "${ROWS[$k]}" | awk -v c="$1" '{print $c}' | median; }
	GOOD[$k]=$(col 1); FLOOD[$k]=$(col 2); BUSY[$k]=$(col 3); THR[$k]=$(col 4); P99[$k]=$(col 5)
	BAD[$k]=$(printf '%s' "${ROWS[$k]}" | awk '{s += $6} END {print s + 0}')
done

echo
echo "throttle-bench: $USERS users, $RUNS runs x ${DUR} s, good offered $GOOD_RATE binds/s on $CONNS conns"
echo "ldapfe 1 worker on CPU 0; both generators on CPU 1 (the flood takes what good leaves)"
# us/bind: the daemon's busy time per bind answered (good + flood), wall
# clock of a shared CPU, so other load on CPU 0 counts in it.
printf '%-9s %-6s %12s %14s %8s %10s %10s %12s %10s\n' throttle flood "good ok/s" "flood binds/s" "busy %" \
	"us/bind" "throttled" "good p99 us" "good !ok"
for thr in false true; do
	for flood in 0 1; do
		k=$thr-$flood
		per=$(awk -v b="${BUSY[$k]}" -v g="${GOOD[$k]}" -v f="${FLOOD[$k]}" \
			'BEGIN { printf "%.1f", ((g + f) > 0 ? b * 1e4 / (g + f) : 0) }')
		printf '%-9s %-6s %12s %14s %8s %10s %10s %12s %10s\n' "$thr" "$flood" "${GOOD[$k]}" "${FLOOD[$k]}" \
			"${BUSY[$k]}" "$per" "${THR[$k]}" "${P99[$k]}" "${BAD[$k]}"
	done
done
for thr in false true; do
	"$PY" -c 'import sys; a, b = float(sys.argv[2]), float(sys.argv[3]); print("throttle %-5s: good binds under flood = %.1f %% of unloaded" % (sys.argv[1], 100 * b / a if a else 0))' \
		"$thr" "${GOOD[$thr-0]}" "${GOOD[$thr-1]}"
done
