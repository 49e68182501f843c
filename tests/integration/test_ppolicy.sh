#!/usr/bin/env bash
# Password policy at bind (backend/ppolicy.h) against slapd's own ppolicy
# overlay: a real OpenLDAP provider with a default policy (expiry after
# 3600 s, warning 1200 s before, pwdMustChange) and a "graceful" one (3
# grace logins), synced by `ldapfectl sync --once` over StartTLS; then the
# same accounts bound with the Password Policy request control through
# python3-ldap3 and `ldapwhoami -e ppolicy`, against slapd and against
# ldapfe, and the response controls compared: expired (49 +
# passwordExpired), about to expire (timeBeforeExpiration, within a few
# seconds of slapd's), in grace (graceAuthNsRemaining 2, 1, 0, then 49:
# ldapfe counts its own), reset with mustChange (success + changeAfterReset,
# then searches refused 50), a plain account (an empty control), a wrong
# password (49, no policy error); the root DSE lists the control; an
# administrator's new password (ldappasswd on slapd, `ldapfectl passwd`
# on ldapfe) restarts the expiry clock alike on both.
source "$(dirname "$0")/lib.sh"
lfe_init ppol 160
source "$(dirname "$0")/sync_provider.sh"
for t in slapd slapadd ldapwhoami ldapsearch; do
	command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }
done
PURL="ldap://127.0.0.1:3893/"
PROV_TLS=1
prov_conf
POL="ou=policies,$LFE_SUFFIX"
sed -i "s|^overlay ppolicy\$|&\nppolicy_default \"cn=default,$POL\"|" "$PROV_DIR/slapd.conf"
# uid=user0 may not read pwdChangedTime: a sync account blind to expiry
sed -i "s|^access to \* by \* read\$|access to attrs=pwdChangedTime by dn.exact=\"uid=user0,ou=people,$LFE_SUFFIX\" none by * read\n&|" \
	"$PROV_DIR/slapd.conf"

now=$(date +%s)
gt() { date -u -d "@$1" +%Y%m%d%H%M%SZ; }
{
	prov_users 1
	printf 'dn: %s\nobjectClass: organizationalUnit\nou: policies\n\n' "$POL"
	policy() {   # policy CN GRACE MUSTCHANGE
		printf 'dn: cn=%s,%s\nobjectClass: organizationalRole\nobjectClass: pwdPolicy\n' "$1" "$POL"
		printf 'cn: %s\npwdAttribute: userPassword\npwdMaxAge: 3600\npwdExpireWarning: 1200\n' "$1"
		printf 'pwdGraceAuthNLimit: %s\npwdMustChange: %s\n\n' "$2" "$3"
	}
	policy default 0 TRUE
	policy graceful 3 FALSE
	user() {   # user NAME EXTRA-LDIF-LINES [SCHEME]
		printf 'dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\n' \
			"$1" "$LFE_SUFFIX" "$1" "$1" "$1"
		if [[ ${3:-} == crypt ]]; then   # a slow scheme: ldapfe's verifier threads
			printf 'userPassword: %s\n' "$(slappasswd -h '{CRYPT}' -c '$6$%.16s' -s pp-pw)"
		else
			printf 'userPassword: %s\n' "$(slappasswd -h '{SSHA}' -s pp-pw)"
		fi
		[[ -z $2 ]] || printf '%s\n' "$2"
		echo
	}
	user plain ""
	user young "pwdChangedTime: $(gt $((now - 60)))"
	user expired "pwdChangedTime: $(gt $((now - 3700)))"
	user near "pwdChangedTime: $(gt $((now - 3000)))"
	user grace "pwdChangedTime: $(gt $((now - 3700)))
pwdPolicySubentry: cn=graceful,$POL"
	user reset "pwdChangedTime: $(gt $((now - 60)))
pwdReset: TRUE"
	user slowgrace "pwdChangedTime: $(gt $((now - 3700)))
pwdPolicySubentry: cn=graceful,$POL" crypt
	user slownear "pwdChangedTime: $(gt $((now - 3000)))" crypt
	user slowexp "pwdChangedTime: $(gt $((now - 3700)))" crypt
} > "$LFE_WORK/users.ldif"
prov_load "$LFE_WORK/users.ldif" || lfe_fail "slapadd"
prov_start "$LFE_CLI" "$PURL"
mkdir -p "$LFE_STORE"
lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null
lfe_cli "$LFE_CTL" --store "$LFE_STORE" sync -H "$PURL" -Z --cacert "$PROV_DIR/ca.crt" \
	-D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" --once \
	--ppolicy-default "cn=default,$POL" >"$LFE_WORK/sync.log" 2>&1 ||
	{ cat "$LFE_WORK/sync.log" >&2; lfe_fail "sync"; }
