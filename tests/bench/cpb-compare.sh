#!/usr/bin/env bash
# Connection-per-bind sessions/s over time: ldapfe (af_packet, one worker)
# and OpenLDAP slapd (back-mdb, kernel TCP) in the same namespace topology,
# same client: tests/integration/ldap_cpb (libldap, THREADS threads, each
# connect + simple bind + unbind per authentication). The client's full
# port range (51,000 ports) fills with TIME_WAIT within ~20 s at these
# rates, so the last 10 s show whether the client can reuse ports (it can
# only when the server's SYN,ACK had timestamps). Also prints the packets
# of one session (ldapwhoami) against each server, and the client's CPU.
# Not part of the test suite.
# Then the same client in persistent mode (each thread one connection,
# binding again and again) for LFE_CPB_PERSIST_SECS (default 20; 0: skip).
#   tests/bench/cpb-compare.sh [SECONDS] [THREADS]    (default 60 16)
source "$(dirname "$0")/../integration/lib.sh"
SECS=${1:-60}
TH=${2:-16}
PSECS=${LFE_CPB_PERSIST_SECS:-20}
CPB=$LFE_BUILD/tests/integration/ldap_cpb
[[ -x $CPB ]] || { echo "SKIP: $CPB not built"; exit 77; }
lfe_init cpbbench 91
lfe_make_store
lfe_make_users 1
DN="uid=user0,ou=people,$LFE_SUFFIX"
URI=ldap://$LFE_SADDR:389

session() {   # session NAME: the packets of one ldapwhoami session
	lfe_cli timeout 10 tcpdump -i veth0 -nn -S -c 40 'tcp port 389' > "$LFE_WORK/session-$1.txt" 2>/dev/null &
	local d=$!
	sleep 1
	lfe_cli timeout 10 ldapwhoami -x -H "$URI" -D "$DN" -w pw-0 >/dev/null
	sleep 1.5
	kill -INT "$d" 2>/dev/null; wait "$d" 2>/dev/null || true
}

run() {   # run NAME: sessions/s series into cpb-NAME.txt
	lfe_cli timeout $((SECS + 60)) "$CPB" "$URI" "$DN" pw-0 "$TH" "$SECS" > "$LFE_WORK/cpb-$1.txt"
}

runp() {   # runp NAME: persistent binds/s series into cpbp-NAME.txt
	((PSECS > 0)) || return 0
	lfe_cli timeout $((PSECS + 60)) "$CPB" "$URI" "$DN" pw-0 "$TH" "$PSECS" persistent > "$LFE_WORK/cpbp-$1.txt"
}

summary() {   # summary NAME [FILE] [SECONDS]
	awk -v n="${3:-$SECS}" -v name="$1" '
		/^sec/ { if ($2 <= 10) f += $4; if ($2 > n - 10) l += $4; s = s " " $4 }
		/^total/ { printf "%-7s first 10 s %6.0f/s  last 10 s %6.0f/s  total %d  errors %d  client cpu %.1f s (user %.1f sys %.1f)\n", name, f / 10, l / 10, $2, $4, $6 + $8, $6, $8 }
		END { print "        per second:" s }' "${2:-$LFE_WORK/cpb-$1.txt}"
}

conf=$(lfe_conf 1)
sed -i 's/idle_sleep_us = 20/idle_sleep_us = 0/' "$conf"
lfe_start "$conf" 0
session ldapfe
run ldapfe
runp ldapfe
lfe_stop
# Let the client's TIME_WAITs from ldapfe's run expire before slapd's.
sleep 61

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
session slapd
run slapd
runp slapd
kill -TERM "$SLAPD_PID"

echo "connection-per-bind, libldap client, $TH threads, ${SECS} s, same veth (sessions/s)"
summary ldapfe
summary slapd
if ((PSECS > 0)); then
	echo "persistent, libldap client, $TH threads (one connection each), ${PSECS} s (binds/s)"
	summary ldapfe "$LFE_WORK/cpbp-ldapfe.txt" "$PSECS"
	summary slapd "$LFE_WORK/cpbp-slapd.txt" "$PSECS"
fi
for s in ldapfe slapd; do
	echo "--- one session against $s (client veth0) ---"
	cat "$LFE_WORK/session-$s.txt"
done
