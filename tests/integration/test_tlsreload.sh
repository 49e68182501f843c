#!/usr/bin/env bash
# Certificates and keys reload without a restart: the server certificate is
# replaced on disk, then SIGHUP (and later `ldapfectl reload`) makes new
# connections see the new certificate (s_client: its serial), while an
# LDAPS connection made before keeps binding on its old context; a ticket
# issued before the reload still resumes after it; a key that does not
# match refuses the whole reload (ldapfectl exits 1 naming the key, SIGHUP
# logs it) and the old certificate is still served; [ldap] require_tls
# changes live; every other [tls] key is applied (status, a client) or the
# reload refused naming it; a certificate for another host, once loaded, is
# rejected by a client that checks the name.
source "$(dirname "$0")/lib.sh"
lfe_init tlsreload 29
lfe_make_store
lfe_pki
P=$LFE_PKI
ctl() { "$LFE_CTL" --prefix "$LFE_PREFIX" "$@"; }
serial() { lfe_sclient -connect "$LFE_SADDR:636" "$@" | openssl x509 -noout -serial 2>/dev/null; }
# wait_log PATTERN: bounded wait for a daemon log line.
wait_log() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q -- "$1" "$LFE_LOG" && return 0
		sleep 0.1
	done
	lfe_fail "no '$1' in the daemon's log"
}

conf=$(lfe_tls_conf)
lfe_start "$conf" 0
lfe_eq "serial at start" "$(serial)" "serial=1001"

# An LDAPS connection made now, bound, kept open across the reloads.
flag=$LFE_WORK/go
lfe_cli timeout 90 "$PY" -c '
import os, ssl, sys, time
from ldap3 import Server, Connection, Tls
ip, ca, dn, flag = sys.argv[1:5]
t = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=ca)
c = Connection(Server(ip, port=636, use_ssl=True, tls=t), dn, "alice-pw")
print("first", c.bind(), flush=True)
for _ in range(1200):
    if os.path.exists(flag):
        break
    time.sleep(0.05)
print("second", c.rebind(user=dn, password="alice-pw"), c.extend.standard.who_am_i(), flush=True)
' "$LFE_SADDR" "$P/ca.crt" "$(lfe_dn alice)" "$flag" > "$LFE_WORK/old.out" 2>&1 &
old=$!
LFE_EXTRA_PIDS="$old"
for ((i = 0; i < 100; i++)); do
	grep -q "^first" "$LFE_WORK/old.out" && break
	sleep 0.1
done
lfe_eq "the old connection bound" "$(head -1 "$LFE_WORK/old.out")" "first True"

# A TLS 1.3 session ticket issued before the reloads.
sess=$LFE_WORK/sess.pem
got=$(lfe_sclient -connect "$LFE_SADDR:636" -tls1_3 -sess_out "$sess" | grep -oE '^(New|Reused),')
lfe_eq "first session" "$got" "New,"

# SIGHUP after the certificate and key were replaced on disk.
lfe_pki_cert srv "$LFE_SADDR" 0x1002 serverAuth
kill -HUP "$LFE_PID"
wait_log "ldapfe: tls: .*serial 1002"
lfe_eq "serial after SIGHUP" "$(serial)" "serial=1002"
got=$(lfe_sclient -connect "$LFE_SADDR:636" -tls1_3 -sess_in "$sess" | grep -oE '^(New|Reused),')
lfe_eq "a ticket from before the reload resumes" "$got" "Reused,"

# ldapfectl reload, the same path.
lfe_pki_cert srv "$LFE_SADDR" 0x1003 serverAuth
lfe_eq "ldapfectl reload" "$(ctl reload 2>&1 | head -1)" "reloaded $conf"
lfe_eq "serial after ldapfectl reload" "$(serial)" "serial=1003"
grep -q "^tls: .*subject \"CN=$LFE_SADDR\" serial 1003 " <<<"$(ctl status)" ||
	lfe_fail "status does not show the new certificate: $(ctl status | grep tls)"
