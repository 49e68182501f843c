#!/usr/bin/env bash
# Certificates and keys reload without a restart: the server certificate is
# replaced on disk, then SIGHUP (and later `ldapfectl reload`) makes new
# connections see the new certificate (s_client: its serial), while an
# LDAPS connection made before keeps binding on its old context; a ticket
# issued before the reload still resumes after it; a key that does not
# match refuses the whole reload (ldapfectl exits 1 naming the key, SIGHUP
# logs it) and the old certificate is still served; [ldap] require_tls
# changes live; a certificate for another host, once loaded, is rejected by
# a client that checks the name.
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
