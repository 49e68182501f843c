#!/usr/bin/env bash
# tests/bench/credcache-bench.sh — the verified-credential cache ([store]
# bind_cache), off against on, ldapfe (lcore 0) and ldapfe-gen (lcore 1)
# over net_memif, persistent connections, uniform random users:
#   A. a {PBKDF2-SHA256} store: binds/s (every uncached bind is a verifier
#      job; with the cache only each user's first one is);
#   B. a {SSHA} store of LFE_CC_USERS users: binds/s and the server's busy
#      µs per bind (is a hit cheaper than an inline SHA-1 verification?).
# The first seconds of each run (each user's first bind) are not counted.
# Each figure is the median of LFE_BENCH_RUNS runs. Not part of CI.
#
# Environment (defaults):
#   LFE_BENCH_BUILD=build-release  build dir with ldapfe, ldapfectl, ldapfe-gen
#   LFE_BENCH_RUNS=3               runs per figure
#   LFE_BENCH_DURATION=5           seconds per run
#   LFE_CC_USERS=100000            users of the {SSHA} store
#   LFE_CC_PBKDF2_USERS=256        users of the {PBKDF2} store
#   LFE_CC_PBKDF2_ITER=10000       their iterations (OpenLDAP's default)
#   LFE_CC_CONNS=8                 generator connections
#   LFE_CC_CASES="pbkdf2 ssha"     which stores
#   LFE_CC_WARM_PBKDF2=25, LFE_CC_WARM_SSHA=8   seconds not counted
# Needs root (a namespace). Everything started is stopped by PID.
# Namespace, work dir, daemon start/stop and cleanup: tests/integration/lib.sh
# (LFE_NS_TAG as there).
source "$(dirname "$0")/../integration/lib.sh"
BUILD=${LFE_BENCH_BUILD:-$LFE_ROOT/build-release}
[[ $BUILD = /* ]] || BUILD=$LFE_ROOT/$BUILD
LFE_LDAPFE=$BUILD/dataplane/ldapfe
LFE_CTL=$BUILD/mgmt/ldapfectl
GEN=$BUILD/gen/ldapfe-gen
RUNS=${LFE_BENCH_RUNS:-3}
DUR=${LFE_BENCH_DURATION:-5}
USERS=${LFE_CC_USERS:-100000}
PUSERS=${LFE_CC_PBKDF2_USERS:-256}
PITER=${LFE_CC_PBKDF2_ITER:-10000}
CONNS=${LFE_CC_CONNS:-8}
[[ -x $GEN ]] || { echo "credcache-bench.sh: build $GEN first" >&2; exit 1; }
lfe_init ccbench 54
# The daemon and the generator both in the server namespace, over memif.
NS=$LFE_SRV
PREFIX=$LFE_PREFIX
SADDR=$LFE_SADDR
CADDR=$LFE_CADDR
SUFFIX=$LFE_SUFFIX
WORK=$LFE_WORK
CTL=$LFE_CTL
log() { lfe_log "$@"; }
die() { lfe_fail "credcache-bench.sh: $*"; }

# ---- stores ----
log "{SSHA} store, $USERS users"
"$PY" "$LFE_ROOT/tests/gen/mkldif.py" "$USERS" "$SUFFIX" > "$WORK/ssha.ldif"
mkdir -p "$WORK/ssha"
"$CTL" --store "$WORK/ssha" init --suffix "$SUFFIX" >/dev/null
"$CTL" --store "$WORK/ssha" import "$WORK/ssha.ldif" >/dev/null
log "{PBKDF2-SHA256} store, $PUSERS users, $PITER iterations"
"$PY" - "$PUSERS" "$SUFFIX" "$PITER" > "$WORK/pbkdf2.ldif" <<'EOF'
import base64, hashlib, os, sys
n, suffix, it = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ab64 = lambda b: base64.b64encode(b).decode().rstrip("=").replace("+", ".")
print("dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: example\n" % suffix)
print("dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n" % suffix)
for i in range(n):
    salt = os.urandom(16)
    dk = hashlib.pbkdf2_hmac("sha256", b"pw%07d" % i, salt, it)
    print("dn: uid=user%07d,ou=people,%s\nobjectClass: inetOrgPerson\nuid: user%07d\ncn: u\nsn: u\n"
          "userPassword: {PBKDF2-SHA256}%d$%s$%s\n" % (i, suffix, i, it, ab64(salt), ab64(dk)))
EOF
mkdir -p "$WORK/pbkdf2"
"$CTL" --store "$WORK/pbkdf2" init --suffix "$SUFFIX" >/dev/null
"$CTL" --store "$WORK/pbkdf2" import "$WORK/pbkdf2.ldif" >/dev/null

SOCK=$WORK/memif.sock

# conf STORE CACHE: a config file path.
conf() {
	local f=$WORK/ldapfe-$(basename "$1")-$2.conf
	cat > "$f" <<EOF
[store]
path = $1
bind_cache = $2
[ldap]
port = 389
max_conns_per_core = 4096
[port0]
dev = net_memif0,role=server,id=0,socket=$SOCK,socket-abstract=no
address = $SADDR/24
[workers]
lcores = 0
verifier_threads = 1
verify_per_source = 64
EOF
	echo "$f"
}

telemetry() {
	lfe_telemetry /ldapfe/stats | "$PY" -c 'import json, sys
t = json.load(sys.stdin)["/ldapfe/stats"]["total"]
print(t["busy_cycles"], t["binds_ok"], t["binds_failed"], t["bind_cache_hits"], t["binds_offloaded"])'
}

# gen NAME USERS DURATION: one generator run, JSON in WORK/NAME.json.
gen() {
	ip netns exec "$NS" timeout $(($3 + 60)) "$GEN" -l 1 --no-pci --no-huge -m 256 \
		--file-prefix "$PREFIX-gen" --log-level=lib.eal:error -- \
		--port "net_memif0,role=client,id=0,socket=$SOCK,socket-abstract=no" \
		--src-ip "$CADDR/24" --dst-ip "$SADDR" \
		--users "$2" --user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
		--workload persistent --conns "$CONNS" --rate max --duration "$3" --quiet \
		--json "$WORK/$1.json" > "$WORK/$1.log" 2>&1 || log "$1: ldapfe-gen exit $?"
	[[ -f $WORK/$1.json ]] || die "$1: no JSON: $(tail -3 "$WORK/$1.log")"
}

# run NAME STORE USERS CACHE WARM: one daemon, one generator run of
# WARM + DURATION + 2 seconds (memif's PMD has crashed here when a second
# client connected to the same daemon, so there is one client per daemon);
# the figures come from the server's counters between WARM and
# WARM + DURATION, so the warm-up (each user's first, uncached bind) is not
# in them. Prints "binds/s busy_us_per_bind hit_pct offloaded".
run() {
	local name=$1 store=$2 users=$3 cache=$4 warm=$5 i
	LFE_NOPING=1 lfe_start "$(conf "$store" "$cache")" 0
	gen "$name" "$users" $((warm + DUR + 2)) &
	local gpid=$! b0 b1 t0 t1
	sleep "$warm"
	b0=$(telemetry); t0=$(date +%s.%N)
	sleep "$DUR"
	b1=$(telemetry); t1=$(date +%s.%N)
	wait "$gpid" || true
	kill -0 "$LFE_PID" 2>/dev/null || die "ldapfe died: $(tail -5 "$LFE_LOG")"
	lfe_stop_restart
	"$PY" - "$WORK/$name.json" "$b0" "$b1" "$t0" "$t1" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
a, b = [list(map(int, s.split())) for s in sys.argv[2:4]]
binds = b[1] + b[2] - a[1] - a[2]
busy_us = (b[0] - a[0]) / g["tsc_hz"] * 1e6
secs = float(sys.argv[5]) - float(sys.argv[4])
print("%.0f %.3f %.1f %d" % (binds / secs, busy_us / binds if binds else 0,
                             100.0 * (b[3] - a[3]) / binds if binds else 0, b[4] - a[4]))
EOF
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

log "load: $(uptime)"
printf '%-30s %9s %13s   runs (binds/s busy_us hit%% offloaded)\n' "case" "binds/s" "busy us/bind"
for kind in ${LFE_CC_CASES:-pbkdf2 ssha}; do
	if [[ $kind == pbkdf2 ]]; then
		store=$WORK/pbkdf2 users=$PUSERS warm=${LFE_CC_WARM_PBKDF2:-25}
	else
		store=$WORK/ssha users=$USERS warm=${LFE_CC_WARM_SSHA:-8}
	fi
	for cache in 0 262144; do   # on: room for every user of the {SSHA} store
		rates=() busys=() lines=()
		for ((r = 1; r <= RUNS; r++)); do
			line=$(run "$kind-$cache-$r" "$store" "$users" "$cache" "$warm")
			lines+=("[$line]")
			read -r rate busy _ <<<"$line"
			rates+=("$rate")
			busys+=("$busy")
		done
		printf '%-30s %9s %13s   %s\n' "$kind users=$users cache=$cache" "$(median "${rates[@]}")" \
			"$(median "${busys[@]}")" "${lines[*]}"
	done
done
log "load: $(uptime)"