lfe_log "ok: ldapfectl status shows the new certificate"

# The connection made before both reloads still binds, on its old context.
touch "$flag"
wait "$old" || lfe_fail "the old connection's client failed: $(cat "$LFE_WORK/old.out")"
LFE_EXTRA_PIDS=
lfe_eq "the old connection binds after the reloads" "$(sed -n 2p "$LFE_WORK/old.out")" \
	"second True dn:$(lfe_dn alice)"

# A key that does not match: the whole reload is refused, nothing changes.
cp "$P/srv.key" "$P/srv.key.good"
cp "$P/cli.key" "$P/srv.key"
rc=0
err=$(ctl reload 2>&1) || rc=$?
lfe_eq "reload with a bad key exits 1" "$rc" 1
grep -q "\[tls\] key: $P/srv.key: does not match the certificate" <<<"$err" ||
	lfe_fail "the refusal does not name the key: $err"
lfe_log "ok: ldapfectl reload refused the bad key: $err"
kill -HUP "$LFE_PID"
wait_log "SIGHUP: reload refused, nothing changed: \[tls\] key: "
lfe_log "ok: SIGHUP refused the bad key (logged)"
lfe_eq "the old certificate is still served" "$(serial)" "serial=1003"
lfe_eq "LDAPS still works" "$(lfe_cli env LDAPTLS_CACERT="$P/ca.crt" timeout 10 ldapwhoami -x \
	-H "ldaps://$LFE_SADDR" -D "$(lfe_dn bob)" -w bob-pw 2>&1)" "dn:$(lfe_dn bob)"
mv "$P/srv.key.good" "$P/srv.key"

# require_tls changes live.
clear_rc() {
	local rc=0
	lfe_cli timeout 10 ldapwhoami -x -H "ldap://$LFE_SADDR" -D "$(lfe_dn bob)" -w bob-pw \
		>/dev/null 2>&1 || rc=$?
	echo $rc
}
lfe_eq "cleartext bind before" "$(clear_rc)" 0
sed -i 's/^ldaps_ports = 636$/ldaps_ports = 636\nrequire_tls = bind/' "$conf"
lfe_eq "ldapfectl reload (require_tls = bind)" "$(ctl reload 2>&1 | head -1)" "reloaded $conf"
lfe_eq "cleartext bind after: confidentialityRequired" "$(clear_rc)" 13
lfe_eq "StartTLS bind after" "$(lfe_cli env LDAPTLS_CACERT="$P/ca.crt" timeout 10 ldapwhoami -x \
	-ZZ -H "ldap://$LFE_SADDR" -D "$(lfe_dn bob)" -w bob-pw 2>&1)" "dn:$(lfe_dn bob)"

# Every other [tls] key through ldapfectl reload: applied live (status
# shows it, a client sees it) or the whole reload refused naming the key
# (before issue 28, handshake_threads, handshake_queue and
# handshake_per_source answered "reloaded" and changed nothing, and status
# did not show record_layer).
settls() {   # settls KEY VALUE: the key in the [tls] section (the file's last)
	sed -i "/^$1 = /d" "$conf"
	echo "$1 = $2" >> "$conf"
}
tstat() {
	"$PY" -c 'import json,sys; t=json.loads(sys.argv[1])["/ldapfe/stats"]["total"]
print(t[sys.argv[2]])' "$(lfe_telemetry /ldapfe/stats)" "$1"
}
live() {   # live KEY VALUE: reloaded
	settls "$1" "$2"
	lfe_eq "reload ($1 = $2)" "$(ctl reload 2>&1 | head -1)" "reloaded $conf"
}
refused() {   # refused KEY VALUE: refused naming the key, status unchanged, key restored
	local before rc=0 err
	before=$(ctl status | grep '^tls: ')
	cp "$conf" "$conf.good"
	settls "$1" "$2"
	err=$(ctl reload 2>&1) || rc=$?
	lfe_eq "reload ($1 = $2) exits 1" "$rc" 1
	grep -q "\[tls\] $1: cannot change while running" <<<"$err" ||
		lfe_fail "the refusal does not name [tls] $1: $err"
	lfe_eq "status after the refused $1" "$(ctl status | grep '^tls: ')" "$before"
	mv "$conf.good" "$conf"
}
refused handshake_threads 2
refused handshake_queue 128
refused handshake_per_source 4
grep -q "handshake_threads 1 queue 256 per_source 16" <<<"$(ctl status)" ||
	lfe_fail "status does not show the handshake settings: $(ctl status | grep tls)"
