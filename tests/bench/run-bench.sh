#!/usr/bin/env bash
# tests/bench/run-bench.sh — ldapfe against OpenLDAP slapd, one core each, in
# one run, driven by ldapfe-gen. Not part of CI; method and figures in docs/BENCHMARKS.md.
#
#   1. ldapfe (1 worker lcore, CPU 0) ⟷ ldapfe-gen (CPU 1) over net_memif:
#      persistent binds for every store size × user distribution × daemon
#      config variant, session workload with uniform users;
#   2. the same generator over net_af_packet on a veth pair between two
#      namespaces, against ldapfe and against slapd (back-mdb, the same users
#      from the same LDIF through slapadd, pinned with taskset to CPU 0);
#   3. callgrind: instructions per bind of ldapfe by layer
#      (tcp/ldap/backend/net/pmd), --no-huge, a fixed window of binds.
# Steps 2 and 3 use the largest store and uniform users.
# Each figure is the median of LFE_BENCH_RUNS runs. Results: a table on
# stdout (per row binds/s, p50/p99, server and generator busy µs per bind,
# and which side was the limit: the core that was busier, if ≥ 85 %),
# OUT/results.json and OUT/bench.png (tests/bench/report.py).
#
# Environment (defaults):
#   LFE_BENCH_USERS="100000 1000000"  store sizes ({SSHA} passwords)
#   LFE_BENCH_DISTS="uniform zipf:1.0"  ldapfe-gen --dist values (memif rows)
#   LFE_BENCH_VARIANTS=default  daemon config variants (memif rows); variant V
#                             adds the items of LFE_BENCH_CONF_V
#   LFE_BENCH_DAEMON_CONF=    items added to every daemon config; an item is
#                             section.key=value (no spaces), items separated
#                             by spaces or newlines, e.g.
#                             LFE_BENCH_VARIANTS="nocache cache"
#                             LFE_BENCH_CONF_nocache=store.bind_cache=0
#                             LFE_BENCH_CONF_cache=store.bind_cache=1048576
#   LFE_BENCH_GEN_LCORES=1    generator lcores (CPU 1 and up; memif: the
#                             daemon then needs as many queues)
#   LFE_BENCH_GEN_ZC=1        memif rows with the generator (memif's
#                             client) in zero-copy mode (its mbufs are the
#                             shared buffers; EAL --single-file-segments);
#                             0: copy mode. Zero-copy costs the generator
#                             ~9 % fewer instructions a bind, and with its
#                             write prefetch of each rx burst it keeps its
#                             time per bind when the VM puts the two vCPUs
#                             far apart (persistent, server/generator busy
#                             time: 2.39-2.70 in 14 runs, where copy mode
#                             gave 1.86-2.40 in 6)
#   LFE_BENCH_RUNS=3          runs per figure (median)
#   LFE_BENCH_DURATION=10     seconds per run
#   LFE_BENCH_WARM=0          every row (ldapfe and slapd): a persistent
#                             generator run of this many seconds against the
#                             same server before the measured one (not counted):
#                             the credential cache's steady state (every
#                             user bound once; at 1M uniform users a few
#                             seconds) instead of its first binds
#   LFE_BENCH_CONNS=16        generator connections (persistent/session)
#   LFE_BENCH_BPC=0           persistent: binds per connection before it is
#                             reopened (0 = never)
#   LFE_BENCH_HUGEPAGES=512   2 MiB pages to reserve (0: --no-huge everywhere)
#   LFE_BENCH_CALLGRIND=1     run the callgrind recipe
#   LFE_BENCH_SLAPD=1         measure slapd
#   LFE_BENCH_AFPACKET=1      the af_packet rows (0: memif only, and no
#                             slapd: quick before/after pairs)
#   LFE_BENCH_HALF=1          memif rows: also persistent binds at half the
#                             row's median binds/s (workload "half": the
#                             latency at half load, issue 13's p99 aim)
#   LFE_BENCH_HOLD=0          4. hold this many connections over memif (64
#                             source addresses, 5 % binding at 10,000/s for
#                             DURATION s): established, daemon and generator
#                             RSS, bind p50/p99 (OUT/hold.json); 0 = skip
# Before the runs, bench_jitter measures for 3 s what the machine itself
# takes from a spinning thread on CPUs 0 and 1 (gaps per second by length,
# steal): OUT/jitter.txt, printed with the table.
#   LFE_BENCH_BUILD=build-bench  build dir (meson -O3 -g, made if absent)
#   LFE_BENCH_OUT=BUILD/bench-results
# Needs root (namespaces, hugepages). Namespaces, EAL prefixes and clean-up
# are tests/integration/lib.sh's (lfe_init bench 51; LFE_NS_TAG as there):
# memif rows in lfe-bench<tag>-srv, af_packet rows between it and
# lfe-bench<tag>-cli; everything started is stopped by PID and the
# namespaces are deleted on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
USERS_LIST=${LFE_BENCH_USERS:-100000 1000000}
DISTS=${LFE_BENCH_DISTS:-uniform zipf:1.0}
VARIANTS=${LFE_BENCH_VARIANTS:-default}
GEN_LCORES=${LFE_BENCH_GEN_LCORES:-1}
GEN_ZC=${LFE_BENCH_GEN_ZC:-1}
# The largest store: the af_packet, slapd and callgrind steps use it.
USERS=$(tr ' ' '\n' <<<"$USERS_LIST" | sort -n | tail -1)
RUNS=${LFE_BENCH_RUNS:-3}
WARM=${LFE_BENCH_WARM:-0}
DUR=${LFE_BENCH_DURATION:-10}
CONNS=${LFE_BENCH_CONNS:-16}
BPC=${LFE_BENCH_BPC:-0}
HUGE=${LFE_BENCH_HUGEPAGES:-512}
DO_CG=${LFE_BENCH_CALLGRIND:-1}
DO_SLAPD=${LFE_BENCH_SLAPD:-1}
DO_AFP=${LFE_BENCH_AFPACKET:-1}
DO_HALF=${LFE_BENCH_HALF:-1}
HALF_RATE=
BUILD=${LFE_BENCH_BUILD:-$ROOT/build-bench}
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD
OUT=${LFE_BENCH_OUT:-$BUILD/bench-results}
PY=/usr/bin/python3
SUFFIX="dc=example,dc=com"

