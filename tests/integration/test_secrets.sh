#!/usr/bin/env bash
# Secrets and the search access policy through the real daemon, with real
# clients (ldapsearch and python3-ldap3):
#   - an anonymous and a bound client try every filter type on
#     userPassword, userPassword;x-legacy, authPassword (by name, OID, with
#     options, nested) and never get the entry back;
#   - secret attributes with options are never returned, whatever is asked;
#   - search_access = bound refuses anonymous searches (50) and allows bound
#     ones; allow_anonymous = false refuses anonymous searches (and binds);
#     the root DSE stays readable;
#   - a filter over the piece cap is answered adminLimitExceeded (11).
source "$(dirname "$0")/lib.sh"
lfe_init secrets 60
lfe_make_store

# erin: every kind of secret, values known to the test. Her main
# userPassword is {SSHA} of erin-pw; the others are opaque hashed values.
LEGACY='{SSHA}bGVnYWN5bGVnYWN5bGVnYWN5'
AUTH='SHA1$c2FsdA$aGFzaGhhc2g'
AUTHFOO='MD5$Zm9v$YmFyYmF6'
echo erin-pw | lfe_ctl --scheme '{SSHA}' user add "$(lfe_dn erin)" --password-stdin \
	--attr "mail=erin@example.com" --attr "userPassword;x-legacy=$LEGACY" \
	--attr "authPassword=$AUTH" --attr "authPassword;foo=$AUTHFOO" >/dev/null
ERIN_PW=$(lfe_ctl export | "$PY" -c '
import sys, base64
dn = None
for line in sys.stdin.read().replace("\n ", "").splitlines():
    if line.startswith("dn: "): dn = line[4:]
    if dn and dn.startswith("uid=erin,") and line.startswith("userPassword:: "):
        print(base64.b64decode(line[15:]).decode()); break
')
[[ $ERIN_PW == '{SSHA}'* ]] || lfe_fail "cannot read erin's stored hash ($ERIN_PW)"

conf=$(lfe_conf 1)
with_keys() {   # with_keys KEY=VALUE...: a copy of $conf with [ldap] keys added
	local f=$LFE_WORK/ldapfe-$RANDOM.conf kv
	cp "$conf" "$f"
	for kv in "$@"; do sed -i "/^\[ldap\]/a ${kv%%=*} = ${kv#*=}" "$f"; done
	echo "$f"
}

H=ldap://$LFE_SADDR
ERIN=$(lfe_dn erin)
# ldapsearch ARGS...: print "rc=N" and the DNs and attribute names found.
lsearch() {
	local rc=0 out
	out=$(lfe_cli timeout 20 ldapsearch -x -LLL -o nettimeout=5 -o ldif-wrap=no -H "$H" "$@" 2>&1) || rc=$?
	echo "rc=$rc"
	printf '%s\n' "$out" | { grep -E '^(dn|[A-Za-z0-9.;-]+):' || true; } | cut -d: -f1 | sort -u
}
as_alice=(-D "$(lfe_dn alice)" -w alice-pw)

# ---- 1. default policy: anonymous and bound clients, every filter type ----
lfe_start "$conf" 0
filters=()
for t in userPassword USERPASSWORD 2.5.4.35 'userPassword;x-legacy' '2.5.4.35;X-LEGACY' \
	 authPassword 1.3.6.1.4.1.4203.1.3.4 'authPassword;foo'; do
	case $t in
	*[Ll][Ee][Gg][Aa][Cc][Yy]) v=$LEGACY ;;
	*foo) v=$AUTHFOO ;;
	auth*|1.3.6.1.4.1.4203.1.3.4) v=$AUTH ;;
	*) v=$ERIN_PW ;;
	esac
	ve=$("$PY" -c 'import sys; print("".join("\\%02x" % b if chr(b) in "*()\\" else chr(b) for b in sys.argv[1].encode()))' "$v")
	filters+=("($t=$ve)" "($t=*)" "($t=${ve:0:7}*)" "($t=*${ve:3:4}*)" "($t=*${ve: -4})"
		  "($t>=!)" "($t<=~)" "($t~=$ve)" "($t:=$ve)" "($t:dn:=$ve)"
		  "($t:caseExactMatch:=$ve)" "(!($t=nomatch))" "(!(!($t=*)))")
