#!/usr/bin/env bash
# [tls] policy through real clients: session resumption (openssl s_client
# -sess_out/-sess_in shows "Reused" on TLS 1.2 and 1.3, on LDAPS and via
# -starttls ldap; ticket_lifetime = 0 never resumes), client certificates
# (verify_client = require: none or one from another CA → no handshake,
# one the CA signed → ldapwhoami works, over LDAPS and StartTLS), the
# server's cipher lists and preference (ciphers, ciphersuites), TLS 1.1
# refused, protocol_min = 1.3 refusing TLS 1.2, and every bad [tls] value
# refused at start with the key and the reason. Bad input: a record longer
# than TLS allows and garbage are closed and counted (tls_failed), a
# renegotiation attempt is refused, half a ClientHello gets no answer and
# leaves nothing behind.
source "$(dirname "$0")/lib.sh"
lfe_init tlsclient 30
lfe_make_store
lfe_pki
P=$LFE_PKI
S=ldaps://$LFE_SADDR
W=$LFE_WORK

# resume ARGS...: "FIRST SECOND" — New/Reused of a first s_client session
# and of a second one offered the first's session ("none" when the first
# left no session to offer).
resume() {
	local s=$W/sess.pem a b
	rm -f "$s"
	a=$(lfe_sclient "$@" -sess_out "$s" | grep -oE '^(New|Reused),' | head -1)
	if [[ -s $s ]]; then
		b=$(lfe_sclient "$@" -sess_in "$s" | grep -oE '^(New|Reused),' | head -1)
	else
		b=none,
	fi
	echo "${a%,} ${b%,}"
}
tls_failed() {
	sleep 0.1   # counters are published every millisecond
	"$LFE_CTL" --prefix "$LFE_PREFIX" stats | awk '$1 == "tls_failed" { print $2 }'
}
cipher_of() { lfe_sclient "$@" | awk '/^New, .*Cipher is/ { print $NF; exit }'; }
whoami() {   # whoami URI [ENV...]: ldapwhoami as alice, prints the output or "rc N"
	local uri=$1 out rc=0
	shift
	out=$(lfe_cli env LDAPTLS_CACERT="$P/ca.crt" LDAPTLS_REQCERT=demand "$@" timeout 10 \
		ldapwhoami -x -H "$uri" ${ZZ:-} -D "$(lfe_dn alice)" -w alice-pw 2>&1) || rc=$?
	((rc == 0)) && echo "$out" || echo "rc $rc"
}

# ---- run 1: tickets on (default lifetime), the server's cipher lists ----
conf=$(lfe_tls_conf)
cat >> "$conf" <<EOF
ciphers = ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES256-GCM-SHA384
ciphersuites = TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384
EOF
lfe_start "$conf" 0
for v in 1_2 1_3; do
	lfe_eq "LDAPS TLS ${v/_/.} resumption" "$(resume -connect "$LFE_SADDR:636" -tls$v)" "New Reused"
	lfe_eq "StartTLS TLS ${v/_/.} resumption" \
		"$(resume -connect "$LFE_SADDR:389" -starttls ldap -tls$v)" "New Reused"
done
# The server's order wins over the client's.
lfe_eq "TLS 1.2 server cipher preference" "$(cipher_of -connect "$LFE_SADDR:636" -tls1_2 \
	-cipher ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305)" \
	"ECDHE-ECDSA-CHACHA20-POLY1305"
lfe_eq "TLS 1.3 server suite preference" "$(cipher_of -connect "$LFE_SADDR:636" -tls1_3 \
	-ciphersuites TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256)" \
	"TLS_CHACHA20_POLY1305_SHA256"