lfe_ctl show "$(lfe_dn grace)" | grep -qi "^pwdPolicySubentry: cn=graceful" ||
	lfe_fail "pwdPolicySubentry not synced: $(lfe_ctl show "$(lfe_dn grace)")"
lfe_ctl show "cn=default,$POL" | grep -qi "^pwdMaxAge: 3600" ||
	lfe_fail "policy entry not synced: $(lfe_ctl show "cn=default,$POL")"
lfe_ctl info | grep -q "^default password policy: cn=default,ou=policies" ||
	lfe_fail "info: $(lfe_ctl info)"
# a sync account that cannot read pwdChangedTime is warned about
printf "pw-0" > "$LFE_WORK/u0.pw"
mkdir -p "$LFE_WORK/store2"
"$LFE_CTL" --store "$LFE_WORK/store2" init --suffix "$LFE_SUFFIX" >/dev/null
out=$(lfe_cli timeout 30 "$LFE_CTL" --store "$LFE_WORK/store2" sync -H "$PURL" -Z \
	--cacert "$PROV_DIR/ca.crt" -D "$(lfe_dn user0)" -y "$LFE_WORK/u0.pw" -b "$LFE_SUFFIX" \
	-f "(uid=expired)" --once 2>&1) || lfe_fail "sync as user0: $out"
[[ $out == *"warning: the sync account cannot read pwdChangedTime"* ]] ||
	lfe_fail "hidden pwdChangedTime: no warning: $out"
grep -q "cannot read" "$LFE_WORK/sync.log" && lfe_fail "a warning for the admin"
lfe_log "ok: a sync account that cannot read pwdChangedTime is warned about"
lfe_start "$(lfe_conf)" 0

# bind URL UID PASSWORD -> "rc warn grace error" from the response control
# (-1: absent; "none": no control at all), read by python3-ldap3.
cat > "$LFE_WORK/pp.py" <<'PY'
import sys
from ldap3 import Server, Connection
from lfe_ber import read_tlv as tlv
OID = "1.3.6.1.4.1.42.2.27.8.5.1"
url, dn, pw = sys.argv[1:4]
c = Connection(Server(url.rstrip("/"), connect_timeout=5), dn, pw, receive_timeout=5)
c.open()
c.bind(controls=[(OID, False, None)])
r = c.result
ctl = (r.get("controls") or {}).get(OID)
out = [str(r["result"])]
if ctl is None:
    out.append("none")
else:
    v = ctl["value"]
    warn = grace = err = -1
    tag, body, _ = tlv(v, 0)
    assert tag == 0x30, v.hex()
    i = 0
    while i < len(body):
        tag, val, i = tlv(body, i)
        if tag == 0xa0:
            t2, iv, _ = tlv(val, 0)
            if t2 == 0x80:
                warn = int.from_bytes(iv, "big", signed=True)
            elif t2 == 0x81:
                grace = int.from_bytes(iv, "big", signed=True)
            else:
                raise SystemExit("bad warning tag %x" % t2)
        elif tag == 0x81:
            err = int.from_bytes(val, "big")
        else:
            raise SystemExit("bad tag %x in %s" % (tag, v.hex()))
    out += [str(warn), str(grace), str(err)]
