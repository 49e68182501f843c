#!/usr/bin/env bash
# StartTLS (RFC 4511 §4.14, RFC 4513 §3) on the cleartext port 389 with a
# [tls] certificate made here with the openssl CLI (throwaway CA, no key
# committed), and no LDAPS port: ldapwhoami -ZZ right and wrong password,
# ldapsearch -ZZ root DSE advertising the OID, python3-ldap3 start_tls()
# with certificate validation, openssl s_client -starttls ldap; StartTLS
# twice (the second gets operationsError under TLS); StartTLS with a request
# pipelined behind it in the same segment (never answered in clear);
# [ldap] require_tls = bind: a cleartext password bind gets 13, the same
# bind after StartTLS succeeds.
source "$(dirname "$0")/lib.sh"
lfe_init starttls 86
lfe_make_store
lfe_pki   # lib.sh: a throwaway CA and srv.* for $LFE_SADDR
P=$LFE_PKI

conf=$(lfe_conf 1)
printf '[tls]\ncertificate = %s\nkey = %s\n' "$P/srv.crt" "$P/srv.key" >> "$conf"
lfe_start "$conf" 0
H=ldap://$LFE_SADDR
tlscli() { lfe_cli env LDAPTLS_CACERT="$P/ca.crt" LDAPTLS_REQCERT=demand timeout 10 "$@"; }

lfe_eq "whoami -ZZ alice" "$(tlscli ldapwhoami -ZZ -x -H "$H" -D "$(lfe_dn alice)" -w alice-pw 2>&1)" \
	"dn:$(lfe_dn alice)"
rc=0
tlscli ldapwhoami -ZZ -x -H "$H" -D "$(lfe_dn alice)" -w nope >/dev/null 2>&1 || rc=$?
lfe_eq "whoami -ZZ wrong password" "$rc" 49
dse=$(tlscli ldapsearch -ZZ -x -LLL -H "$H" -b "" -s base supportedExtension)
grep -q "^supportedExtension: 1.3.6.1.4.1.1466.20037$" <<<"$dse" || lfe_fail "root DSE: $dse"
lfe_log "ok: ldapsearch -ZZ root DSE advertises StartTLS"

got=$(lfe_cli timeout 10 openssl s_client -brief -starttls ldap -connect "$LFE_SADDR:389" \
	-CAfile "$P/ca.crt" -verify_return_error </dev/null 2>&1 |
	awk '/^Protocol version *:/ { print $NF; exit }')
[[ $got == TLSv1.[23] ]] || lfe_fail "s_client -starttls ldap: '$got'"
lfe_log "ok: openssl s_client -starttls ldap ($got)"

got=$(lfe_py '
import ssl, sys
from ldap3 import Server, Connection, Tls
t = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=sys.argv[2])
c = Connection(Server(sys.argv[1], port=389, tls=t), sys.argv[3], "alice-pw")
c.open()
print(c.start_tls(), c.bind(), c.extend.standard.who_am_i())
' "$LFE_SADDR" "$P/ca.crt" "$(lfe_dn alice)")
lfe_eq "ldap3 start_tls + bind + whoami" "$got" "True True dn:$(lfe_dn alice)"

# Raw clients: StartTLS twice; StartTLS with a request pipelined behind it.
RAW='
import socket, ssl, sys, time
from lfe_ber import extended_req as msg, read_msg, result_code
STLS, WHO = "1.3.6.1.4.1.1466.20037", "1.3.6.1.4.1.4203.1.11.3"
def code(m):   # [APPLICATION 24] ExtendedResponse { ENUMERATED resultCode ... }
    op, rc = result_code(m)
    assert op == 0x78, m
    return rc
a = sys.argv[1]
s = socket.create_connection((a, 389), timeout=5)
s.sendall(msg(1, STLS))
r1 = code(read_msg(s))
ctx = ssl.create_default_context(cafile=sys.argv[2])
t = ctx.wrap_socket(s, server_hostname=a)
t.sendall(msg(2, STLS))
r2 = code(read_msg(t))
t.sendall(msg(3, WHO))
r3 = code(read_msg(t))
print("twice", r1, r2, r3)
s = socket.create_connection((a, 389), timeout=5)
s.sendall(msg(1, STLS) + msg(2, WHO))
r1 = code(read_msg(s))
rest, t0 = b"", time.time()
try:
    while time.time() - t0 < 5:
        b = s.recv(4096)
        if not b: break
        rest += b
except (socket.timeout, ConnectionResetError):
    pass
print("pipelined", r1, "clear-answer" if b"\x30" == rest[:1] else "none", time.time() - t0 < 5)
'
got=$(lfe_py "$RAW" "$LFE_SADDR" "$P/ca.crt")
lfe_eq "raw StartTLS checks" "$got" "twice 0 1 0
pipelined 0 none True"

lfe_eq "cleartext whoami still" "$(lfe_cli timeout 10 ldapwhoami -x -H "$H" \
	-D "$(lfe_dn bob)" -w bob-pw 2>&1)" "dn:$(lfe_dn bob)"
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0

# [ldap] require_tls = bind: a password bind in clear gets
# confidentialityRequired (13) unverified; the same bind after StartTLS
# succeeds; anonymous reads go on in clear.
sed -i 's/^\[ldap\]$/[ldap]\nrequire_tls = bind/' "$conf"
grep -q '^require_tls = bind$' "$conf" || lfe_fail "config edit"
lfe_start "$conf" 0
rc=0
out=$(lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn alice)" -w alice-pw 2>&1) || rc=$?
lfe_eq "cleartext bind under require_tls = bind" "$rc" 13
grep -q "Confidentiality required" <<<"$out" || lfe_fail "ldapwhoami said: $out"
lfe_eq "same bind after StartTLS" \
	"$(tlscli ldapwhoami -ZZ -x -H "$H" -D "$(lfe_dn alice)" -w alice-pw 2>&1)" "dn:$(lfe_dn alice)"
lfe_eq "anonymous whoami in clear" "$(lfe_cli timeout 10 ldapwhoami -x -H "$H" 2>&1)" "anonymous"
lfe_stop
lfe_eq "SIGTERM exit status (require_tls)" "$LFE_STOP_RC" 0
