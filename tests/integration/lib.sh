# tests/integration/lib.sh — shared helpers for the daemon's integration
# tests. Source it, then call lfe_init NAME NET.
#
# Topology per test: namespaces lfe-NAME-srv and lfe-NAME-cli joined by a
# veth pair (offloads off). The server end has NO kernel IP address: the
# kernel neither answers ARP nor resets TCP there, ldapfe owns it through
# net_af_packet. Addresses: 10.99.NET.1 (ldapfe), 10.99.NET.2 (client).
# Everything started is stopped by PID and the namespaces are deleted by the
# EXIT trap; every wait is bounded.
#
# Environment: LFE_BUILD (build dir holding dataplane/ldapfe and
# mgmt/ldapfectl; default build/), LFE_KEEP=1 keeps the work dir,
# LFE_NS_TAG a suffix for namespace names and the EAL file prefix.

set -euo pipefail

LFE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LFE_BUILD=${LFE_BUILD:-$LFE_ROOT/build}
LFE_LDAPFE=$LFE_BUILD/dataplane/ldapfe
LFE_CTL=$LFE_BUILD/mgmt/ldapfectl
PY=/usr/bin/python3
LFE_SUFFIX="dc=example,dc=com"
# Inline Python imports lfe_ber (the raw-BER LDAP client) from here.
export PYTHONPATH=$LFE_ROOT/tests/integration${PYTHONPATH:+:$PYTHONPATH}

lfe_log() { echo "[$(date +%T)] $*" >&2; }
lfe_fail() { echo "FAIL: $*" >&2; exit 1; }
# lfe_eq WHAT GOT WANT
lfe_eq() { [[ "$2" == "$3" ]] || lfe_fail "$1: got '$2', want '$3'"; lfe_log "ok: $1"; }

# _lfe_desc PID: its descendants' PIDs.
_lfe_desc() { local c; for c in $(pgrep -P "$1" 2>/dev/null); do echo -n "$c "; _lfe_desc "$c"; done; }

