#!/usr/bin/env bash
# Real LDAP clients (OpenLDAP tools, python3-ldap3) against the session, via
# tests/ldap/sockserver on 127.0.0.1 only. Runs everything twice: verdicts
# inline and verdicts delivered later (--pending), as slow schemes are.
# usage: test_clients.sh SOCKSERVER CLIENTS_PY
set -uo pipefail
server=$1 clients_py=$2
work=$(mktemp -d /tmp/lfe-clients.XXXXXX)
pid=
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

SUFFIX=dc=example,dc=com
ALICE=uid=alice,ou=people,$SUFFIX
printf '%s\n%s\n%s\t%s\n%s\t%s\n' "$SUFFIX" "ou=people,$SUFFIX" \
  "$ALICE" secret "uid=bob,ou=people,$SUFFIX" b0b > "$work/users"

fails=0
ok()   { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
T() { timeout 10 "$@"; }   # every client call is bounded

expect_rc() {  # expect_rc WANT NAME CMD... : exit status must be WANT
  local want=$1 name=$2; shift 2
  local out rc
  out=$(T "$@" 2>&1); rc=$?
  if [[ $rc == "$want" ]]; then ok "$name (rc $rc)"; else fail "$name: rc $rc want $want: $out"; fi
}
expect_out() {  # expect_out NAME PATTERN CMD... : rc 0 and output matches
  local name=$1 pat=$2; shift 2
  local out rc
  out=$(T "$@" 2>&1); rc=$?
  if [[ $rc == 0 ]] && grep -qE -- "$pat" <<<"$out"; then ok "$name"; else fail "$name: rc $rc: $out"; fi
}
expect_no() {  # expect_no NAME PATTERN CMD... : rc 0 and output lacks PATTERN
  local name=$1 pat=$2; shift 2
  local out rc
  out=$(T "$@" 2>&1); rc=$?
  if [[ $rc == 0 ]] && ! grep -qiE -- "$pat" <<<"$out"; then ok "$name"; else fail "$name: rc $rc: $out"; fi
}

run_suite() {  # run_suite LABEL [server options]
  local label=$1; shift
  rm -f "$work/port"
  "$server" 0 "$work/users" --portfile "$work/port" --max-seconds 110 "$@" >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do [[ -s $work/port ]] && break; sleep 0.1; done
  if [[ ! -s $work/port ]]; then fail "$label: server did not start: $(cat "$work/server.log")"; return; fi
  local port; port=$(cat "$work/port")
  local H=ldap://127.0.0.1:$port
  echo "# $label: sockserver on $H"

  expect_out "$label whoami alice" "^dn:$ALICE\$" ldapwhoami -x -H "$H" -D "$ALICE" -w secret
  expect_out "$label whoami DN case-folded" "^dn:$ALICE\$" ldapwhoami -x -H "$H" -D "UID=Alice,OU=People,DC=Example,DC=Com" -w secret
  expect_rc 49 "$label wrong password" ldapwhoami -x -H "$H" -D "$ALICE" -w nope
  expect_rc 49 "$label unknown DN" ldapwhoami -x -H "$H" -D "uid=zed,ou=people,$SUFFIX" -w secret
  expect_rc 53 "$label DN with empty password" ldapwhoami -x -H "$H" -D "$ALICE" -w ""
  expect_out "$label anonymous" "^anonymous\$" ldapwhoami -x -H "$H"
  local dse=(ldapsearch -x -LLL -H "$H" -b "" -s base)
  expect_out "$label root DSE namingContexts" "^namingContexts: $SUFFIX\$" "${dse[@]}"
  expect_out "$label root DSE version" "^supportedLDAPVersion: 3\$" "${dse[@]}"
  expect_out "$label root DSE WhoAmI" "^supportedExtension: 1.3.6.1.4.1.4203.1.11.3\$" "${dse[@]}"
  expect_out "$label root DSE vendor" "^vendorName: ldapfe\$" "${dse[@]}" +
  expect_out "$label search as alice" "^cn: alice\$" \
    ldapsearch -x -LLL -H "$H" -D "$ALICE" -w secret -b "$SUFFIX" "(uid=alice)" cn
  expect_no "$label search never returns userPassword" "userPassword" \
    ldapsearch -x -LLL -H "$H" -b "$SUFFIX" "(uid=alice)" userPassword "*"
  expect_rc 4 "$label size limit" ldapsearch -x -LLL -H "$H" -b "$SUFFIX" -z 1 "(objectClass=person)" 1.1
  local ldif="dn: uid=carol,ou=people,$SUFFIX
objectClass: inetOrgPerson
uid: carol
sn: c
cn: c
"
  expect_rc 53 "$label ldapadd refused" ldapadd -x -H "$H" -D "$ALICE" -w secret <<<"$ldif"
  expect_out "$label refusal says why" "read-only here; use ldapfectl" \
    bash -c "ldapmodify -x -H '$H' -D '$ALICE' -w secret <<<'dn: $ALICE
changetype: modify
replace: sn
sn: x
' ; true"
  expect_rc 53 "$label ldapdelete refused" ldapdelete -x -H "$H" -D "$ALICE" -w secret "uid=bob,ou=people,$SUFFIX"
  expect_out "$label python3-ldap3" "clients.py: ok" /usr/bin/python3 "$clients_py" "$port"

  kill "$pid"
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then fail "$label: server ignored SIGTERM"; kill -9 "$pid"; fi
  wait "$pid" 2>/dev/null; local rc=$?
  [[ $rc == 0 ]] && ok "$label server exit 0" || fail "$label server exit $rc: $(cat "$work/server.log")"
  pid=
}

run_suite inline
run_suite pending --pending
echo "$fails failure(s)"
((fails == 0))