out=$(lfe_sclient -connect "$LFE_SADDR:636" -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256)
grep -q "^New, TLSv" <<<"$out" && lfe_fail "a cipher outside [tls] ciphers was accepted"
lfe_log "ok: a TLS 1.2 cipher outside the list gets no handshake"
# TLS 1.1: the client must be allowed to offer it (security level 0).
out=$(lfe_sclient -connect "$LFE_SADDR:636" -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0')
if grep -q "no protocols available" <<<"$out"; then
	lfe_log "note: this openssl client cannot offer TLS 1.1; not tested"
else
	grep -q "^New, TLSv" <<<"$out" && lfe_fail "TLS 1.1 accepted: $out"
	grep -qi "alert protocol version\|unsupported protocol\|wrong version" <<<"$out" ||
		lfe_fail "TLS 1.1: no protocol-version refusal: $out"
	lfe_log "ok: TLS 1.1 refused by the server (protocol version alert)"
fi
# A record longer than TLS allows, then garbage: each connection is closed
# promptly (an alert at most) and counted.
f0=$(tls_failed)
got=$(lfe_py '
import socket, sys, time
for bad in (b"\x16\x03\x01\xff\xff" + b"\x01" * 3000, b"\x00garbage" * 100):
    s = socket.create_connection((sys.argv[1], 636), timeout=5)
    s.sendall(bad)
    t0, data = time.time(), b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        data += b
    print("closed", len(data) < 64, time.time() - t0 < 5)
' "$LFE_SADDR" | sort -u)
lfe_eq "oversized record and garbage closed" "$got" "closed True True"
lfe_eq "TLS failures counted" "$(($(tls_failed) - f0))" 2
# A renegotiation attempt (s_client's R) is refused.
out=$( (echo R; sleep 2) | lfe_cli timeout 10 openssl s_client -CAfile "$P/ca.crt" \
	-connect "$LFE_SADDR:636" -tls1_2 2>&1 || true)
grep -q "^RENEGOTIATING" <<<"$out" || lfe_fail "s_client did not try to renegotiate"
grep -q "no renegotiation" <<<"$out" || lfe_fail "renegotiation not refused: $(tail -5 <<<"$out")"
lfe_log "ok: renegotiation refused"
# A ClientHello cut in the middle: no answer (the server waits for the
# rest), and the connection is gone once the client leaves.
got=$(lfe_py '
import socket, ssl, sys
inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
o = ssl.create_default_context().wrap_bio(inb, outb, server_hostname="x")
try:
    o.do_handshake()
except ssl.SSLWantReadError:
    pass
ch = outb.read()
s = socket.create_connection((sys.argv[1], 636), timeout=2)
s.sendall(ch[: len(ch) // 2])
try:
    print("answered", s.recv(100))
except socket.timeout:
    print("waiting")
s.close()
' "$LFE_SADDR")
lfe_eq "half a ClientHello" "$got" "waiting"
for ((i = 0; i < 50; i++)); do
	n=$("$LFE_CTL" --prefix "$LFE_PREFIX" stats | awk '$1 == "conns_active" { print $2 }')
	[[ $n == 0 ]] && break
	sleep 0.1
done
lfe_eq "no connection left after the cut ClientHello" "$n" 0
lfe_eq "LDAPS whoami without a client certificate (verify_client none)" "$(whoami "$S")" \
	"dn:$(lfe_dn alice)"
lfe_stop_restart

# ---- run 2: verify_client = require, no tickets, TLS 1.3 only ----
conf=$(lfe_tls_conf)
printf 'verify_client = require\nticket_lifetime = 0\nprotocol_min = 1.3\n' >> "$conf"
lfe_start "$conf" 0
CERT=(LDAPTLS_CERT="$P/cli.crt" LDAPTLS_KEY="$P/cli.key")
EVIL=(LDAPTLS_CERT="$P/evil.crt" LDAPTLS_KEY="$P/evil.key")
f0=$(tls_failed)
got=$(whoami "$S")
[[ $got == rc* ]] || lfe_fail "no client certificate, yet: $got"
(($(tls_failed) > f0)) || lfe_fail "the failed handshake was not counted in tls_failed"
lfe_log "ok: required client certificate missing → no session ($got)"
lfe_eq "client certificate from the CA: LDAPS whoami" "$(whoami "$S" "${CERT[@]}")" "dn:$(lfe_dn alice)"
lfe_eq "client certificate from the CA: StartTLS whoami" \
	"$(ZZ=-ZZ whoami "ldap://$LFE_SADDR" "${CERT[@]}")" "dn:$(lfe_dn alice)"
got=$(whoami "$S" "${EVIL[@]}")
[[ $got == rc* ]] || lfe_fail "a certificate from another CA was accepted: $got"
lfe_log "ok: client certificate from another CA → no session ($got)"
got=$(ZZ=-ZZ whoami "ldap://$LFE_SADDR")
[[ $got == rc* ]] || lfe_fail "StartTLS without the required certificate: $got"
lfe_log "ok: StartTLS without the required certificate → no session"
got=$(resume -connect "$LFE_SADDR:636" -tls1_3 -cert "$P/cli.crt" -key "$P/cli.key")
[[ $got == "New New" || $got == "New none" ]] || lfe_fail "ticket_lifetime 0: $got"
lfe_log "ok: ticket_lifetime = 0: no resumption ($got)"
out=$(lfe_sclient -connect "$LFE_SADDR:636" -tls1_2 -cert "$P/cli.crt" -key "$P/cli.key")
grep -q "^New, TLSv" <<<"$out" && lfe_fail "TLS 1.2 accepted with protocol_min = 1.3"
lfe_log "ok: protocol_min = 1.3 refuses TLS 1.2"
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0

# ---- bad values: refused at start, naming the key and the reason ----
# An expired certificate for the server's own key, signed by the CA.
"$PY" - "$P" <<'EOF' || lfe_fail "cannot make the expired certificate"
import datetime, sys
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID
p = sys.argv[1]
ca = x509.load_pem_x509_certificate(open(p + "/ca.crt", "rb").read())
cak = serialization.load_pem_private_key(open(p + "/ca.key", "rb").read(), None)
key = serialization.load_pem_private_key(open(p + "/srv.key", "rb").read(), None)
now = datetime.datetime.now(datetime.timezone.utc)
c = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "old")]))
     .issuer_name(ca.subject).public_key(key.public_key()).serial_number(77)
     .not_valid_before(now - datetime.timedelta(days=3)).not_valid_after(now - datetime.timedelta(days=1))
     .sign(cak, hashes.SHA256()))
