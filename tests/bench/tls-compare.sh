#!/usr/bin/env bash
# tests/bench/tls-compare.sh — LDAPS against ldapfe and against OpenLDAP
# slapd (Debian's, GnuTLS, back-mdb) on the same veth path, one server core
# each (ldapfe: 1 worker on CPU 0, af_packet; slapd: taskset -c 0), the
# clients on CPU 1:
#   persistent binds/s: ldapfe-gen --tls (TLS 1.3, CONNS connections, rate
#     max, af_packet from the client namespace);
#   connection-per-bind sessions/s: tests/integration/ldap_cpb (libldap
#     over ldaps://, THREADS threads: connect, TLS handshake, bind, unbind);
# each the median of RUNS runs of SECONDS, with the server's CPU µs per bind
# (ldapfe: worker busy cycles from telemetry plus the utime+stime of its
# crypto and verifier threads, where full handshakes run; slapd: utime+stime
# from /proc). ldapfe's connection-per-bind row runs twice: handshakes on
# the crypto thread (the default: on this 2-CPU machine it shares CPU 1
# with the clients) and inline on the worker ([tls] handshake_threads = 0:
# everything on CPU 0, as slapd). The certificate (ECDSA P-256) is made here with the openssl CLI.
# Not part of the test suite; needs root. The machine's load is printed:
# on a shared machine the figures move with it.
#   tests/bench/tls-compare.sh [SECONDS] [RUNS] [THREADS] [CONNS]  (default 5 3 16 16)
source "$(dirname "$0")/../integration/lib.sh"
SECS=${1:-5}
RUNS=${2:-3}
TH=${3:-16}
CONNS=${4:-16}
CPB=$LFE_BUILD/tests/integration/ldap_cpb
GEN=$LFE_BUILD/gen/ldapfe-gen
for b in "$CPB" "$GEN"; do [[ -x $b ]] || { echo "SKIP: $b not built"; exit 77; }; done
command -v slapd >/dev/null || { echo "SKIP: no slapd"; exit 77; }
lfe_init tlscmp 33
USERS=1000
lfe_make_store
lfe_make_users "$USERS"
GADDR=10.99.33.3     # the generator's address: not the client kernel's
echo "load before: $(uptime)"