done
filters+=("(:caseExactMatch:=$ERIN_PW)" "(:dn:2.5.13.5:=$AUTH)")
# One ldapsearch per client kind, one search per filter (-f FILE: the
# pattern's %s is each line; -c: on past an error). Its LDIF comments give
# each search's result: all of them must be there and succeed.
printf '%s\n' "${filters[@]}" > "$LFE_WORK/filters"
n=0 leaks=0
for who in anon bound; do
	if [[ $who == anon ]]; then args=(); else args=("${as_alice[@]}"); fi
	rc=0
	out=$(lfe_cli timeout 60 ldapsearch -x -o nettimeout=5 -o ldif-wrap=no -H "$H" "${args[@]}" \
		-b "$LFE_SUFFIX" -c -f "$LFE_WORK/filters" "(&(uid=erin)%s)" uid 2>&1) || rc=$?
	((rc == 0)) || lfe_fail "ldapsearch -f ($who): rc=$rc: $(grep -E '^result:' <<<"$out" | sort | uniq -c)"
	lfe_eq "ldapsearch ($who): searches that succeeded" "$(grep -c '^result: 0 Success$' <<<"$out")" \
		"${#filters[@]}"
	l=$(grep -ciF "dn: $ERIN" <<<"$out" || true)
	if ((l > 0)); then   # name them: one search per filter
		for f in "${filters[@]}"; do
			r=$(lsearch "${args[@]}" -b "$LFE_SUFFIX" "(&(uid=erin)$f)" uid)
			grep -q '^dn' <<<"$r" && echo "LEAK ($who): $f" >&2
		done
	fi
	leaks=$((leaks + l)) n=$((n + ${#filters[@]}))
done
lfe_eq "ldapsearch: secret filters that returned erin (of $n)" "$leaks" 0
# The same entry is found by a legitimate filter, so the zero above means something.
r=$(lsearch -b "$LFE_SUFFIX" "(&(uid=erin)(|(mail=erin@example.com)(userPassword=x)))" uid)
lfe_eq "legitimate filter finds erin" "$(grep -c '^dn' <<<"$r")" 1

# Attributes: never a secret, whatever is requested.
for attrs in "" "*" "+" "* +" "userPassword" "userPassword;x-legacy" "2.5.4.35" \
	     "authPassword" "authPassword;foo" "1.3.6.1.4.1.4203.1.3.4" "USERPASSWORD;X-LEGACY"; do
	for who in anon bound; do
		if [[ $who == anon ]]; then args=(); else args=("${as_alice[@]}"); fi
		# shellcheck disable=SC2086
		r=$(lsearch "${args[@]}" -b "$ERIN" -s base "(objectClass=*)" $attrs)
		grep -q '^dn$' <<<"$r" || lfe_fail "erin not found with attrs '$attrs' ($who)"
		if grep -qiE '^(userpassword|authpassword|2\.5\.4\.35|1\.3\.6\.1\.4\.1\.4203\.1\.3\.4)' <<<"$r"; then
			lfe_fail "secret returned for attrs '$attrs' ($who): $(tr '\n' ' ' <<<"$r")"
		fi
	done
done
lfe_log "ok: no secret attribute returned for 11 attribute lists, anonymous and bound"

# python3-ldap3: the filter types it can encode, and attribute requests.
out=$(lfe_py '
import sys
from ldap3 import Server, Connection, BASE, SUBTREE
from ldap3.utils.conv import escape_filter_chars as esc
addr, base, alice, pw, legacy, auth, authfoo = sys.argv[1:8]
srv = Server(addr, port=389, connect_timeout=5)
leaks = n = 0
pairs = [("userPassword", pw), ("2.5.4.35", pw), ("userPassword;x-legacy", legacy),
         ("authPassword", auth), ("authPassword;foo", authfoo)]
for who in ("anon", "bound"):
    c = Connection(srv, alice if who == "bound" else None, "alice-pw" if who == "bound" else None,
                   receive_timeout=10, auto_bind=True)
    for t, v in pairs:
        e = esc(v)
        for f in ("(%s=%s)" % (t, e), "(%s=*)" % t, "(%s=%s*)" % (t, e[:6]), "(%s=*%s*)" % (t, e[3:7]),
                  "(%s>=!)" % t, "(%s<=~)" % t, "(%s~=%s)" % (t, e), "(!(%s=zz))" % t,
                  "(|(uid=nobody)(%s=%s))" % (t, e)):
            c.search(base, "(&(uid=erin)%s)" % f, SUBTREE, attributes=["uid"])
            n += 1
            if c.result["result"] != 0:
                print("error", f, c.result)
            if c.entries:
                leaks += 1
                print("leak", who, f)
    for attrs in (["*"], ["+"], ["*", "+"], ["userPassword;x-legacy"], ["authPassword;foo"], ["2.5.4.35"]):
        c.search("uid=erin,ou=people," + base, "(objectClass=*)", BASE, attributes=attrs)
        # ldap3 lists every requested attribute, with [] when absent.
        got = [a.lower() for r in c.response if r.get("type") == "searchResEntry"
               for a, v in r["raw_attributes"].items() if v]
        if not any(r.get("type") == "searchResEntry" for r in c.response):
            print("erin missing", who, attrs)
            leaks += 1
        if any(a.split(";")[0] in ("userpassword", "authpassword", "2.5.4.35", "1.3.6.1.4.1.4203.1.3.4") for a in got):
            leaks += 1
            print("attr leak", who, attrs, got)
    c.unbind()
print("ldap3", n, leaks)
' "$LFE_SADDR" "$LFE_SUFFIX" "$(lfe_dn alice)" "$ERIN_PW" "$LEGACY" "$AUTH" "$AUTHFOO")
lfe_eq "ldap3: secret filters and attribute requests" "$(tail -1 <<<"$out")" "ldap3 90 0"

# A filter over the substring-piece cap: adminLimitExceeded, not a stall.
big="(cn=$(printf 'a*%.0s' $(seq 1 40))a)"
r=$(lsearch -b "$LFE_SUFFIX" "$big" uid)
lfe_eq "40-piece substring filter" "$(head -1 <<<"$r")" "rc=11"
lfe_stop

# ---- 2. search_access = bound ----
lfe_start "$(with_keys search_access=bound)" 0
lfe_eq "bound policy: anonymous search" "$(lsearch -b "$LFE_SUFFIX" '(uid=alice)' uid | head -1)" "rc=50"
r=$(lsearch "${as_alice[@]}" -b "$LFE_SUFFIX" '(uid=alice)' uid)
lfe_eq "bound policy: bound search" "$(tr '\n' ' ' <<<"$r")" "rc=0 dn uid "
lfe_eq "bound policy: root DSE" "$(lsearch -b '' -s base '(objectClass=*)' namingContexts | tr '\n' ' ')" \
	"rc=0 dn namingContexts "
out=$(lfe_py '
import sys
from ldap3 import Server, Connection
addr, base, alice = sys.argv[1:4]
srv = Server(addr, port=389, connect_timeout=5)
c = Connection(srv, receive_timeout=10, auto_bind=True)
c.search(base, "(uid=alice)", attributes=["uid"])
a = c.result["result"]
c.unbind()
c = Connection(srv, alice, "alice-pw", receive_timeout=10, auto_bind=True)
c.search(base, "(uid=alice)", attributes=["uid"])
print(a, c.result["result"], len(c.entries))
' "$LFE_SADDR" "$LFE_SUFFIX" "$(lfe_dn alice)")
lfe_eq "ldap3 under search_access = bound (anon rc, bound rc, entries)" "$out" "50 0 1"
lfe_stop

# ---- 3. allow_anonymous = false ----
lfe_start "$(with_keys allow_anonymous=false)" 0
# ldapsearch binds anonymously first: refused there (53).
lfe_eq "no anonymous: ldapsearch without credentials" \
	"$(lsearch -b "$LFE_SUFFIX" '(uid=alice)' uid | head -1)" "rc=53"
# A client that searches without binding at all: refused (50).
out=$(lfe_py '
import sys
from ldap3 import Server, Connection
addr, base, alice = sys.argv[1:4]
srv = Server(addr, port=389, connect_timeout=5)
c = Connection(srv, receive_timeout=10)
c.open()
c.search(base, "(uid=alice)", attributes=["uid"])
a, na = c.result["result"], len(c.entries)
c.search("", "(objectClass=*)", search_scope="BASE", attributes=["namingContexts"])
d = len(c.entries)
c.unbind()
c = Connection(srv, alice, "alice-pw", receive_timeout=10, auto_bind=True)
c.search(base, "(uid=alice)", attributes=["uid"])
print(a, na, d, c.result["result"], len(c.entries))
' "$LFE_SADDR" "$LFE_SUFFIX" "$(lfe_dn alice)")
lfe_eq "ldap3, no anonymous: unbound search rc/entries, root DSE entries, bound rc/entries" \
	"$out" "50 0 1 0 1"
lfe_eq "no anonymous: bound search" "$(lsearch "${as_alice[@]}" -b "$LFE_SUFFIX" '(uid=alice)' uid | tr '\n' ' ')" \
	"rc=0 dn uid "
rc=0; lfe_cli timeout 20 ldapwhoami -x -H "$H" -D "" -w "" >/dev/null 2>&1 || rc=$?
lfe_eq "no anonymous: explicit anonymous bind" "$rc" 53
lfe_stop

# ---- 4. a contradictory policy is refused at start ----
bad=$(with_keys allow_anonymous=false search_access=anonymous)
rc=0
ip netns exec "$LFE_SRV" timeout 30 "$LFE_LDAPFE" -l 0 --no-pci --no-huge -m 768 \
	--file-prefix "$LFE_PREFIX" --log-level=lib.eal:error -- --config "$bad" \
	>"$LFE_WORK/bad.log" 2>&1 || rc=$?
((rc != 0)) || lfe_fail "daemon started with a contradictory policy"
grep -q '\[ldap\] search_access: anonymous conflicts with allow_anonymous = false' "$LFE_WORK/bad.log" ||
	lfe_fail "no section/key/reason for the bad policy: $(tail -3 "$LFE_WORK/bad.log")"
lfe_log "ok: contradictory policy refused at start"
echo "PASS"