open(p + "/expired.crt", "wb").write(c.public_bytes(serialization.Encoding.PEM))
EOF
refused() {   # refused WHAT PATTERN LINES...: a config with LINES appended to [tls]
	local what=$1 pat=$2 out
	shift 2
	conf=$(lfe_tls_conf)
	printf '%s\n' "$@" >> "$conf"
	out=$(lfe_start_refused "$conf")
	grep -q -- "$pat" <<<"$out" || lfe_fail "$what: no key/reason in: $out"
	lfe_log "ok: $what refused at start: $(grep -o -- "$pat.*" <<<"$out" | head -1)"
}
refused "protocol_min 1.1" '\[tls\] protocol_min: "1.1": expected 1.2 or 1.3' "protocol_min = 1.1"
refused "bad cipher string" '\[tls\] ciphers: NOPE-CIPHER: no TLS 1.2 cipher' "ciphers = NOPE-CIPHER"
refused "bad ciphersuites" '\[tls\] ciphersuites: TLS_NOPE: ' "ciphersuites = TLS_NOPE"
refused "ticket_lifetime too long" '\[tls\] ticket_lifetime: 999999 out of range' \
	"ticket_lifetime = 999999"
conf=$(lfe_tls_conf)
sed -i "s|^key = .*|key = $P/missing.key|" "$conf"
out=$(lfe_start_refused "$conf")
grep -q "\[tls\] key: $P/missing.key: cannot read: No such file" <<<"$out" ||
	lfe_fail "unreadable key: $out"
lfe_log "ok: unreadable key refused at start"
sed -i "s|^key = .*|key = $P/cli.key|" "$conf"
out=$(lfe_start_refused "$conf")
grep -q "\[tls\] key: .*does not match the certificate" <<<"$out" || lfe_fail "mismatched key: $out"
lfe_log "ok: key of another certificate refused at start"
sed -i "s|^key = .*|key = $P/srv.key|; s|^certificate = .*|certificate = $P/expired.crt|" "$conf"
out=$(lfe_start_refused "$conf")
grep -q "\[tls\] certificate: $P/expired.crt: expired" <<<"$out" || lfe_fail "expired: $out"
lfe_log "ok: expired certificate refused at start"
conf=$(lfe_tls_conf)
sed -i '/^ca = /d' "$conf"
echo "verify_client = require" >> "$conf"
out=$(lfe_start_refused "$conf")
grep -q "\[tls\] verify_client: needs \[tls\] ca" <<<"$out" || lfe_fail "verify without ca: $out"
lfe_log "ok: verify_client without ca refused at start"
echo "PASS test_tlsclient"