[[ $EUID -eq 0 ]] || { echo "run-bench.sh: needs root" >&2; exit 1; }
log() { echo "[$(date +%T)] $*" >&2; }
die() { echo "run-bench.sh: $*" >&2; exit 1; }

# ---- dependencies and build ----
need=()
for p in slapd ldap-utils valgrind python3-matplotlib libdpdk-dev meson; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
((${#need[@]} == 0)) || bash "$ROOT/scripts/deps.sh" --bench
if [[ ! -f $BUILD/build.ninja ]]; then
	# -O3 with debug info: callgrind attributes instructions to source files.
	meson setup "$BUILD" "$ROOT" --buildtype=debugoptimized -Doptimization=3 >/dev/null
fi
meson compile -C "$BUILD" dataplane/ldapfe mgmt/ldapfectl gen/ldapfe-gen tests/bench/bench_jitter >/dev/null
LFE_BUILD=$BUILD
# shellcheck source=../integration/lib.sh
source "$ROOT/tests/integration/lib.sh"
LDAPFE=$LFE_LDAPFE
CTL=$LFE_CTL
GEN=$BUILD/gen/ldapfe-gen

WORK=$BUILD/bench-work
mkdir -p "$WORK" "$OUT"
# The machine's own gaps on the two CPUs, before anything runs: the floor
# under every p99 below (bench_jitter.c), printed with the table.
"$BUILD/tests/bench/bench_jitter" 3 0 1 > "$OUT/jitter.txt"
RUNS_FILE=$OUT/runs.jsonl
: > "$RUNS_FILE"

# Namespaces (veth0 in each, no kernel address: the generator's af_packet
# owns the client's), work dir, EXIT trap: lib.sh's lfe_init and
# lfe_cleanup (LFE_PID, LFE_EXTRA_PIDS, the namespaces, the EAL prefixes
# PFX and PFX-gen); here also the generator's hugepage files.
lfe_init bench 51
ip netns exec "$LFE_CLI" ip addr flush dev veth0
SRV=$LFE_SRV CLI=$LFE_CLI MEM=$LFE_SRV
SADDR=$LFE_SADDR CADDR=$LFE_CADDR
PFX=$LFE_PREFIX
LFE_PID=
bench_cleanup() {
	local rc=$?
	set +e
	rm -f "/dev/hugepages/$PFX-gen"*   # zero-copy: no --huge-unlink
	(exit "$rc")   # lfe_cleanup exits with the script's status
	lfe_cleanup
}
trap bench_cleanup EXIT

# ---- data: per store size one LDIF and an ldapfe store; slapd's database
# for the largest ----
slapd_conf() {   # slapd_conf USERS: write WORK/slapd.conf for that store size
	cat > "$WORK/slapd.conf" <<EOF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile $WORK/slapd.pid
# No per-operation logging: ldapfe logs nothing per bind either.
loglevel 0
database mdb
maxsize 17179869184
suffix "$SUFFIX"
rootdn "cn=admin,$SUFFIX"
directory $WORK/slapd-$1
access to attrs=userPassword by anonymous auth by * none
access to * by * read
EOF
}
for n in $USERS_LIST; do
	if [[ ! -f $WORK/data-$n.done ]]; then
		rm -rf "$WORK/store-$n"
		log "generating $n users ({SSHA})"
		"$PY" "$ROOT/tests/gen/mkldif.py" "$n" "$SUFFIX" > "$WORK/users-$n.ldif"
		log "ldapfectl import"
		mkdir -p "$WORK/store-$n"
		"$CTL" --store "$WORK/store-$n" init --suffix "$SUFFIX" >/dev/null
		t0=$(date +%s)
		"$CTL" --store "$WORK/store-$n" import "$WORK/users-$n.ldif" >/dev/null
		log "ldapfectl import: $(($(date +%s) - t0)) s"
		touch "$WORK/data-$n.done"
	fi
done
STORE=$WORK/store-$USERS
SLAPDB=$WORK/slapd-$USERS
slapd_conf "$USERS"
if [[ $DO_SLAPD == 1 && ! -f $WORK/slapd-$USERS.done ]]; then
	rm -rf "$SLAPDB"
	mkdir -p "$SLAPDB"
	log "slapadd"
	t0=$(date +%s)
	slapadd -q -f "$WORK/slapd.conf" -l "$WORK/users-$USERS.ldif"
	log "slapadd: $(($(date +%s) - t0)) s"
	touch "$WORK/slapd-$USERS.done"
fi

# ---- hugepages ----
if ((HUGE > 0)); then
	cur=$(cat /proc/sys/vm/nr_hugepages)
	((cur >= HUGE)) || echo "$HUGE" > /proc/sys/vm/nr_hugepages
	mkdir -p /dev/hugepages
	mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages
	free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
	if ((free >= 2 * 256)); then
		EAL_MEM=(-m 512 --huge-unlink)
		log "hugepages: $free free"
	else
		log "hugepages: only $free free; falling back to --no-huge"
		EAL_MEM=(--no-huge -m 512)
	fi
else
	EAL_MEM=(--no-huge -m 512)
fi

# ---- helpers ----
# conf_with FILE VARIANT [ITEMS] < CONFIG: write CONFIG to FILE with the
# section.key=value items of LFE_BENCH_DAEMON_CONF, LFE_BENCH_CONF_VARIANT
# and ITEMS put under their sections (made when absent; an item replaces
# the key).
conf_with() {
	local var=LFE_BENCH_CONF_$2
	"$PY" -c '
import re, sys
path, items = sys.argv[1], sys.argv[2].split()
sections, order, cur = {}, [], None
for line in sys.stdin.read().splitlines():
    m = re.match(r"^\[(.+)\]\s*$", line)
    if m:
        cur = m.group(1)
        if cur not in sections:
            sections[cur] = []
            order.append(cur)
    elif cur is not None and line.strip():
        sections[cur].append(line)
for it in items:
    m = re.match(r"^([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)=(.*)$", it)
    if not m:
        sys.exit("run-bench.sh: bad config item %r (want section.key=value)" % it)
    sec, key, val = m.groups()
    if sec not in sections:
        sections[sec] = []
        order.append(sec)
    sections[sec] = [l for l in sections[sec] if l.split("=")[0].strip() != key] + ["%s = %s" % (key, val)]
with open(path, "w") as f:
    for sec in order:
        f.write("[%s]\n%s\n" % (sec, "\n".join(sections[sec])))
' "$1" "${LFE_BENCH_DAEMON_CONF:-} ${!var:-} ${3:-}"
}

# telemetry PREFIX NS: busy_cycles and binds of ldapfe, "busy binds".
telemetry() {
	ip netns exec "$2" timeout 10 "$PY" - "/var/run/dpdk/$1/dpdk_telemetry.v2" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
json.loads(s.recv(16384).decode())
s.send(b"/ldapfe/stats")
t = json.loads(s.recv(1 << 20).decode())["/ldapfe/stats"]["total"]
print(t["busy_cycles"], t["binds_ok"] + t["binds_failed"])
EOF
}

# start_ldapfe NS CONF PREFIX [EAL args...]: wait until ready.
start_ldapfe() {
	local ns=$1 conf=$2 prefix=$3; shift 3
	# Empty it here: the background job's own redirection may come after
	# the first grep below, which would then see the last daemon's "ready"
	# (and telemetry be asked before this one answers).
	: > "$WORK/ldapfe.log"
	ip netns exec "$ns" "$LDAPFE" -l 0 --no-pci "$@" --file-prefix "$prefix" \
		--log-level=lib.eal:error -- --config "$conf" > "$WORK/ldapfe.log" 2>&1 &
	LFE_PID=$!
	local i
	for ((i = 0; i < 300; i++)); do
		grep -q "ldapfe: ready" "$WORK/ldapfe.log" && return 0
		kill -0 "$LFE_PID" 2>/dev/null || { cat "$WORK/ldapfe.log" >&2; die "ldapfe exited at start"; }
		sleep 0.1
	done
	die "ldapfe not ready in 30 s"
}

# gen NS NAME WORKLOAD PORT_ARGS...: one generator run; JSON in OUT/NAME.json.
gen() {
	local ns=$1 name=$2 wl=$3; shift 3
	local extra=() rate=max
	[[ $wl == half ]] && wl=persistent rate=$HALF_RATE   # persistent at half load
	[[ $wl == persistent ]] && extra=(--binds-per-conn "$BPC")
	local rc=0 mem=("${EAL_MEM[@]}")
	[[ $* == *net_memif* ]] && mem=("${MEMIF_GEN_MEM[@]}")
	rm -f "$OUT/$name.json"   # a failed run leaves none, not the last one's
	ip netns exec "$ns" timeout $((DUR + 60)) "$GEN" -l "1-$GEN_LCORES" --no-pci "${mem[@]}" \
		--file-prefix "$PFX-gen" --log-level=lib.eal:error "$@" \
		--users "$CUR_USERS" --dist "$CUR_DIST" --lcores "$GEN_LCORES" \
		--user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
		--workload "$wl" --conns "$CONNS" --rate "$rate" --duration "$DUR" --quiet \
		--json "$OUT/$name.json" "${extra[@]}" > "$OUT/$name.log" 2>&1 || rc=$?
	((rc == 0)) || log "warning: $name: ldapfe-gen exit $rc: $(grep -h 'errors\|error:' "$OUT/$name.log" | head -2)"
	[[ -f $OUT/$name.json ]] || die "$name: no JSON: $(tail -3 "$OUT/$name.log")"
}

# The store size, user distribution and config variant of the current rows.
CUR_USERS=$USERS
CUR_DIST=uniform
CUR_VARIANT=${VARIANTS%% *}

# record TARGET TRANSPORT WL RUN NAME CPU_S: one line of runs.jsonl.
record() {
	"$PY" - "$OUT/$5.json" "$1" "$2" "$3" "$4" "$6" "$CUR_USERS" "$CUR_DIST" "$CUR_VARIANT" \
		>> "$RUNS_FILE" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
print(json.dumps({"target": sys.argv[2], "transport": sys.argv[3], "workload": sys.argv[4],
                  "run": int(sys.argv[5]), "server_cpu_s": float(sys.argv[6]),
                  "users": int(sys.argv[7]), "dist": sys.argv[8], "variant": sys.argv[9], "gen": g}))
EOF
}

# ldapfe_run NS CONF TRANSPORT WL RUN GEN_NS GEN_PORT_ARGS...
ldapfe_run() {
	local ns=$1 conf=$2 tr=$3 wl=$4 run=$5 gns=$6; shift 6
	local name=ldapfe-$tr-$wl-$CUR_USERS-${CUR_DIST/:/}-$CUR_VARIANT-$run
	# A daemon that died (DPDK 22.11's memif PMD can fault when its peer
	# disconnects) leaves its socket behind, and the next could not bind it.
	[[ $tr != memif ]] || rm -f "$MEMSOCK"
	start_ldapfe "$ns" "$conf" "$PFX" "${EAL_MEM[@]}"
	sleep 1
	if ((WARM > 0)); then
		DUR=$WARM gen "$gns" "$name-warm" persistent "$@"
		sleep 1
	fi
	# memif: the link comes up once the generator connects; telemetry is
	# read around the generator's run so busy cycles cover only it.
	local b0 b1
	b0=$(telemetry "$PFX" "$ns")
	gen "$gns" "$name" "$wl" "$@"
	b1=$(telemetry "$PFX" "$ns")
	lfe_stop_pid "$LFE_PID"
	LFE_PID=
	local hz cpu
	hz=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tsc_hz"])' "$OUT/$name.json")
	cpu=$("$PY" -c 'import sys; a=sys.argv[1].split(); b=sys.argv[2].split(); print((int(b[0])-int(a[0]))/float(sys.argv[3]))' "$b0" "$b1" "$hz")
	record ldapfe "$tr" "$wl" "$run" "$name" "$cpu"
	log "$name: $("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print("%.0f binds/s, %.0f sessions/s, p50 %.1f us, p99 %.1f us, errors %d, generator busy %.3f s" % (j["binds_per_s"], j["sessions_per_s"], j["latency_us"]["p50"], j["latency_us"]["p99"], j["errors"]["total"], j.get("gen_busy_cycles", 0) / j["tsc_hz"]))' "$OUT/$name.json"), server busy ${cpu} s"
}

# ---- 1. memif ----
MEMSOCK=$WORK/memif.sock
# memif_conf STORE VARIANT [ITEMS [FILE]]: the daemon's memif config
# (WORK/ldapfe-memif.conf unless FILE).
memif_conf() {
	conf_with "${4:-$WORK/ldapfe-memif.conf}" "$2" "${3:-}" <<EOF
[store]
path = $1
[ldap]
port = 389
max_conns_per_core = 65536
[port0]
dev = net_memif0,role=server,id=0,socket=$MEMSOCK,socket-abstract=no
address = $SADDR/24
[workers]
lcores = 0
EOF
}
# The generator on memif: EAL memory args (MEMIF_GEN_MEM) and the rest.
# Zero-copy maps its memory into the daemon as the regions, one file per
# segment list (--single-file-segments), which --huge-unlink would remove.
MEMIF_GEN_DEV="net_memif0,role=client,id=0,socket=$MEMSOCK,socket-abstract=no"
MEMIF_GEN_MEM=("${EAL_MEM[@]}")
MEMIF_GEN=(--)
if ((GEN_ZC)); then
	MEMIF_GEN_DEV+=",zero-copy=yes"
	MEMIF_GEN_MEM=()
	for a in "${EAL_MEM[@]}"; do [[ $a == --huge-unlink ]] || MEMIF_GEN_MEM+=("$a"); done
	MEMIF_GEN=(--single-file-segments --)
fi
MEMIF_GEN+=(--port "$MEMIF_GEN_DEV" --src-ip "$CADDR/24" --dst-ip "$SADDR")
for CUR_USERS in $USERS_LIST; do
	for CUR_VARIANT in $VARIANTS; do
		memif_conf "$WORK/store-$CUR_USERS" "$CUR_VARIANT"
		for CUR_DIST in $DISTS; do
			wls=persistent
			[[ $CUR_DIST == uniform ]] && wls="persistent session"
			for wl in $wls; do
				for ((r = 1; r <= RUNS; r++)); do
					ldapfe_run "$MEM" "$WORK/ldapfe-memif.conf" memif "$wl" "$r" "$MEM" "${MEMIF_GEN[@]}"
				done
			done
			[[ $DO_HALF == 1 ]] || continue
			HALF_RATE=$("$PY" - "$RUNS_FILE" "$CUR_USERS" "$CUR_DIST" "$CUR_VARIANT" <<'EOF'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
b = [r["gen"]["binds_per_s"] for r in rs if (r["target"], r["transport"], r["workload"], str(r["users"]),
     r["dist"], r["variant"]) == ("ldapfe", "memif", "persistent", *sys.argv[2:5])]
print(max(1000, int(statistics.median(b) / 2)) if b else 1000)
EOF
)
			log "half load: persistent at $HALF_RATE binds/s"
			for ((r = 1; r <= RUNS; r++)); do
				ldapfe_run "$MEM" "$WORK/ldapfe-memif.conf" memif half "$r" "$MEM" "${MEMIF_GEN[@]}"
			done
		done
	done
done
# The remaining steps: the largest store, uniform users, the first variant.
CUR_USERS=$USERS
CUR_DIST=uniform
CUR_VARIANT=${VARIANTS%% *}
memif_conf "$STORE" "$CUR_VARIANT"

# ---- 2. af_packet over veth: ldapfe, then slapd ----
if [[ $DO_AFP == 1 ]]; then
conf_with "$WORK/ldapfe-afp.conf" "$CUR_VARIANT" <<EOF
[store]
path = $STORE
[ldap]
port = 389
max_conns_per_core = 65536
[port0]
dev = net_af_packet0,iface=veth0,qpairs=1
address = $SADDR/24
[workers]
lcores = 0
EOF
AFP_GEN=(--vdev "net_af_packet1,iface=veth0,qpairs=1" -- --port net_af_packet1
	--src-ip "$CADDR/24" --dst-ip "$SADDR")
for wl in persistent session; do
	for ((r = 1; r <= RUNS; r++)); do
		ldapfe_run "$SRV" "$WORK/ldapfe-afp.conf" afpacket "$wl" "$r" "$CLI" "${AFP_GEN[@]}"
	done
done

if [[ $DO_SLAPD == 1 ]]; then
	ip netns exec "$SRV" ip addr add "$SADDR/24" dev veth0
	ip netns exec "$SRV" sysctl -qw net.core.somaxconn=4096
	ip netns exec "$SRV" sysctl -qw net.ipv4.tcp_max_syn_backlog=4096
	TCK=$(getconf CLK_TCK)
	for wl in persistent session; do
		for ((r = 1; r <= RUNS; r++)); do
			name=slapd-afpacket-$wl-$r
			ip netns exec "$SRV" taskset -c 0 slapd -f "$WORK/slapd.conf" -h "ldap://$SADDR:389/" \
				-d 0 > "$WORK/slapd.log" 2>&1 &
			SLAPD_PID=$!
			LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $SLAPD_PID"
			for ((i = 0; i < 100; i++)); do
				ip netns exec "$SRV" ldapwhoami -x -H "ldap://$SADDR" >/dev/null 2>&1 && break
				kill -0 "$SLAPD_PID" 2>/dev/null || die "slapd exited: $(tail -3 "$WORK/slapd.log")"
				sleep 0.1
			done
			if ((WARM > 0)); then   # its caches, as ldapfe's
				DUR=$WARM gen "$CLI" "$name-warm" persistent "${AFP_GEN[@]}"
			fi
			c0=$(awk '{print $14 + $15}' "/proc/$SLAPD_PID/stat")
			gen "$CLI" "$name" "$wl" "${AFP_GEN[@]}"
			c1=$(awk '{print $14 + $15}' "/proc/$SLAPD_PID/stat")
			lfe_stop_pid "$SLAPD_PID"
			SLAPD_PID=
			cpu=$("$PY" -c "print(($c1 - $c0) / $TCK)")
			record slapd afpacket "$wl" "$r" "$name" "$cpu"
			log "$name: $("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print("%.0f binds/s, %.0f sessions/s, p50 %.1f us, p99 %.1f us, errors %d" % (j["binds_per_s"], j["sessions_per_s"], j["latency_us"]["p50"], j["latency_us"]["p99"], j["errors"]["total"]))' "$OUT/$name.json"), slapd CPU ${cpu} s"
		done
	done
	ip netns exec "$SRV" ip addr flush dev veth0
fi

fi   # DO_AFP

# ---- 3. callgrind: instructions per bind by layer ----
CG_JSON=
if [[ $DO_CG == 1 ]]; then
	log "callgrind: ldapfe --no-huge under valgrind, persistent binds over memif"
	rm -f "$OUT"/callgrind.out.*
	# --fair-sched: the worker busy-polls and valgrind runs one thread at a
	# time; without it memif's control thread never brings the link up.
	ip netns exec "$MEM" valgrind --tool=callgrind --fair-sched=yes --collect-atstart=no \
		--toggle-collect=lfe_worker_main --callgrind-out-file="$OUT/callgrind.out.%p" \
		"$LDAPFE" -l 0 --no-pci --no-huge -m 512 --file-prefix "$PFX" \
		--log-level=lib.eal:error -- --config "$WORK/ldapfe-memif.conf" > "$WORK/ldapfe-cg.log" 2>&1 &
	LFE_PID=$!
	for ((i = 0; i < 600; i++)); do
		grep -q "ldapfe: ready" "$WORK/ldapfe-cg.log" 2>/dev/null && break
		kill -0 "$LFE_PID" 2>/dev/null || die "ldapfe under valgrind exited: $(tail -5 "$WORK/ldapfe-cg.log")"
		sleep 0.1
	done
	sleep 2
	# Count only the bind window: zero before, dump after the generator.
	# 256 connections keep the slowed-down server busy, so few idle polls
	# are counted.
	rm -f "$OUT/callgrind-gen.json"
	# memif's handshake runs in the daemon's control thread, under valgrind
	# too: on a loaded machine it can outlast the generator's 10 s wait for
	# the link, which then says "still down"; try again (callgrind-bind.sh
	# does the same).
	for ((try = 1; try <= 3; try++)); do
		rc=0
		callgrind_control -z "$LFE_PID" >/dev/null 2>&1 || log "callgrind_control -z failed"
		ip netns exec "$MEM" timeout $((DUR + 60)) "$GEN" -l 1 --no-pci --no-huge -m 512 \
			--file-prefix "$PFX-gen" --log-level=lib.eal:error "${MEMIF_GEN[@]}" \
			--users "$USERS" --user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
			--workload persistent --conns 256 --rate max --duration "$DUR" --quiet \
			--binds-per-conn "$BPC" --connect-timeout-ms 20000 --json "$OUT/callgrind-gen.json" \
			> "$OUT/callgrind-gen.log" 2>&1 || rc=$?
		((rc == 0)) && break
		log "callgrind generator exit $rc (try $try): $(tail -1 "$OUT/callgrind-gen.log")"
		grep -q "still down" "$OUT/callgrind-gen.log" || break
	done
	callgrind_control -d "$LFE_PID" >/dev/null 2>&1 || log "callgrind_control -d failed"
	sleep 1
	dump=$OUT/callgrind.out.$LFE_PID.1   # the first dump: the bind window only
	lfe_stop_pid "$LFE_PID"
	LFE_PID=
	if [[ -f $dump && -f $OUT/callgrind-gen.json ]]; then
		callgrind_annotate --inclusive=no --auto=no --threshold=100 "$dump" \
			> "$OUT/callgrind-annotate.txt" 2>/dev/null || true
		CG_JSON=$OUT/callgrind.json
		"$PY" "$ROOT/tests/bench/report.py" callgrind "$OUT/callgrind-annotate.txt" \
			"$OUT/callgrind-gen.json" > "$CG_JSON"
	else
		log "callgrind: no dump or no generator result"
	fi
fi

# ---- 4. hold: many connections on one worker ----
HOLD=${LFE_BENCH_HOLD:-0}
if ((HOLD > 0)); then
	log "hold: $HOLD connections over memif"
	memif_conf "$STORE" "$CUR_VARIANT" "ldap.max_conns_per_core=$((HOLD + 1024))
		ldap.max_conns_per_source=$((HOLD / 64 + 64)) ldap.first_request_ms=0" "$WORK/ldapfe-hold.conf"
	start_ldapfe "$MEM" "$WORK/ldapfe-hold.conf" "$PFX" "${EAL_MEM[@]}"
	ip netns exec "$MEM" timeout $((DUR + 600)) "$GEN" -l 1 --no-pci "${MEMIF_GEN_MEM[@]}" \
		--file-prefix "$PFX-gen" --log-level=lib.eal:error "${MEMIF_GEN[@]}" \
		--src-ips "10.99.$LFE_NET.64-10.99.$LFE_NET.127" --users "$USERS" \
		--user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
		--workload hold --conns "$HOLD" --syn-rate 20000 --bind-frac 0.05 --rate 10000 \
		--duration "$DUR" --connect-timeout-ms 10000 --json "$OUT/hold.json" > "$OUT/hold.log" 2>&1 &
	gpid=$!
	LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $gpid"
	for ((i = 0; i < 6000; i++)); do
		grep -q "hold: .* connections established" "$OUT/hold.log" && break
		kill -0 "$gpid" 2>/dev/null || break
		sleep 0.1
	done
	sleep 1
	drss=$(awk '/VmRSS/ {print $2}' "/proc/$LFE_PID/status")
	wait "$gpid" || log "hold: ldapfe-gen exit $?"
	lfe_stop_pid "$LFE_PID"
	LFE_PID=
	[[ -f $OUT/hold.json ]] && "$PY" - "$OUT/hold.json" "$drss" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
h, d = j["hold"], int(sys.argv[2] or 0)
j["daemon_rss_kib"] = d
json.dump(j, open(sys.argv[1], "w"), indent=2)
print("hold: %d of %d established (opened in %.1f s); daemon RSS %d KiB (%.0f B per connection), "
      "generator RSS %d KiB; %d binds on %d connections, p50 %.1f us p99 %.1f us, errors %d" % (
          h["established"], h["target"], h["open_s"], d, 1024.0 * d / max(h["established"], 1),
          j["gen_rss_kib"], j["binds"], h["binders"], j["latency_us"]["p50"], j["latency_us"]["p99"],
          j["errors"]["total"]))
EOF
fi

echo "Machine jitter before the runs (CPU 0: ldapfe, CPU 1: generator; a bind in flight when"
echo "either CPU stops waits out the gap):"
cat "$OUT/jitter.txt"
"$PY" "$ROOT/tests/bench/report.py" report "$RUNS_FILE" "$OUT" ${CG_JSON:+"$CG_JSON"} \
	--meta "users=${USERS_LIST// /,} dists=${DISTS// /,} variants=${VARIANTS// /,} runs=$RUNS duration=$DUR warm=$WARM conns=$CONNS binds_per_conn=$BPC hugepages=$HUGE gen_lcores=$GEN_LCORES gen_zc=$GEN_ZC load=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"
