#!/usr/bin/env bash
# ldapfe-gen against the ldapfe daemon on net_af_packet over a veth pair
# between two namespaces (lfe-gen-srv, lfe-gen-cli), neither end with a
# kernel address: ldapfe owns one, ldapfe-gen the other. A 50-user {SSHA}
# store made with ldapfectl. At a low fixed rate for ~3 s each:
#   persistent, session and mix workloads: no mismatch of any kind, and in
#   mix the counts of ok/invalid answers match the shares asked for;
# a port nothing listens on, and the server stopped: a clear error and exit 2.
#
# Usage: test_gen.sh BUILD_DIR  (holding dataplane/ldapfe, mgmt/ldapfectl,
# gen/ldapfe-gen). Needs root; exits 77 (skip) otherwise.
set -euo pipefail

BUILD=${1:?usage: test_gen.sh BUILD_DIR}
LDAPFE=$BUILD/dataplane/ldapfe
CTL=$BUILD/mgmt/ldapfectl
GEN=$BUILD/gen/ldapfe-gen
PY=/usr/bin/python3
SRV=lfe-gen${LFE_NS_TAG:-}-srv
CLI=lfe-gen${LFE_NS_TAG:-}-cli
SADDR=10.99.41.1
CADDR=10.99.41.2
SUFFIX="dc=example,dc=com"
USERS=50

[[ $EUID -eq 0 ]] || { echo "SKIP: needs root"; exit 77; }
for b in "$LDAPFE" "$CTL" "$GEN"; do [[ -x $b ]] || { echo "SKIP: $b not built"; exit 77; }; done