print(" ".join(out))
PY
pp() { lfe_cli timeout 10 "$PY" "$LFE_WORK/pp.py" "$1" "$(lfe_dn "$2")" "$3"; }
FE="ldap://$LFE_SADDR/"

same() {   # same WHAT UID PASSWORD: ldapfe's answer equals slapd's
	local a b
	a=$(pp "$FE" "$2" "$3"); b=$(pp "$PURL" "$2" "$3")
	lfe_eq "$1 (ldapfe '$a', slapd '$b')" "$a" "$b"
}
same "plain account: success, empty control" plain pp-pw
same "young password: success, empty control" young pp-pw
same "expired, no grace: 49 passwordExpired" expired pp-pw
lfe_eq "expired: what slapd says" "$(pp "$FE" expired pp-pw)" "49 -1 -1 0"
same "wrong password: 49, nothing about the account" expired wrong
same "reset + pwdMustChange: success, changeAfterReset" reset pp-pw
lfe_eq "reset: what slapd says" "$(pp "$FE" reset pp-pw)" "0 -1 -1 2"
# about to expire: timeBeforeExpiration within a few seconds of slapd's
a=$(pp "$FE" near pp-pw); b=$(pp "$PURL" near pp-pw)
read -r arc awarn _ aerr <<<"$a"; read -r brc bwarn _ berr <<<"$b"
lfe_eq "near expiry: success (ldapfe '$a', slapd '$b')" "$arc/$aerr" "$brc/$berr"
((awarn > 500 && awarn <= 600 && awarn - bwarn <= 5 && bwarn - awarn <= 5)) ||
	lfe_fail "timeBeforeExpiration: ldapfe $awarn, slapd $bwarn"
# grace: each side counts its own, from the same synced state
for want in "0 -1 2 -1" "0 -1 1 -1" "0 -1 0 -1" "49 -1 -1 0"; do
	a=$(pp "$FE" grace pp-pw); b=$(pp "$PURL" grace pp-pw)
	lfe_eq "grace login (ldapfe '$a', slapd '$b')" "$a" "$b"
	lfe_eq "grace login: $want" "$a" "$want"
done

# the same through a slow scheme ({CRYPT}: ldapfe's verifier threads)
for want in "0 -1 2 -1" "0 -1 1 -1" "0 -1 0 -1"; do
	a=$(pp "$FE" slowgrace pp-pw); b=$(pp "$PURL" slowgrace pp-pw)
	lfe_eq "slow scheme, grace login (ldapfe '$a', slapd '$b')" "$a" "$b"
	lfe_eq "slow scheme, grace login: $want" "$a" "$want"
done
a=$(pp "$FE" slownear pp-pw)
read -r arc awarn _ aerr <<<"$a"
((arc == 0 && awarn > 500 && awarn <= 600 && aerr == -1)) || lfe_fail "slow scheme, near expiry: $a"
lfe_eq "slow scheme, wrong password" "$(pp "$FE" slowgrace wrong)" "49 -1 -1 -1"
same "slow scheme, expired: 49 passwordExpired" slowexp pp-pw
lfe_eq "slow scheme, expired: what slapd says" "$(pp "$FE" slowexp pp-pw)" "49 -1 -1 0"
lfe_eq "slow scheme, expired, wrong password" "$(pp "$FE" slowexp wrong)" "49 -1 -1 -1"

# ldapwhoami -e ppolicy, as pam_ldap/sssd users see it
wai() { { lfe_cli timeout 5 ldapwhoami -x -e ppolicy -H "$1" -D "$(lfe_dn "$2")" -w pp-pw 2>&1 ||
	true; } | grep -io "password expired\|password must be changed\|expires in [0-9]*\|[0-9]* grace" |
	head -1 | sed 's/[0-9]\{2,\}/N/' || true; }
