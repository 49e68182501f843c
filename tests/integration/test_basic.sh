#!/usr/bin/env bash
# ldapfe on af_packet/veth driven by OpenLDAP's command-line clients:
# ARP, ping, binds (right, wrong, unknown DN, empty password, anonymous,
# a slow {CRYPT} scheme through the verifier threads), root DSE, an indexed
# search, a password changed with ldapfectl while running, telemetry, and
# SIGTERM: exit 0 within a second with the final counters printed.
source "$(dirname "$0")/lib.sh"
lfe_init basic 11
lfe_make_store
conf=$(lfe_conf 1)
lfe_start "$conf" 0
H=ldap://$LFE_SADDR

# ARP: our address answered with the port's MAC, another address not.
mac=$(grep -o 'mac [0-9A-F:]*' "$LFE_LOG" | awk '{print tolower($2)}')
got=$(lfe_cli arping -c 1 -w 2 -I veth0 "$LFE_SADDR" | grep -o 'from [0-9a-f:]*' | awk '{print $2; exit}')
lfe_eq "arping answered by the port MAC" "$got" "$mac"
lfe_cli arping -c 1 -w 1 -I veth0 10.99.11.77 >/dev/null 2>&1 && lfe_fail "ARP for a foreign address answered"
lfe_log "ok: no ARP answer for a foreign address"
got=$(lfe_cli ping -c 5 -i 0.2 -W 1 -s 1000 "$LFE_SADDR" | grep -o '[0-9]* received' | cut -d' ' -f1)
lfe_eq "ping 5 x 1000 bytes" "$got" 5

whoami() { lfe_cli timeout 10 ldapwhoami -x -H "$H" "$@" 2>/dev/null; }
rc_of() { local rc=0; lfe_cli timeout 10 ldapwhoami -x -H "$H" "$@" >/dev/null 2>&1 || rc=$?; echo $rc; }

lfe_eq "whoami alice" "$(whoami -D "$(lfe_dn alice)" -w alice-pw)" "dn:$(lfe_dn alice)"
lfe_eq "whoami bob (DN in other case and spacing)" \
	"$(whoami -D "UID=Bob, OU=People, DC=Example, DC=Com" -w bob-pw)" "dn:$(lfe_dn bob)"
lfe_eq "wrong password" "$(rc_of -D "$(lfe_dn alice)" -w nope)" 49
lfe_eq "unknown DN" "$(rc_of -D "$(lfe_dn mallory)" -w alice-pw)" 49
lfe_eq "DN with empty password" "$(rc_of -D "$(lfe_dn alice)" -w '')" 53
lfe_eq "anonymous" "$(whoami)" "anonymous"
lfe_eq "slow scheme {CRYPT} right" "$(whoami -D "$(lfe_dn dave)" -w dave-pw)" "dn:$(lfe_dn dave)"
lfe_eq "slow scheme {CRYPT} wrong" "$(rc_of -D "$(lfe_dn dave)" -w nope)" 49

# Root DSE.
dse=$(lfe_cli timeout 10 ldapsearch -x -LLL -H "$H" -b "" -s base)
grep -q "^namingContexts: $LFE_SUFFIX" <<<"$dse" || lfe_fail "root DSE lacks namingContexts: $dse"
grep -q "^supportedLDAPVersion: 3" <<<"$dse" || lfe_fail "root DSE lacks supportedLDAPVersion: $dse"
lfe_log "ok: root DSE"

# Login-flow search: find the DN by uid (indexed), then bind as it.
dn=$(lfe_cli timeout 10 ldapsearch -x -LLL -H "$H" -b "$LFE_SUFFIX" -s sub "(uid=carol)" dn | sed -n 's/^dn: //p')
lfe_eq "search uid=carol" "$dn" "$(lfe_dn carol)"
got=$(lfe_cli timeout 10 ldapsearch -x -LLL -H "$H" -b "$LFE_SUFFIX" "(mail=bob@example.com)" mail userPassword)
grep -q "^mail: bob@example.com" <<<"$got" || lfe_fail "search by mail: $got"
grep -qi "userPassword" <<<"$got" && lfe_fail "search disclosed userPassword"
lfe_log "ok: search by mail, no userPassword"
rc=0; lfe_cli timeout 10 ldapsearch -x -LLL -H "$H" -b "$LFE_SUFFIX" "(sn=*)" >/dev/null 2>&1 || rc=$?
lfe_eq "unindexed subtree search refused (unwillingToPerform)" "$rc" 53

# Password change while the daemon runs: the next bind sees it.
echo "alice-new" | lfe_ctl passwd "$(lfe_dn alice)" >/dev/null
sleep 0.1
lfe_eq "new password after ldapfectl passwd" "$(whoami -D "$(lfe_dn alice)" -w alice-new)" "dn:$(lfe_dn alice)"
lfe_eq "old password refused" "$(rc_of -D "$(lfe_dn alice)" -w alice-pw)" 49

# Telemetry: the counters of what just happened.
tel=$(lfe_telemetry /ldapfe/stats)
ok=$("$PY" -c 'import json,sys; t=json.loads(sys.argv[1])["/ldapfe/stats"]["total"]; print(t["binds_ok"], t["binds_failed"], t["binds_offloaded"] in (2, 3), t["icmp_replies"] >= 5)' "$tel")
# Offloaded: dave's two binds, and mallory's if the unknown DN landed on
# dave (the store's keyed hash draws the real entry it takes the path of).
lfe_eq "telemetry binds ok/failed/offloaded (2 or 3), icmp" "$ok" "4 4 True True"

# A connection left open, then SIGTERM: exit 0 within a second, counters printed.
lfe_cli timeout 20 "$PY" -c '
import socket, time
s = socket.create_connection(("'"$LFE_SADDR"'", 389), timeout=5)
time.sleep(10)' &
LFE_EXTRA_PIDS=$!
sleep 0.5
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
((LFE_STOP_MS < 1000)) || lfe_fail "exit took ${LFE_STOP_MS} ms"
lfe_log "ok: exited in ${LFE_STOP_MS} ms"
grep -q "final counters" "$LFE_LOG" || lfe_fail "no final counters"
grep -q "lcore 0: rx [1-9]" "$LFE_LOG" || lfe_fail "final counters lack lcore 0"
echo "PASS test_basic"
