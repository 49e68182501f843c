# tests/integration/sync_provider.sh — an OpenLDAP provider for the sync
# consumer's tests and benchmark: back-mdb with the syncprov and ppolicy
# overlays, rootdn cn=admin (uid=user8 may not read pwdAccountLockedTime: a
# sync account that cannot see locks). Source it; needs LFE_WORK and
# LFE_SUFFIX.
#
#   prov_conf                      write $PROV_DIR/slapd.conf
#   prov_users N [PREFIX]          LDIF: suffix, ou=people, N users
#                                  uid=userI, password pw-I, {SSHA}/{SSHA512}
#                                  alternating (hashed here, no slappasswd)
#   prov_load FILE                 slapadd -q into an empty database
#   prov_start NETNS URL / prov_stop   slapd in the foreground, bounded waits
#   pmod                           ldapmodify on the provider as the admin

PROV_DIR=${LFE_WORK:?}/provider
PROV_ADMIN="cn=admin,$LFE_SUFFIX"
PROV_PW=admin-secret-9
PROV_PID=

# prov_conf [SESSIONLOG]: with a session log a refresh from a cookie gets a
# delete phase (syncIdSet of deleted UUIDs); without one, a present phase.
prov_conf() {
	mkdir -p "$PROV_DIR/db"
	printf '%s' "$PROV_PW" > "$PROV_DIR/admin.pw"
	chmod 600 "$PROV_DIR/admin.pw"
	local tls=
	if [[ -n ${PROV_TLS:-} ]]; then
		prov_certs || return 1
		tls="TLSCACertificateFile $PROV_DIR/ca.crt
TLSCertificateFile $PROV_DIR/server.crt
TLSCertificateKeyFile $PROV_DIR/server.key"
	fi
	cat > "$PROV_DIR/slapd.conf" <<CONF
$tls
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload syncprov
moduleload ppolicy
pidfile $PROV_DIR/slapd.pid
database mdb
maxsize 4294967296
suffix "$LFE_SUFFIX"
rootdn "$PROV_ADMIN"
rootpw $PROV_PW
directory $PROV_DIR/db
index objectClass,entryCSN,entryUUID eq
index uid eq
overlay syncprov
syncprov-checkpoint 100 1
$( [[ -n ${1:-} ]] && echo "syncprov-sessionlog $1" )
overlay ppolicy
access to attrs=userPassword by anonymous auth by * none
access to attrs=pwdAccountLockedTime by dn.exact="uid=user8,ou=people,$LFE_SUFFIX" none by * read
access to * by * read
CONF
}

# prov_certs: a throwaway CA and a server certificate for 127.0.0.1
# (PROV_TLS=1 before prov_conf turns TLS on: StartTLS and ldaps://).
prov_certs() {
	local d=$PROV_DIR
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=ldapfe test CA" -keyout "$d/ca.key" -out "$d/ca.crt" >/dev/null 2>&1 &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$d/server.key" -out "$d/server.csr" >/dev/null 2>&1 &&
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$d/san.ext" &&
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 2 -extfile "$d/san.ext" -out "$d/server.crt" >/dev/null 2>&1 &&
	chmod 644 "$d/server.key"
}

prov_users() {
	"${PY:-python3}" - "$1" "$LFE_SUFFIX" <<'PYEOF'
import base64, hashlib, os, sys
n, suffix = int(sys.argv[1]), sys.argv[2]
out = sys.stdout
out.write("dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: example\n\n" % suffix)
out.write("dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n" % suffix)
for i in range(n):
    salt = os.urandom(8)
    pw = b"pw-%d" % i
    if i % 2:
        h = "{SSHA512}" + base64.b64encode(hashlib.sha512(pw + salt).digest() + salt).decode()
    else:
        h = "{SSHA}" + base64.b64encode(hashlib.sha1(pw + salt).digest() + salt).decode()
    out.write("dn: uid=user%d,ou=people,%s\nobjectClass: inetOrgPerson\nuid: user%d\n"
              "cn: user %d\nsn: user%d\nmail: user%d@example.com\nuserPassword: %s\n\n"
              % (i, suffix, i, i, i, i, h))
PYEOF
}

prov_load() { slapadd -q -f "$PROV_DIR/slapd.conf" -l "$1" >/dev/null 2>&1; }

# prov_start NETNS URL: slapd serving URL (and PROV_LISTEN, if set, instead)
# inside NETNS ("" for none).
prov_start() {
	local ns=$1 i
	PROV_URL=$2
	if [[ -n $ns ]]; then
		ip netns exec "$ns" slapd -f "$PROV_DIR/slapd.conf" -h "${PROV_LISTEN:-$PROV_URL}" -d 0 \
			>>"$PROV_DIR/slapd.log" 2>&1 &
	else
		slapd -f "$PROV_DIR/slapd.conf" -h "${PROV_LISTEN:-$PROV_URL}" -d 0 >>"$PROV_DIR/slapd.log" 2>&1 &
	fi
	PROV_PID=$!
	LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $PROV_PID"
	PROV_NS=$ns
	for ((i = 0; i < 100; i++)); do
		pexec ldapwhoami -x -H "$PROV_URL" -D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" \
			>/dev/null 2>&1 && return 0
		kill -0 "$PROV_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$PROV_DIR/slapd.log" >&2
	echo "provider did not come up" >&2
	return 1
}

prov_stop() {
	local i
	[[ -n $PROV_PID ]] || return 0
	kill -TERM "$PROV_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do kill -0 "$PROV_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$PROV_PID" 2>/dev/null || true
	wait "$PROV_PID" 2>/dev/null || true
	PROV_PID=
}

pexec() { if [[ -n ${PROV_NS:-} ]]; then ip netns exec "$PROV_NS" "$@"; else "$@"; fi; }
pmod() { pexec timeout 60 ldapmodify -x -H "$PROV_URL" -D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" "$@"; }