live handshake_timeout_ms 2500
grep -q "handshake_timeout_ms 2500," <<<"$(ctl status)" ||
	lfe_fail "status does not show handshake_timeout_ms 2500: $(ctl status | grep tls)"
h0=$(tstat tls_handover)
lfe_sclient -connect "$LFE_SADDR:636" -tls1_3 > /dev/null
h1=$(tstat tls_handover)
[[ $h1 -gt $h0 ]] || lfe_fail "record_layer = ldapfe: no handover ($h0 -> $h1)"
live record_layer openssl
grep -q "record_layer openssl," <<<"$(ctl status)" ||
	lfe_fail "status does not show record_layer openssl: $(ctl status | grep tls)"
lfe_sclient -connect "$LFE_SADDR:636" -tls1_3 > /dev/null
lfe_eq "record_layer = openssl: no handover after the reload" "$(tstat tls_handover)" "$h1"
live record_layer ldapfe
live ciphersuites TLS_CHACHA20_POLY1305_SHA256
grep -q "TLS_CHACHA20_POLY1305_SHA256" <<<"$(lfe_sclient -connect "$LFE_SADDR:636" -tls1_3)" ||
	lfe_fail "ciphersuites: ChaCha20-Poly1305 not negotiated after the reload"
lfe_log "ok: ciphersuites applied"
live protocol_min 1.3
lfe_sclient -connect "$LFE_SADDR:636" -tls1_2 | grep -q "BEGIN CERTIFICATE" &&
	lfe_fail "protocol_min = 1.3: a TLS 1.2 handshake still completes"
lfe_log "ok: protocol_min applied (TLS 1.2 refused)"
live protocol_min 1.2
live ciphers ECDHE-ECDSA-AES256-GCM-SHA384
grep -q "ECDHE-ECDSA-AES256-GCM-SHA384" <<<"$(lfe_sclient -connect "$LFE_SADDR:636" -tls1_2)" ||
	lfe_fail "ciphers: not applied for TLS 1.2"
lfe_log "ok: ciphers applied"
live ticket_lifetime 600
grep -q "lifetime hint: 600 " <<<"$(lfe_sclient -connect "$LFE_SADDR:636" -tls1_3)" ||
	lfe_fail "ticket_lifetime: no 600 s ticket lifetime hint after the reload"
lfe_log "ok: ticket_lifetime applied"
live verify_client optional
live ca "$P/ca.crt"

# A certificate for another host: served after the reload, and refused by
# a client that checks the name (libldap, LDAPTLS_REQCERT=demand).
lfe_pki_cert srv 10.99.29.99 0x1004 serverAuth
lfe_eq "reload (wrong-host certificate)" "$(ctl reload 2>&1 | head -1)" "reloaded $conf"
lfe_eq "serial of the wrong-host certificate" "$(serial)" "serial=1004"
rc=0
out=$(lfe_cli env LDAPTLS_CACERT="$P/ca.crt" LDAPTLS_REQCERT=demand timeout 10 ldapwhoami -x \
	-H "ldaps://$LFE_SADDR" -D "$(lfe_dn bob)" -w bob-pw 2>&1) || rc=$?
[[ $rc != 0 ]] || lfe_fail "a certificate for another host was accepted: $out"
lfe_log "ok: the client rejects a certificate for another host (rc $rc)"
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
echo "PASS test_tlsreload"