P=$LFE_WORK/pki
mkdir -p "$P"
ossl() { openssl "$@" >/dev/null 2>&1 || lfe_fail "openssl $1 failed"; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/ca.key" \
	-out "$P/ca.crt" -days 2 -subj "/CN=ldapfe bench CA"
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/srv.key" \
	-out "$P/srv.csr" -subj "/CN=$LFE_SADDR"
printf 'subjectAltName = IP:%s\nextendedKeyUsage = serverAuth\n' "$LFE_SADDR" > "$P/ext"
ossl x509 -req -in "$P/srv.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
	-out "$P/srv.crt" -days 2 -extfile "$P/ext"
chmod 644 "$P/srv.key"

# gen_run NAME: persistent binds over TLS; prints binds/s.
gen_run() {
	lfe_cli timeout $((SECS + 60)) "$GEN" -l 1 --no-pci --no-huge -m 512 --file-prefix "$LFE_PREFIX-gen" \
		--log-level=lib.eal:error --vdev "net_af_packet1,iface=veth0,qpairs=1" -- \
		--port net_af_packet1 --src-ip "$GADDR/24" --dst-ip "$LFE_SADDR" --users "$USERS" \
		--user-fmt "uid=user%u,ou=people,$LFE_SUFFIX" --password-fmt 'pw-%u' --quiet \
		--tls --tls-version 1.3 --workload persistent --conns "$CONNS" --rate max --duration "$SECS" \
		--connect-timeout-ms 10000 --json "$LFE_WORK/$1.json" > "$LFE_WORK/$1.log" 2>&1 ||
		echo "  $1: ldapfe-gen exit $?: $(grep -h 'errors\|error:' "$LFE_WORK/$1.log" | head -2)" >&2
	rm -rf "/var/run/dpdk/$LFE_PREFIX-gen"   # lib.sh's trap knows only the daemon's prefix
	"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print("%.0f %d" % (j["binds_per_s"], j["errors"]["total"]))' "$LFE_WORK/$1.json"
}

# cpb_run NAME: connection-per-bind over ldaps://; prints sessions/s.
cpb_run() {
	lfe_cli env LDAPTLS_CACERT="$P/ca.crt" LDAPTLS_REQCERT=demand taskset -c 1 \
		timeout $((SECS + 60)) "$CPB" "ldaps://$LFE_SADDR:636" "uid=user0,ou=people,$LFE_SUFFIX" pw-0 \
		"$TH" "$SECS" > "$LFE_WORK/$1.txt"
	awk -v s="$SECS" '/^total/ { printf "%.0f %d\n", $2 / s, $4 }' "$LFE_WORK/$1.txt"
}

busy() {   # ldapfe: "busy_cycles binds"
	lfe_telemetry /ldapfe/stats | "$PY" -c 'import json,sys; t=json.load(sys.stdin)["/ldapfe/stats"]["total"]; print(t["busy_cycles"], t["binds_ok"] + t["binds_failed"])'
}
HZ=   # the generator's tsc_hz (its JSON)
TCK=$(getconf CLK_TCK)
# utime+stime ticks of ldapfe's crypto (lfe-tls-*) and verifier threads
thread_ticks() {
	local f t=0 comm rest
	for f in /proc/"$LFE_PID"/task/*/stat; do
		read -r _ comm rest < "$f" 2>/dev/null || continue
		[[ $comm == "(lfe-tls"* || $comm == "(lfe-verify"* ]] || continue
		set -- $rest
		t=$((t + ${12} + ${13}))
	done
	echo "$t"
}
busy_all() { echo "$(busy) $(thread_ticks)"; }
cpu_ldapfe() {   # cpu_ldapfe B0 B1 (busy_all): µs per bind, worker and threads
	"$PY" -c 'import sys; a=sys.argv[1].split(); b=sys.argv[2].split(); print("%.1f" % (((int(b[0])-int(a[0])) / float(sys.argv[3]) + (int(b[2])-int(a[2])) / float(sys.argv[4])) * 1e6 / max(int(b[1])-int(a[1]), 1)))' "$1" "$2" "$HZ" "$TCK"
}
slapd_ticks() { awk '{print $14 + $15}' "/proc/$SLAPD_PID/stat"; }

declare -A RES
add() { RES[$1]+="$2"$'\n'; }   # add KEY "value ..."

# ---- ldapfe ----
conf=$(lfe_conf 1)
sed -i 's/idle_sleep_us = 20/idle_sleep_us = 0/; s/^port = 389$/port = 389\nldaps_ports = 636/' "$conf"
printf '[tls]\ncertificate = %s\nkey = %s\n' "$P/srv.crt" "$P/srv.key" >> "$conf"
inl=$LFE_WORK/inline.conf
sed '/^\[tls\]$/a handshake_threads = 0' "$conf" > "$inl"
for ((r = 1; r <= RUNS; r++)); do
	lfe_start "$conf" 0
	b0=$(busy_all); out=$(gen_run "ldapfe-pers-$r"); b1=$(busy_all)
	HZ=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tsc_hz"])' "$LFE_WORK/ldapfe-pers-$r.json")
	add ldapfe_pers "$out $(cpu_ldapfe "$b0" "$b1")"
	b0=$(busy_all); out=$(cpb_run "ldapfe-cpb-$r"); b1=$(busy_all)
	add ldapfe_cpb "$out $(cpu_ldapfe "$b0" "$b1")"
	lfe_stop_restart
	lfe_start "$inl" 0
	b0=$(busy_all); out=$(cpb_run "ldapfe-cpbi-$r"); b1=$(busy_all)
	add ldapfe_cpbi "$out $(cpu_ldapfe "$b0" "$b1")"
	lfe_stop_restart
	lfe_log "ldapfe run $r: persistent $(tail -n 1 <<<"${RES[ldapfe_pers]%$'\n'}"), cpb $(tail -n 1 <<<"${RES[ldapfe_cpb]%$'\n'}"), cpb inline $(tail -n 1 <<<"${RES[ldapfe_cpbi]%$'\n'}")"
done

# ---- slapd ----
SL=$LFE_WORK/slapd
mkdir -p "$SL/db"
cat > "$SL/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile $SL/slapd.pid
loglevel 0
TLSCertificateFile $P/srv.crt
TLSCertificateKeyFile $P/srv.key
TLSCACertificateFile $P/ca.crt
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
ip netns exec "$LFE_SRV" sysctl -qw net.core.somaxconn=4096
for ((r = 1; r <= RUNS; r++)); do
	rm -f "$SL/slapd.pid"
	ip netns exec "$LFE_SRV" taskset -c 0 slapd -f "$SL/slapd.conf" -h "ldaps://$LFE_SADDR/" -u root
	for ((i = 0; i < 50; i++)); do [[ -s $SL/slapd.pid ]] && break; sleep 0.1; done
	SLAPD_PID=$(cat "$SL/slapd.pid")
	LFE_EXTRA_PIDS=$SLAPD_PID
	sleep 0.5
	for kind in pers cpb; do
		c0=$(slapd_ticks)
		if [[ $kind == pers ]]; then out=$(gen_run "slapd-pers-$r"); else out=$(cpb_run "slapd-cpb-$r"); fi
		c1=$(slapd_ticks)
		read -r ops _ <<<"$out"
		add "slapd_$kind" "$out $("$PY" -c "print('%.1f' % (($c1 - $c0) / $TCK * 1e6 / max($ops * $SECS, 1)))")"
	done
	kill -TERM "$SLAPD_PID"
	for ((i = 0; i < 50; i++)); do kill -0 "$SLAPD_PID" 2>/dev/null || break; sleep 0.1; done
	lfe_log "slapd run $r: persistent $(tail -n 1 <<<"${RES[slapd_pers]%$'\n'}"), cpb $(tail -n 1 <<<"${RES[slapd_cpb]%$'\n'}")"
done

echo "LDAPS on the veth path, server on CPU 0, clients on CPU 1; median of $RUNS runs of $SECS s"
echo "persistent: ldapfe-gen --tls (TLS 1.3), $CONNS connections; connection-per-bind: libldap ldap_cpb, $TH threads"
for k in ldapfe_pers slapd_pers ldapfe_cpb ldapfe_cpbi slapd_cpb; do
	printf '%s' "${RES[$k]}" | "$PY" -c '
import sys, statistics
name = {"ldapfe_pers": "ldapfe persistent binds/s", "slapd_pers": "slapd persistent binds/s",
        "ldapfe_cpb": "ldapfe conn-per-bind sessions/s",
        "ldapfe_cpbi": "ldapfe cpb, handshakes inline", "slapd_cpb": "slapd conn-per-bind sessions/s"}[sys.argv[1]]
r = [l.split() for l in sys.stdin if l.strip()]
print("%-34s %8.0f   server CPU %7.1f us/bind   errors %d" % (name, statistics.median(float(x[0]) for x in r),
      statistics.median(float(x[2]) for x in r), sum(int(x[1]) for x in r)))' "$k"
done
echo "load after: $(uptime)"