WORK=$(mktemp -d /tmp/lfe-gen.XXXXXX)
LFE_PID=
cleanup() {
	local rc=$?
	set +e
	if [[ -n $LFE_PID ]] && kill -0 "$LFE_PID" 2>/dev/null; then
		kill -KILL "$LFE_PID"
		wait "$LFE_PID" 2>/dev/null
	fi
	ip netns del "$SRV" 2>/dev/null
	ip netns del "$CLI" 2>/dev/null
	rm -rf "/var/run/dpdk/$SRV" "/var/run/dpdk/$CLI"
	if ((rc != 0)); then
		for f in "$WORK"/*.log; do [[ -f $f ]] && { echo "--- $f"; tail -n 30 "$f"; }; done >&2
	fi
	rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "[$(date +%T)] $*" >&2; }
fail() { echo "FAIL: $*" >&2; exit 1; }

ip netns del "$SRV" 2>/dev/null || true
ip netns del "$CLI" 2>/dev/null || true
ip netns add "$SRV"
ip netns add "$CLI"
a=lfeg41a$$ b=lfeg41b$$
a=${a:0:15}; b=${b:0:15}
ip link add "$a" type veth peer name "$b"
ip link set "$a" netns "$SRV" name veth0
ip link set "$b" netns "$CLI" name veth0
for ns in "$SRV" "$CLI"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.veth0.disable_ipv6=1
	ip netns exec "$ns" ip link set veth0 up
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ethtool -K veth0 tx off rx off tso off gso off gro off >/dev/null 2>&1 || true
done

# Store: USERS users uid=user%07u with password pw%07u, {SSHA}.
STORE=$WORK/store
mkdir -p "$STORE"
"$CTL" --store "$STORE" init --suffix "$SUFFIX" >/dev/null
"$PY" "$(dirname "$0")/mkldif.py" "$USERS" "$SUFFIX" > "$WORK/users.ldif"
"$CTL" --store "$STORE" import "$WORK/users.ldif" >/dev/null

cat > "$WORK/ldapfe.conf" <<EOF
[store]
path = $STORE
[ldap]
port = 389
[port0]
dev = net_af_packet0,iface=veth0,qpairs=1
address = $SADDR/24
[workers]
idle_sleep_us = 20
EOF

start_server() {
	ip netns exec "$SRV" "$LDAPFE" -l 0 --no-pci --no-huge -m 512 --file-prefix "$SRV" \
		--log-level=lib.eal:error -- --config "$WORK/ldapfe.conf" > "$WORK/ldapfe.log" 2>&1 &
	LFE_PID=$!
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q "ldapfe: ready" "$WORK/ldapfe.log" && return 0
		kill -0 "$LFE_PID" 2>/dev/null || fail "ldapfe exited at start"
		sleep 0.1
	done
	fail "ldapfe not ready within 20 s"
}

stop_server() {
	kill -TERM "$LFE_PID"
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$LFE_PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$LFE_PID" 2>/dev/null && fail "ldapfe did not stop within 5 s"
	local rc=0
	wait "$LFE_PID" || rc=$?
	LFE_PID=
	((rc == 0)) || fail "ldapfe exit status $rc"
}

# gen NAME ARGS...: run ldapfe-gen in the client namespace, bounded in time;
# JSON in $WORK/NAME.json, output in $WORK/NAME.log, exit status in GEN_RC.
# GEN_LCORES (EAL -l) and GEN_QPAIRS change the generator's cores and queues.
gen() {
	local name=$1; shift
	GEN_RC=0
	ip netns exec "$CLI" timeout 60 "$GEN" -l "${GEN_LCORES:-1}" --no-pci --no-huge -m 256 --file-prefix "$CLI" \
		--log-level=lib.eal:error \
		--vdev "net_af_packet1,iface=veth0,qpairs=${GEN_QPAIRS:-1}" -- --port net_af_packet1 \
		--src-ip "$CADDR/24" --dst-ip "$SADDR" --dport 389 --users "$USERS" \
		--user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
		--json "$WORK/$name.json" "$@" > "$WORK/$name.log" 2>&1 || GEN_RC=$?
}

# jget NAME EXPR: a Python expression over the JSON report j.
jget() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$WORK/$1.json" "$2"; }

check_clean() {
	local name=$1
	((GEN_RC == 0)) || fail "$name: ldapfe-gen exit $GEN_RC: $(tail -n 5 "$WORK/$name.log")"
	[[ $(jget "$name" 'j["errors"]["total"]') == 0 ]] || fail "$name: mismatches: $(jget "$name" 'j["errors"]')"
	[[ $(jget "$name" 'j["binds"] == j["binds_ok"] + j["binds_invalid"]') == True ]] ||
		fail "$name: binds do not add up"
	grep -q "t=1s binds/s=" "$WORK/$name.log" || fail "$name: no per-second line"
}

start_server
log "ldapfe ready"

# Persistent: 4 connections, 300 binds/s for 3 s, all correct.
gen persistent --workload persistent --conns 4 --rate 300 --duration 3
check_clean persistent
n=$(jget persistent 'j["binds_ok"]')
((n >= 700 && n <= 960)) || fail "persistent: $n binds ok at 300/s for 3 s"
[[ $(jget persistent 'j["binds_invalid"]') == 0 ]] || fail "persistent: invalid answers"
log "ok: persistent: $n binds, p99 $(jget persistent 'j["latency_us"]["p99"]') us"
# Received checksums (gen/rxcsum.h): by default a sample of about 1 in 8 of
# the frames the port gave no verdict on is summed in software, none bad.
got=$(jget persistent '[c["mode"] == "sample" and c["bad"] == 0 and (r == 0 or r / 16 < c["checked"] < r / 4) for c in [j["rx_csum"]] for r in [j["frames"]["rx"] - c["port_good"]]][0]')
[[ $got == True ]] || fail "persistent: rx checksum sample: $(jget persistent 'j["rx_csum"], j["frames"]')"

# One connection at full speed for 8 s: far more binds than the 16,385 after
# which the daemon once stalled (a request gathered across the receive
# ring's wrap while the send ring had little contiguous room was consumed
# but never answered). ldapfe-gen exits 1 when a bind stays unanswered.
gen long --workload persistent --conns 1 --rate max --duration 8
check_clean long
n=$(jget long 'j["binds_ok"]')
((n > 16500)) || fail "long: only $n binds on one connection in 8 s"
log "ok: one connection, $n binds, none left unanswered"

# Session: connect, bind, unbind, close; 150 sessions/s for 3 s. 16
# connections: each has ~100 ms for its session, so a loaded machine's
# slower round trips do not cap the rate the pacing is asked for (with 4 it
# once made 289 binds).
gen session --workload session --conns 16 --rate 150 --duration 3 --rx-csum all
check_clean session
# --rx-csum all: every frame without the port's verdict summed here.
got=$(jget session '[c["mode"] == "all" and c["bad"] == 0 and c["checked"] + c["port_good"] == j["frames"]["rx"] > 0 for c in [j["rx_csum"]]][0]')
[[ $got == True ]] || fail "session: --rx-csum all: $(jget session 'j["rx_csum"], j["frames"]')"
s=$(jget session 'j["sessions"]')
n=$(jget session 'j["binds_ok"]')
((n >= 350 && n <= 480)) || fail "session: $n binds ok at 150/s for 3 s"
((s >= n - 16 && s <= n)) || fail "session: $s sessions for $n binds"
log "ok: session: $s sessions"

# Mix: 20 % wrong passwords, 30 % unknown DNs; 500 binds/s for 3 s. The
# shares must match within 5 points (a binomial over ~1500 draws).
gen mix --workload mix --conns 8 --rate 500 --duration 3 --wrong-pct 20 --unknown-pct 30 --seed 7
check_clean mix
got=$(jget mix 'abs(j["binds_invalid"] / j["binds"] - 0.5) < 0.05 and j["binds"] > 1200 and j["sessions"] > 100')
[[ $got == True ]] || fail "mix: invalid share or counts wrong: $(jget mix 'j')"
log "ok: mix: $(jget mix 'j["binds_ok"]') ok, $(jget mix 'j["binds_invalid"]') invalid, $(jget mix 'j["sessions"]') sessions"

# The same unpaced (--rate max): each next bind leaves from inside the TCP
# callback that made the connection ready (on_open, the answer's on_data),
# not from the ready queue; every answer still matched, every share right.
gen mixmax --workload mix --conns 4 --rate max --duration 2 --wrong-pct 20 --unknown-pct 30 --seed 9
check_clean mixmax
got=$(jget mixmax 'abs(j["binds_invalid"] / j["binds"] - 0.5) < 0.05 and j["binds"] > 1000 and j["sessions"] > 100')
[[ $got == True ]] || fail "mixmax: invalid share or counts wrong: $(jget mixmax 'j')"
log "ok: mix unpaced: $(jget mixmax 'j["binds"]') binds, $(jget mixmax 'j["sessions"]') sessions"

# Two generator lcores, each with its own queue pair (af_packet fanout
# hashes answers to either queue: those for the other lcore's connections
# are handed over), a Zipf user distribution: all correct, both lcores bind,
# their counts add up to the total.
GEN_LCORES=0,1 GEN_QPAIRS=2 gen lcores --workload persistent --conns 8 --rate 600 --duration 3 --lcores 2 \
	--dist zipf:1.1
check_clean lcores
got=$(jget lcores 'len(j["per_lcore"]) == 2 and all(x["binds"] > 200 for x in j["per_lcore"]) and sum(x["binds"] for x in j["per_lcore"]) == j["binds"] and j["binds"] > 1400')
[[ $got == True ]] || fail "lcores: per-lcore counts wrong: $(jget lcores 'j["per_lcore"], j["binds"]')"
log "ok: two lcores: $(jget lcores '[x["binds"] for x in j["per_lcore"]]') binds, $(jget lcores 'sum(x["handed_off"] for x in j["per_lcore"])') segments handed over"

# Two lcores on one queue pair: refused with a clear message, exit 2.
GEN_LCORES=0,1 gen lcores1q --workload persistent --conns 2 --rate 10 --duration 1 --lcores 2
((GEN_RC == 2)) || fail "lcores1q: exit $GEN_RC, want 2"
grep -q "needs 2 queue pairs" "$WORK/lcores1q.log" || fail "lcores1q: no clear error: $(cat "$WORK/lcores1q.log")"
log "ok: --lcores 2 on one queue: $(grep -o 'needs 2 queue pairs.*' "$WORK/lcores1q.log" | head -c 80)"

# A wrong expectation must be caught: tell the generator the passwords are
# something else, so every "ok" bind gets 49 where 0 was expected.
gen wrongfmt --workload persistent --conns 2 --rate 100 --duration 1 --password-fmt 'xx%07u'
((GEN_RC == 1)) || fail "wrongfmt: exit $GEN_RC, want 1"
[[ $(jget wrongfmt 'j["errors"]["result_code"] > 50 and j["binds_ok"] == 0') == True ]] ||
	fail "wrongfmt: result-code mismatches not counted: $(jget wrongfmt 'j["errors"]')"
log "ok: wrong expectations are counted as result_code errors"

# Nothing listens on port 390: the SYNs are refused, a clear error, exit 2.
gen refused --workload persistent --conns 2 --rate 10 --duration 1 --dport 390
((GEN_RC == 2)) || fail "refused: exit $GEN_RC, want 2"
grep -q "no connection to $SADDR:390" "$WORK/refused.log" || fail "refused: no clear error: $(cat "$WORK/refused.log")"
log "ok: closed port: $(grep -o 'error: .*' "$WORK/refused.log")"

# Checksum offload on a port that has it: ldapfe-gen on DPDK's net_tap (its
# PMD offers receive verdicts and transmit sums, computed in software), the
# tap bridged in the kernel to the veth towards ldapfe (af_packet, which
# verifies every checksum itself and drops bad ones). The tap exists once
# ldapfe-gen has started its port, so the bridge comes up while it asks
# for ARP (every 200 ms). Binds that succeed prove the sums the port
# finished from our pseudo-header sums; rx_csum counts the port's GOOD
# verdicts (only frames without one, ARP, go through the software path;
# the bridge's own IPv6 chatter may come with other verdicts and is
# dropped).
if compgen -G "/usr/lib/*/dpdk/pmds-*/librte_net_tap.so*" >/dev/null && [[ -c /dev/net/tun ]]; then
	TAP=lfegt$$
	TAP=${TAP:0:15}
	ip netns exec "$CLI" timeout 60 "$GEN" -l 0 --no-pci --no-huge -m 256 --file-prefix "$CLI" \
		--log-level=lib.eal:error --vdev "net_tap0,iface=$TAP" -- --port net_tap0 \
		--src-ip "$CADDR/24" --dst-ip "$SADDR" --dport 389 --users "$USERS" \
		--user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' --arp-timeout-ms 15000 \
		--workload session --conns 4 --rate 200 --duration 2 --json "$WORK/tap.json" > "$WORK/tap.log" 2>&1 &
	gpid=$!
	for ((i = 0; i < 200; i++)); do
		grep -q "ldapfe-gen: port" "$WORK/tap.log" && break
		sleep 0.1
	done
	# The kernel's end of the tap starts with the port's MAC, which a bridge
	# would take for its own and never forward; once the port has started,
	# the kernel's end gets another.
	ip netns exec "$CLI" sysctl -qw "net.ipv6.conf.$TAP.disable_ipv6=1" 2>/dev/null || true
	ip netns exec "$CLI" ip link set "$TAP" address 02:00:00:99:41:02
	ip netns exec "$CLI" ip link add lfebr0 type bridge
	ip netns exec "$CLI" ip link set veth0 master lfebr0
	ip netns exec "$CLI" ip link set "$TAP" master lfebr0
	ip netns exec "$CLI" ip link set "$TAP" up
	ip netns exec "$CLI" sysctl -qw net.ipv6.conf.lfebr0.disable_ipv6=1 2>/dev/null || true
	ip netns exec "$CLI" ip link set lfebr0 up
	GEN_RC=0
	wait "$gpid" || GEN_RC=$?
	ip netns exec "$CLI" ip link del lfebr0
	check_clean tap
	grep -q "checksums: rx port, tx port" "$WORK/tap.log" ||
		fail "tap: the port's offload not used: $(grep -o 'checksums:.*' "$WORK/tap.log")"
	got=$(jget tap '[c["bad"] == 0 and c["port_good"] >= 0.9 * j["frames"]["rx"] > 0 and c["checked"] < 20 and j["sessions"] > 300 for c in [j["rx_csum"]]][0]')
	[[ $got == True ]] || fail "tap: rx checksum counts: $(jget tap 'j["rx_csum"], j["frames"], j["sessions"]')"
	log "ok: net_tap with checksum offload: $(jget tap 'j["sessions"]') sessions, rx verdicts from the port $(jget tap 'j["rx_csum"]["port_good"]'), software $(jget tap 'j["rx_csum"]["checked"]')"
else
	log "skip: net_tap (no PMD or /dev/net/tun)"
fi

stop_server
log "ldapfe stopped"

# Server absent: ARP goes unanswered; a clear error and exit 2 within ~2 s.
t0=$(date +%s%N)
gen absent --workload persistent --conns 1 --rate 10 --duration 1
t1=$(date +%s%N)
((GEN_RC == 2)) || fail "absent: exit $GEN_RC, want 2"
grep -q "no ARP answer from $SADDR" "$WORK/absent.log" || fail "absent: no clear error: $(cat "$WORK/absent.log")"
(((t1 - t0) / 1000000 < 10000)) || fail "absent: took $(((t1 - t0) / 1000000)) ms"
log "ok: absent server: $(grep -o 'error: .*' "$WORK/absent.log")"
echo "PASS test_gen"
