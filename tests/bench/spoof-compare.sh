#!/usr/bin/env bash
# tests/bench/spoof-compare.sh — a legitimate client's bind latency during a
# SYN flood that spoofs its own address, ldapfe against OpenLDAP slapd
# (back-mdb, kernel TCP with its own SYN cookies) in the same namespaces:
# the flood of tests/integration/test_spoof.sh (SYNS SYNs from a raw socket
# with the client's address, source ports 1024-9999, its kernel
# blackholing their SYN,ACKs), the client binding (connection per bind,
# kernel sockets) meanwhile, then 200 sessions right after. Prints one line
# per server: binds ok during the flood, p50/p99/max ms, and after it.
# Not part of CI; needs root.   spoof-compare.sh [SYNS] [RATE]
source "$(dirname "$0")/../integration/lib.sh"
SYNS=${1:-20000}
RATE=${2:-5000}
lfe_init spoofcmp 119
BURST=$LFE_ROOT/tests/integration/ldapburst.py
lfe_make_store
DN=$(lfe_dn alice)
burst() { lfe_cli timeout 60 "$PY" "$BURST" "$@"; }
lfe_cli ip rule add pref 100 lookup local
lfe_cli ip rule del pref 0
lfe_cli ip rule add pref 10 iif veth0 ipproto tcp sport 389 dport 1024-9999 blackhole

measure() {   # measure NAME
	burst seq "$LFE_SADDR" 389 "$DN" alice-pw 1 --timeout 5 > /dev/null || true
	burst flood "$LFE_CADDR" "$LFE_SADDR" 389 "$SYNS" 1024 9999 "$RATE" > "$LFE_WORK/flood-$1.json" &
	local fpid=$!
	LFE_EXTRA_PIDS=$fpid
	sleep 0.5
	local during after
	during=$(burst seq "$LFE_SADDR" 389 "$DN" alice-pw 100 --timeout 10)
	wait "$fpid" || true
	LFE_EXTRA_PIDS=
	after=$(burst seq "$LFE_SADDR" 389 "$DN" alice-pw 200 --timeout 10)
	"$PY" - "$1" "$during" "$after" "$(cat "$LFE_WORK/flood-$1.json")" <<'PYEOF'
import json, sys
d, a, f = json.loads(sys.argv[2]), json.loads(sys.argv[3]), json.loads(sys.argv[4])
print("%-7s flood %d SYNs in %.1f s; during: %d/100 ok, p50 %s p99 %s max %s ms; after: %d/200 ok, p50 %s p99 %s ms"
      % (sys.argv[1], f["syns"], f["seconds"], d["ok"], d["lat_ms"][0], d["lat_ms"][1], d["lat_ms"][2],
         a["ok"], a["lat_ms"][0], a["lat_ms"][1]))
PYEOF
}

conf=$(lfe_conf 1)
sed -i '/^max_conns_per_core/d' "$conf"
lfe_start "$conf" 0
measure ldapfe
lfe_stop
sleep 3   # the half-open SYN,ACK retransmissions of the flood end with the daemon

SL=$LFE_WORK/slapd
mkdir -p "$SL/db"
cat > "$SL/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile $SL/slapd.pid
database mdb
suffix "$LFE_SUFFIX"
rootdn "cn=admin,$LFE_SUFFIX"
directory $SL/db
maxsize 1073741824
index uid eq
CONF
lfe_ctl export > "$SL/data.ldif"
slapadd -q -f "$SL/slapd.conf" -l "$SL/data.ldif"
ip netns exec "$LFE_SRV" ip addr add "$LFE_SADDR/24" dev veth0
ip netns exec "$LFE_SRV" slapd -f "$SL/slapd.conf" -h "ldap://$LFE_SADDR/" -u root
for ((i = 0; i < 50; i++)); do [[ -s $SL/slapd.pid ]] && break; sleep 0.1; done
SLAPD_PID=$(cat "$SL/slapd.pid")
sleep 0.5
measure slapd
kill -TERM "$SLAPD_PID"
