#!/usr/bin/env bash
# Binds/s through the veth path: ldapfe (af_packet, one worker) against
# OpenLDAP slapd (back-mdb, kernel TCP) in the same namespace topology, same
# users ({SSHA}), same client: parallel /usr/bin/python3 ldap3 processes,
# each on one persistent connection rebinding in a loop (and a new-connection
# variant). Not part of the test suite. On a 2-vCPU machine the Python
# clients saturate first: read the figures as a floor for both servers.
#   tests/bench/veth-compare.sh [SECONDS] [CLIENTS]
source "$(dirname "$0")/../integration/lib.sh"
SECS=${1:-8}
CLIENTS=${2:-4}
lfe_init bench 20
lfe_make_store
lfe_make_users 1000

load() {   # load MODE(persist|connect): prints binds/s
	lfe_py '
import sys, time
from multiprocessing import Pool
from ldap3 import Server, Connection
addr, suffix, secs, mode, n = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
def run(k):
    srv = Server(addr, port=389, connect_timeout=5)
    done = bad = 0
    end = time.time() + secs
    c = None
    while time.time() < end:
        i = (k * 7919 + done) % 1000
        dn = "uid=user%d,ou=people,%s" % (i, suffix)
        if mode == "persist":
            if c is None:
                c = Connection(srv, receive_timeout=10); c.open()
            ok = c.rebind(dn, "pw-%d" % i)
        else:
            c1 = Connection(srv, dn, "pw-%d" % i, receive_timeout=10)
            ok = c1.bind(); c1.unbind()
        done += 1; bad += not ok
    return done, bad
with Pool(n) as p:
    r = p.map(run, range(n))
print("%d %d" % (sum(x[0] for x in r) / secs, sum(x[1] for x in r)))
' "$LFE_SADDR" "$LFE_SUFFIX" "$SECS" "$1" "$CLIENTS"
}

conf=$(lfe_conf 1)
sed -i 's/idle_sleep_us = 20/idle_sleep_us = 0/' "$conf"
lfe_start "$conf" 0
read -r f_p f_pbad < <(load persist)
read -r f_c f_cbad < <(load connect)
busy=$(lfe_telemetry /ldapfe/stats | "$PY" -c 'import json,sys; t=json.load(sys.stdin)["/ldapfe/stats"]["total"]; print("%.0f" % (100.0*t["busy_cycles"]/max(t["total_cycles"],1)))')
lfe_stop

# slapd: same users, kernel address on the server end, same client.
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
{
	printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: example\n\n' "$LFE_SUFFIX"
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$LFE_SUFFIX"
	cat "$LFE_WORK/users.ldif"
} > "$SL/data.ldif"
slapadd -q -f "$SL/slapd.conf" -l "$SL/data.ldif"
ip netns exec "$LFE_SRV" ip addr add "$LFE_SADDR/24" dev veth0
ip netns exec "$LFE_SRV" taskset -c 0 slapd -f "$SL/slapd.conf" -h "ldap://$LFE_SADDR/" -u root
for ((i = 0; i < 50; i++)); do [[ -s $SL/slapd.pid ]] && break; sleep 0.1; done
SLAPD_PID=$(cat "$SL/slapd.pid")
LFE_EXTRA_PIDS=$SLAPD_PID
sleep 0.5
read -r s_p s_pbad < <(load persist)
read -r s_c s_cbad < <(load connect)
kill -TERM "$SLAPD_PID"

echo "veth binds/s, $CLIENTS python3-ldap3 clients, ${SECS}s each (failed binds in brackets)"
printf '%-8s %14s %14s\n' server persistent new-conn
printf '%-8s %10s [%s] %10s [%s]   (worker busy %s%%)\n' ldapfe "$f_p" "$f_pbad" "$f_c" "$f_cbad" "$busy"
printf '%-8s %10s [%s] %10s [%s]\n' slapd "$s_p" "$s_pbad" "$s_c" "$s_cbad"