for u in expired reset near; do
	a=$(wai "$FE" $u); b=$(wai "$PURL" $u)
	[[ -n $a ]] || lfe_fail "ldapwhoami -e ppolicy $u: nothing about the policy"
	lfe_eq "ldapwhoami -e ppolicy $u ('$a')" "$a" "$b"
done
# after a reset bind, searches are refused as slapd refuses them
srch() { local rc=0; lfe_cli timeout 5 ldapsearch -x -H "$1" -D "$(lfe_dn reset)" -w pp-pw \
	-b "$LFE_SUFFIX" -s base dn >/dev/null 2>&1 || rc=$?; echo $rc; }
lfe_eq "reset: search refused (slapd $(srch "$PURL"))" "$(srch "$FE")" 50
lfe_cli timeout 5 ldapsearch -x -H "$FE" -b "" -s base supportedControl | \
	grep -q "^supportedControl: 1.3.6.1.4.1.42.2.27.8.5.1" || lfe_fail "root DSE"

# An administrator sets a new password: on slapd with ldappasswd as its
# rootdn, on ldapfe with `ldapfectl passwd` on the live store. Both start
# the expiry clock again: the expired account (default policy,
# pwdMustChange) binds with changeAfterReset, the one out of grace logins
# (graceful policy) binds plainly with its grace count back; the old
# password is refused. slapd's entries and ldapfe's agree on what the
# change wrote.
newpw() {   # newpw UID PASSWORD
	lfe_cli timeout 10 ldappasswd -x -H "$PURL" -D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" \
		-s "$2" "$(lfe_dn "$1")" >/dev/null || lfe_fail "ldappasswd $1"
	printf '%s\n' "$2" | lfe_ctl passwd "$(lfe_dn "$1")" >/dev/null || lfe_fail "ldapfectl passwd $1"
}
t0=$(date -u +%Y%m%d%H%M%S)
newpw expired new-pw
newpw grace new-pw
same "admin reset, pwdMustChange: success, changeAfterReset" expired new-pw
lfe_eq "admin reset, pwdMustChange: what slapd says" "$(pp "$FE" expired new-pw)" "0 -1 -1 2"
same "admin reset: the old password refused" expired pp-pw
same "admin reset, graceful policy: success, nothing to say" grace new-pw
a=$(pp "$FE" grace new-pw)
[[ $a == "0 "* && $a != *" 0" ]] || lfe_fail "admin reset, graceful policy: '$a' (want success, no error)"
opattrs() {   # opattrs UID: pwdReset, pwdGraceUseTime count, and whether
	# pwdChangedTime and modifyTimestamp are at least t0, from slapd's entry
	lfe_cli timeout 5 ldapsearch -LLL -x -H "$PURL" -D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" \
		-b "$(lfe_dn "$1")" -s base pwdReset pwdChangedTime modifyTimestamp pwdGraceUseTime
}
fe_attrs() { lfe_ctl show "$(lfe_dn "$1")"; }
summ() {   # summ < ENTRY: "reset=R grace=N changed=new|old|none modified=new|old|none"
	"$PY" -c '
import sys
t0 = sys.argv[1]
a = {}
for l in sys.stdin:
    if ": " in l:
        k, v = l.rstrip("\n").split(": ", 1)
        a.setdefault(k.lower(), []).append(v)
age = lambda k: "none" if k not in a else ("new" if a[k][0][:14] >= t0 else "old")
print("reset=%s grace=%d changed=%s modified=%s" % (a.get("pwdreset", ["-"])[0],
      len(a.get("pwdgraceusetime", [])), age("pwdchangedtime"), age("modifytimestamp")))
' "$t0"
}
for u in expired grace; do
	a=$(fe_attrs $u | summ); b=$(opattrs $u | summ)
	lfe_eq "admin reset of $u: what the entry says (ldapfe '$a', slapd '$b')" "$a" "$b"
done
lfe_log "ok: an administrator's new password restarts the policy's clock as slapd's does"
lfe_stop
prov_stop
lfe_log "PASS"
