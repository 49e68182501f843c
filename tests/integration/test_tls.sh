#!/usr/bin/env bash
# LDAPS: ldapfe with [ldap] ldaps_ports = 636 and a [tls] certificate made
# here with the openssl CLI (a throwaway CA; no key is committed), driven by
# real TLS clients: ldapwhoami over ldaps:// with LDAPTLS_CACERT (right and
# wrong password), python3-ldap3 validating the certificate, openssl
# s_client checking TLS 1.2 and 1.3; garbage on 636 is closed without
# harming anyone; cleartext 389 goes on; a key that does not match the
# certificate is refused at start with the key and the reason. TLS 1.3
# sessions run on ldapfe's record layer (tls_handover); record_layer =
# openssl keeps them on OpenSSL.
source "$(dirname "$0")/lib.sh"
lfe_init tls 85
lfe_make_store
command -v openssl >/dev/null || { echo "SKIP: no openssl CLI"; exit 77; }

# ---- certificates ----
P=$LFE_WORK/pki
mkdir -p "$P"
ossl() { openssl "$@" >/dev/null 2>&1 || lfe_fail "openssl $1 failed"; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/ca.key" \
	-out "$P/ca.crt" -days 2 -subj "/CN=ldapfe test CA"
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/srv.key" \
	-out "$P/srv.csr" -subj "/CN=$LFE_SADDR"
printf 'subjectAltName = IP:%s\nextendedKeyUsage = serverAuth\n' "$LFE_SADDR" > "$P/ext"
ossl x509 -req -in "$P/srv.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
	-out "$P/srv.crt" -days 2 -extfile "$P/ext"
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/other.key" \
	-out "$P/other.csr" -subj "/CN=other"

tls_conf() {   # tls_conf KEY: the default config plus LDAPS
	local f
	f=$(lfe_conf 1)
	sed -i 's/^port = 389$/port = 389\nldaps_ports = 636/' "$f"
	printf '[tls]\ncertificate = %s\nkey = %s\n' "$P/srv.crt" "$1" >> "$f"
	echo "$f"
}

# A key that does not match the certificate: refused at start, with reason.
conf=$(tls_conf "$P/other.key")
out=$(ip netns exec "$LFE_SRV" timeout 30 "$LFE_LDAPFE" -l 0 --no-pci --no-huge -m 768 \
	--file-prefix "$LFE_PREFIX" --log-level=lib.eal:error -- --config "$conf" 2>&1) &&
	lfe_fail "started with a key that does not match the certificate"
grep -q '\[tls\] key: .*does not match the certificate' <<<"$out" ||
	lfe_fail "no key/reason in the refusal: $out"
lfe_log "ok: mismatched key refused at start"

conf=$(tls_conf "$P/srv.key")
lfe_start "$conf" 0
grep -q "LDAPS port(s) 636" "$LFE_LOG" || lfe_fail "LDAPS port not announced"
# ldapfectl status names the ports, the [tls] settings in force, the certificate's subject and expiry.
st=$("$LFE_CTL" --prefix "$LFE_PREFIX" status)
grep -Eq "^tls: ldaps port\(s\) 636, StartTLS on, require_tls none, record_layer ldapfe, handshake_timeout_ms 10000, handshake_threads 1 queue 1024 per_source 16, certificate $P/srv.crt subject \"CN=$LFE_SADDR\" serial [0-9A-F]+ expires [0-9T:-]+Z \([12] days\)$" <<<"$st" ||
	lfe_fail "status tls line: $(grep ^tls: <<<"$st")"
S=ldaps://$LFE_SADDR
tlscli() { lfe_cli env LDAPTLS_CACERT="$P/ca.crt" LDAPTLS_REQCERT=demand timeout 10 "$@"; }

lfe_eq "ldaps whoami alice" "$(tlscli ldapwhoami -x -H "$S" -D "$(lfe_dn alice)" -w alice-pw 2>&1)" \
	"dn:$(lfe_dn alice)"
rc=0
tlscli ldapwhoami -x -H "$S" -D "$(lfe_dn alice)" -w nope >/dev/null 2>&1 || rc=$?
lfe_eq "ldaps wrong password" "$rc" 49
dse=$(tlscli ldapsearch -x -LLL -H "$S" -b "" -s base namingContexts)
grep -q "^namingContexts: $LFE_SUFFIX" <<<"$dse" || lfe_fail "ldaps root DSE: $dse"
lfe_log "ok: ldaps root DSE"
# Without the CA the client refuses the server.
rc=0
lfe_cli env LDAPTLS_CACERT=/dev/null LDAPTLS_REQCERT=demand timeout 10 \
	ldapwhoami -x -H "$S" >/dev/null 2>&1 || rc=$?
[[ $rc != 0 ]] || lfe_fail "client accepted an unknown CA"
lfe_log "ok: certificate from an unknown CA rejected by the client"

# Protocol versions.
for v in 1_2 1_3; do
	# -brief prints the protocol right after the handshake (the full
	# summary may not come before stdin's EOF closes the connection).
	got=$(lfe_cli timeout 10 openssl s_client -brief -connect "$LFE_SADDR:636" -tls$v \
		-CAfile "$P/ca.crt" -verify_return_error </dev/null 2>&1 |
		awk '/^Protocol version *:/ { print $NF; exit }')
	lfe_eq "s_client TLS ${v/_/.}" "$got" "TLSv${v/_/.}"
done

# The default TLS 1.2 list (no [tls] ciphers): ECDHE with AEAD only, the
# server's order (AES-128-GCM first) over the client's; CBC and RSA key
# transport get no handshake.
c12() {
	lfe_cli timeout 10 openssl s_client -connect "$LFE_SADDR:636" -tls1_2 -CAfile "$P/ca.crt" \
		-verify_return_error -cipher "$1" </dev/null 2>&1 |
		awk '/^New, .*Cipher is/ { print $NF; exit }' || true
}
lfe_eq "TLS 1.2 default order" "$(c12 ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256)" \
	"ECDHE-ECDSA-AES128-GCM-SHA256"
lfe_eq "TLS 1.2 default: ChaCha20" "$(c12 ECDHE-ECDSA-CHACHA20-POLY1305)" "ECDHE-ECDSA-CHACHA20-POLY1305"
for c in ECDHE-ECDSA-AES128-SHA ECDHE-ECDSA-AES256-SHA384 AES128-GCM-SHA256; do
	got=$(c12 "$c")
	[[ -z $got || $got == "(NONE)" ]] || lfe_fail "TLS 1.2 default list took $c: $got"
done
lfe_log "ok: TLS 1.2 default list refuses CBC and RSA key transport"

# python3-ldap3 with certificate validation.
got=$(lfe_py '
import ssl, sys
from ldap3 import Server, Connection, Tls
t = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=sys.argv[2])
c = Connection(Server(sys.argv[1], port=636, use_ssl=True, tls=t), sys.argv[3], "alice-pw")
print(c.bind(), c.extend.standard.who_am_i())
' "$LFE_SADDR" "$P/ca.crt" "$(lfe_dn alice)")
lfe_eq "ldap3 LDAPS bind + whoami" "$got" "True dn:$(lfe_dn alice)"

# Every TLS 1.3 session above (libldap's GnuTLS: 2 whoami, a search; the
# s_client and ldap3's OpenSSL) ran on ldapfe's record layer after its
# handshake ([tls] record_layer = ldapfe, the default).
handover() {
	sleep 0.1   # counters are published every millisecond
	"$LFE_CTL" --prefix "$LFE_PREFIX" stats | awk '$1 == "tls_handover" { print $2 }'
}
ho=$(handover)
(( ${ho:-0} >= 4 )) || lfe_fail "tls_handover ${ho:-missing}, want 4 or more"
lfe_log "ok: TLS 1.3 sessions on ldapfe's record layer ($ho)"

# Garbage on 636: the connection is closed (an alert at most), promptly.
got=$(lfe_py '
import socket, sys, time
s = socket.create_connection((sys.argv[1], 636), timeout=5)
s.sendall(b"\x30\x0c\x02\x01\x01\x60\x07\x02\x01\x03\x04\x00\x80\x00" + b"garbage" * 50)
t0, data = time.time(), b""
while True:
    b = s.recv(4096)
    if not b:
        break
    data += b
print("closed", len(data) < 64, time.time() - t0 < 5)
' "$LFE_SADDR")
lfe_eq "garbage on 636 closed" "$got" "closed True True"

# Cleartext 389 unaffected, and LDAPS again after the garbage.
lfe_eq "cleartext whoami" "$(lfe_cli timeout 10 ldapwhoami -x -H "ldap://$LFE_SADDR" \
	-D "$(lfe_dn bob)" -w bob-pw 2>&1)" "dn:$(lfe_dn bob)"
lfe_eq "ldaps after garbage" "$(tlscli ldapwhoami -x -H "$S" -D "$(lfe_dn bob)" -w bob-pw 2>&1)" \
	"dn:$(lfe_dn bob)"
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0

# [tls] record_layer = openssl: OpenSSL's records throughout, same answers.
conf=$(tls_conf "$P/srv.key")
printf 'record_layer = openssl\n' >> "$conf"
lfe_start "$conf" 0
lfe_eq "record_layer openssl: ldaps whoami" \
	"$(tlscli ldapwhoami -x -H "$S" -D "$(lfe_dn alice)" -w alice-pw 2>&1)" "dn:$(lfe_dn alice)"
lfe_eq "record_layer openssl: nothing handed over" "$(handover)" 0
lfe_stop
lfe_eq "SIGTERM exit status (record_layer openssl)" "$LFE_STOP_RC" 0