lfe_cleanup() {
	local rc=$?
	set +e
	if [[ -n ${LFE_PID:-} ]] && kill -0 "$LFE_PID" 2>/dev/null; then
		kill -KILL "$LFE_PID" 2>/dev/null
		wait "$LFE_PID" 2>/dev/null
	fi
	# An extra PID is often the subshell of `lfe_cli timeout N CMD &`: its
	# descendants get TERM too, then KILL after 3 s, or CMD outlives the
	# test holding its EAL prefix until its own timeout.
	local all=
	for p in ${LFE_EXTRA_PIDS:-}; do all+=" $(_lfe_desc "$p") $p"; done
	[[ -n ${all// /} ]] && kill -TERM $all 2>/dev/null
	for ((i = 0; i < 30; i++)); do
		kill -0 $all 2>/dev/null || break   # true while any is alive
		sleep 0.1
	done
	for p in $all; do kill -KILL "$p" 2>/dev/null; done
	for p in ${LFE_EXTRA_PIDS:-}; do wait "$p" 2>/dev/null; done
	ip netns del "$LFE_SRV" 2>/dev/null
	ip netns del "$LFE_CLI" 2>/dev/null
	# the daemon's EAL runtime directory, and the generator's (tests that
	# run ldapfe-gen give it the prefix LFE_PREFIX-gen)
	rm -rf "/var/run/dpdk/$LFE_PREFIX" "/var/run/dpdk/$LFE_PREFIX-gen" 2>/dev/null
	if ((rc != 0)) && [[ -f ${LFE_WORK:-/nonexistent}/ldapfe.log ]]; then
		echo "--- ldapfe.log (last 40 lines) ---" >&2
		tail -n 40 "$LFE_WORK/ldapfe.log" >&2
	fi
	if [[ ${LFE_KEEP:-0} != 1 ]]; then rm -rf "$LFE_WORK"; else echo "kept $LFE_WORK" >&2; fi
	exit $rc
}

# lfe_init NAME NET: namespaces, veth, addresses, work dir, cleanup trap.
lfe_init() {
	LFE_NAME=$1
	LFE_NET=$2
	# LFE_NS_TAG (optional) keeps parallel runs from different checkouts
	# apart: it is added to the namespace names and the EAL file prefix.
	LFE_SRV=lfe-$1${LFE_NS_TAG:-}-srv
	LFE_CLI=lfe-$1${LFE_NS_TAG:-}-cli
	LFE_PREFIX=lfe-$1${LFE_NS_TAG:-}
	LFE_SADDR=10.99.$2.1
	LFE_CADDR=10.99.$2.2
	[[ $EUID -eq 0 ]] || { echo "SKIP: needs root"; exit 77; }
	[[ -x $LFE_LDAPFE ]] || { echo "SKIP: $LFE_LDAPFE not built"; exit 77; }
	[[ -x $LFE_CTL ]] || { echo "SKIP: $LFE_CTL not built"; exit 77; }
	LFE_WORK=$(mktemp -d "/tmp/lfe-$1.XXXXXX")
	trap lfe_cleanup EXIT
	trap 'exit 130' INT TERM
	ip netns del "$LFE_SRV" 2>/dev/null || true
	ip netns del "$LFE_CLI" 2>/dev/null || true
	ip netns add "$LFE_SRV"
	ip netns add "$LFE_CLI"
	local a=lfe${LFE_NET}a$$ b=lfe${LFE_NET}b$$
	a=${a:0:15}; b=${b:0:15}
	ip link add "$a" type veth peer name "$b"
	ip link set "$a" netns "$LFE_SRV" name veth0
	ip link set "$b" netns "$LFE_CLI" name veth0
	ip netns exec "$LFE_SRV" sysctl -qw net.ipv6.conf.veth0.disable_ipv6=1
	ip netns exec "$LFE_CLI" sysctl -qw net.ipv6.conf.veth0.disable_ipv6=1
	ip netns exec "$LFE_SRV" ip link set veth0 up
	ip netns exec "$LFE_SRV" ip link set lo up
	ip netns exec "$LFE_CLI" ip addr add "$LFE_CADDR/24" dev veth0
	ip netns exec "$LFE_CLI" ip link set veth0 up
	ip netns exec "$LFE_CLI" ip link set lo up
	ip netns exec "$LFE_SRV" ethtool -K veth0 tx off rx off tso off gso off gro off >/dev/null 2>&1 || true
	ip netns exec "$LFE_CLI" ethtool -K veth0 tx off rx off tso off gso off gro off >/dev/null 2>&1 || true
	ip netns exec "$LFE_CLI" sysctl -qw net.ipv4.tcp_tw_reuse=1
	ip netns exec "$LFE_CLI" sysctl -qw net.ipv4.ip_local_port_range="10000 60999"
	LFE_STORE=$LFE_WORK/store
}

# lfe_ctl ARGS...: ldapfectl on this test's store.
lfe_ctl() { "$LFE_CTL" --store "$LFE_STORE" "$@"; }

# lfe_make_store [SCHEME]: suffix entry, ou=people, users alice bob carol
# (passwords alice-pw, bob-pw, carol-pw) and dave (dave-pw, {CRYPT}: slow).
lfe_make_store() {
	local scheme=${1:-"{SSHA}"}
	mkdir -p "$LFE_STORE"
	lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null
	lfe_ctl user add "dc=example,dc=com" --attr objectClass=dcObject \
		--attr objectClass=organization --attr o=example >/dev/null 2>&1 || true
	lfe_ctl user add "ou=people,$LFE_SUFFIX" --attr objectClass=organizationalUnit >/dev/null 2>&1 || true
	local u
	for u in alice bob carol; do
		echo "$u-pw" | lfe_ctl --scheme "$scheme" user add "uid=$u,ou=people,$LFE_SUFFIX" \
			--attr "mail=$u@example.com" --password-stdin >/dev/null
	done
	echo "dave-pw" | lfe_ctl --scheme '{CRYPT}' user add "uid=dave,ou=people,$LFE_SUFFIX" \
		--attr "mail=dave@example.com" --password-stdin >/dev/null
}

# lfe_make_users N: add user0..user(N-1) with password pw-I ({SSHA}).
lfe_make_users() {
	local f=$LFE_WORK/users.ldif
	"$PY" -c '
import base64, hashlib, os, sys
n, suffix = int(sys.argv[1]), sys.argv[2]
for i in range(n):
    salt = os.urandom(8)
    h = base64.b64encode(hashlib.sha1(b"pw-%d" % i + salt).digest() + salt).decode()
    print("dn: uid=user%d,ou=people,%s\nobjectClass: inetOrgPerson\nuid: user%d\n"
          "cn: user %d\nsn: user%d\nuserPassword: {SSHA}%s\n" % (i, suffix, i, i, i, h))
' "$1" "$LFE_SUFFIX" > "$f"
	lfe_ctl import "$f" >/dev/null
}

# lfe_make_gen_store N: a new store with the suffix and N users in
# ldapfe-gen's form (uid=user%07u, password pw%07u: tests/gen/mkldif.py).
lfe_make_gen_store() {
	mkdir -p "$LFE_STORE"
	lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null
	"$PY" "$LFE_ROOT/tests/gen/mkldif.py" "$1" "$LFE_SUFFIX" > "$LFE_WORK/users.ldif"
	lfe_ctl import "$LFE_WORK/users.ldif" >/dev/null
}

# lfe_conf [QPAIRS] [LCORES]: write the daemon config, print its path.
lfe_conf() {
	local q=${1:-1} lcores=${2:-}
	local f=$LFE_WORK/ldapfe.conf
	{
		echo "[store]"
		echo "path = $LFE_STORE"
		echo "[ldap]"
		echo "port = 389"
		echo "max_conns_per_core = 1024"
		echo "[port0]"
		echo "dev = net_af_packet0,iface=veth0,qpairs=$q"
		echo "address = $LFE_SADDR/24"
		echo "[workers]"
		[[ -n $lcores ]] && echo "lcores = $lcores"
		echo "idle_sleep_us = 20"
		echo "verifier_threads = 1"
	} > "$f"
	echo "$f"
}

# lfe_start CONF EAL_LCORES [DAEMON ARGS...]: start ldapfe in the server
# namespace, wait (bounded: LFE_READY_S, default 20 s) until it is ready and
# answers ping (unless LFE_NOPING=1).
lfe_start() {
	local conf=$1 lcores=$2; shift 2
	LFE_LOG=$LFE_WORK/ldapfe.log
	# Empty it here: the background job's own redirection may come after
	# the first grep below, which would then see a previous run's "ready".
	: > "$LFE_LOG"
	# LFE_WRAP (optional): a command line the daemon runs under (setpriv ...).
	ip netns exec "$LFE_SRV" ${LFE_WRAP:-} "$LFE_LDAPFE" -l "$lcores" --no-pci --no-huge -m 768 \
		--file-prefix "$LFE_PREFIX" --log-level=lib.eal:error -- \
		--config "$conf" "$@" > "$LFE_LOG" 2>&1 &
	LFE_PID=$!
	local i ready_s=${LFE_READY_S:-20}
	for ((i = 0; i < ready_s * 10; i++)); do
		grep -q "ldapfe: ready" "$LFE_LOG" && break
		kill -0 "$LFE_PID" 2>/dev/null || { cat "$LFE_LOG" >&2; lfe_fail "ldapfe exited at start"; }
		sleep 0.1
	done
	grep -q "ldapfe: ready" "$LFE_LOG" || lfe_fail "ldapfe not ready within $ready_s s"
	# LFE_NOPING=1: the caller's port is not the veth (test_csum's tap).
	[[ ${LFE_NOPING:-0} == 1 ]] && return 0
	for ((i = 0; i < 20; i++)); do
		ip netns exec "$LFE_CLI" ping -c 1 -W 1 "$LFE_SADDR" >/dev/null 2>&1 && return 0
	done
	lfe_fail "ldapfe does not answer ping"
}

# lfe_stop: SIGTERM, bounded wait; sets LFE_STOP_RC and LFE_STOP_MS.
lfe_stop() {
	local t0 t1 i
	t0=$(date +%s%N)
	kill -TERM "$LFE_PID"
	# Up to 10 s: a loaded CI machine can take seconds to give back the
	# EAL's memory; test_basic bounds the exit time itself.
	for ((i = 0; i < 200; i++)); do
		kill -0 "$LFE_PID" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$LFE_PID" 2>/dev/null; then
		LFE_STOP_RC=timeout
	else
		LFE_STOP_RC=0
		wait "$LFE_PID" || LFE_STOP_RC=$?
	fi
	t1=$(date +%s%N)
	LFE_STOP_MS=$(((t1 - t0) / 1000000))
	LFE_PID=
}

# lfe_stop_restart: lfe_stop before a restart, and SIGKILL if the daemon
# outlives the bounded wait (the next start reuses its EAL file prefix).
lfe_stop_restart() {
	local pid=$LFE_PID
	lfe_stop
	if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; wait "$pid" 2>/dev/null || true; fi
}

# Run a command in the client namespace.
lfe_cli() { ip netns exec "$LFE_CLI" "$@"; }

# lfe_py SCRIPT [ARGS...]: run Debian's python3 (ldap3) in the client namespace.
lfe_py() { local s=$1; shift; ip netns exec "$LFE_CLI" timeout 120 "$PY" -c "$s" "$@"; }

# lfe_telemetry CMD: query the daemon's telemetry socket (what
# dpdk-telemetry.py does; Debian does not ship that script).
lfe_telemetry() {
	ip netns exec "$LFE_SRV" timeout 10 "$PY" - "/var/run/dpdk/$LFE_PREFIX/dpdk_telemetry.v2" "$1" <<'EOF'
import socket, sys, json
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
json.loads(s.recv(16384).decode())
s.send(sys.argv[2].encode())
print(s.recv(1 << 20).decode())
EOF
}

lfe_dn() { echo "uid=$1,ou=people,$LFE_SUFFIX"; }

# lfe_dump FILE COUNT FILTER: tcpdump -v on the client's veth, COUNT packets
# matching FILTER into FILE (at most 40 s); returns once it listens
# (bounded), its PID in $LFE_DUMP_PID (also in LFE_EXTRA_PIDS).
lfe_dump() {
	: > "$1.err"
	lfe_cli timeout 40 tcpdump -i veth0 -nn -v -c "$2" "$3" > "$1" 2> "$1.err" &
	LFE_DUMP_PID=$!
	LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $LFE_DUMP_PID"
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q listening "$1.err" && return 0
		sleep 0.1
	done
	lfe_fail "tcpdump did not start"
}

# ---- a real OpenLDAP slapd beside ldapfe, from the same LDIF ----
# lfe_slapd_start LDIF URL NETNS GLOBAL DB: $LFE_WORK/slapd.conf (back-mdb
# for $LFE_SUFFIX in $LFE_WORK/slapd-db, schemas core, cosine,
# inetorgperson and nis, no size limit; GLOBAL: more lines for the global
# section (TLS files), DB: the database's index and access lines), LDIF
# loaded offline (slapadd -q into the empty database: no LDAP round trip
# per entry), then slapd serving URL in namespace NETNS ("": this one).
# Loading and start-up run in the background while the caller builds
# ldapfe's store; lfe_slapd_wait waits for the first answer. The PID is
# LFE_SLAPD_PID, also in LFE_EXTRA_PIDS: the EXIT trap stops it.
lfe_slapd_start() {
	local ldif=$1 ns=$3 global=$4 db=$5 run=()
	LFE_SLAPD_URL=$2
	LFE_SLAPD_NS=$ns
	[[ -n $ns ]] && run=(ip netns exec "$ns")
	mkdir -p "$LFE_WORK/slapd-db"
	cat >"$LFE_WORK/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile $LFE_WORK/slapd.pid
$global
sizelimit unlimited
database mdb
maxsize 268435456
suffix "$LFE_SUFFIX"
directory $LFE_WORK/slapd-db
limits anonymous size=unlimited
$db
CONF
	# The subshell becomes slapd (exec): one PID to stop, slapadd's
	# failure is its exit.
	(
		PATH=$PATH:/usr/sbin
		slapadd -q -f "$LFE_WORK/slapd.conf" -l "$ldif" >"$LFE_WORK/slapadd.log" 2>&1 || exit 1
		exec "${run[@]}" slapd -f "$LFE_WORK/slapd.conf" -h "$LFE_SLAPD_URL" -d 0 \
			>"$LFE_WORK/slapd.log" 2>&1
	) &
	LFE_SLAPD_PID=$!
	LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $LFE_SLAPD_PID"
}
# lfe_slapd_wait: until slapd answers a root DSE read at LFE_SLAPD_URL
# (bounded: 20 s); fails with slapadd's and slapd's output if it exited.
lfe_slapd_wait() {
	local i run=()
	[[ -n $LFE_SLAPD_NS ]] && run=(ip netns exec "$LFE_SLAPD_NS")
	for ((i = 0; i < 400; i++)); do
		"${run[@]}" ldapsearch -x -H "$LFE_SLAPD_URL" -b "" -s base >/dev/null 2>&1 && return 0
		kill -0 "$LFE_SLAPD_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$LFE_WORK/slapadd.log" "$LFE_WORK/slapd.log" >&2 2>/dev/null
	lfe_fail "slapd does not answer at $LFE_SLAPD_URL"
}
# lfe_slapd_ldapi: an ldapi:// URL for a socket in the work dir.
lfe_slapd_ldapi() { echo "ldapi://$(printf '%s' "$LFE_WORK/slapd.sock" | sed 's|/|%2F|g')"; }

# ---- TLS test PKI (openssl CLI; keys made here, none committed) ----
# lfe_pki: a CA in $LFE_PKI (ca.crt/ca.key), a server certificate for
# $LFE_SADDR (srv.crt/srv.key, serial 0x1001), a client certificate it
# signs (cli.crt/cli.key), and a client certificate from another CA
# (evil.crt/evil.key).
lfe_pki() {
	command -v openssl >/dev/null || { echo "SKIP: no openssl CLI"; exit 77; }
	LFE_PKI=$LFE_WORK/pki
	mkdir -p "$LFE_PKI"
	local P=$LFE_PKI
	_lfe_ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/ca.key" \
		-out "$P/ca.crt" -days 2 -subj "/CN=ldapfe test CA"
	_lfe_ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/evilca.key" \
		-out "$P/evilca.crt" -days 2 -subj "/CN=another CA"
	lfe_pki_cert srv "$LFE_SADDR" 0x1001 serverAuth
	lfe_pki_cert cli alice 0x2001 clientAuth
	lfe_pki_cert evil alice 0x3001 clientAuth evilca
}
_lfe_ossl() { openssl "$@" >/dev/null 2>&1 || lfe_fail "openssl $1 failed"; }
# lfe_pki_cert NAME CN SERIAL EKU [CA]: $LFE_PKI/NAME.crt and NAME.key (a
# fresh P-256 key), signed by CA (default ca), valid 2 days.
lfe_pki_cert() {
	local P=$LFE_PKI n=$1 cn=$2 serial=$3 eku=$4 ca=${5:-ca}
	_lfe_ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/$n.key.new" \
		-out "$P/$n.csr" -subj "/CN=$cn"
	if [[ $eku == serverAuth ]]; then
		printf 'subjectAltName = IP:%s\nextendedKeyUsage = serverAuth\n' "$cn" > "$P/$n.ext"
	else
		printf 'extendedKeyUsage = clientAuth\n' > "$P/$n.ext"
	fi
	_lfe_ossl x509 -req -in "$P/$n.csr" -CA "$P/$ca.crt" -CAkey "$P/$ca.key" -set_serial "$serial" \
		-out "$P/$n.crt.new" -days 2 -extfile "$P/$n.ext"
	mv "$P/$n.key.new" "$P/$n.key"
	mv "$P/$n.crt.new" "$P/$n.crt"
}
# lfe_tls_conf [QPAIRS]: lfe_conf plus ldaps_ports = 636 and a [tls] section
# with srv.crt/srv.key and ca.crt; more [tls] keys may be appended.
lfe_tls_conf() {
	local f
	f=$(lfe_conf "${1:-1}")
	sed -i 's/^port = 389$/port = 389\nldaps_ports = 636/' "$f"
	printf '[tls]\ncertificate = %s\nkey = %s\nca = %s\n' "$LFE_PKI/srv.crt" "$LFE_PKI/srv.key" \
		"$LFE_PKI/ca.crt" >> "$f"
	echo "$f"
}
# lfe_sclient ARGS...: openssl s_client in the client namespace, trusting
# the test CA, stdin held open 1 s (TLS 1.3 tickets come after the
# handshake), bounded.
lfe_sclient() {
	sleep 1 | lfe_cli timeout 10 openssl s_client -CAfile "$LFE_PKI/ca.crt" -verify_return_error \
		"$@" 2>&1 || true
}
# lfe_start_refused CONF: the daemon must refuse to start; prints its output.
lfe_start_refused() {
	local out
	out=$(ip netns exec "$LFE_SRV" timeout 30 "$LFE_LDAPFE" -l 0 --no-pci --no-huge -m 768 \
		--file-prefix "$LFE_PREFIX" --log-level=lib.eal:error -- --config "$1" 2>&1) &&
		lfe_fail "started with $1: $out"
	echo "$out"
}

# lfe_stop_pid PID [SECONDS]: SIGTERM, up to SECONDS (default 5) for it to
# exit, then SIGKILL; reaps it (a background job of this shell). Empty PID:
# nothing.
lfe_stop_pid() {
	local pid=$1 s=${2:-5} i
	[[ -n $pid ]] || return 0
	if kill -TERM "$pid" 2>/dev/null; then
		for ((i = 0; i < s * 20; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$pid" 2>/dev/null; then
			lfe_log "pid $pid did not stop in $s s: KILL"
			kill -KILL "$pid" 2>/dev/null
		fi
	fi
	wait "$pid" 2>/dev/null || true
}
