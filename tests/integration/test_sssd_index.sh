#!/usr/bin/env bash
# SSSD's lookups through the declared indexes (issue 26): ldapfe and a real
# slapd loaded from the same LDIF (1,000 posixAccounts; rfc2307 posixGroups
# with memberUid; rfc2307bis groupOfNames with member DNs) are asked SSSD's
# filters by ldapsearch and python3-ldap3, and the answers are compared
# entry by entry, value by value, result code too:
#  - user by name and by number (SSSD's whole filter; on the old code the
#    number lookup walked every posixAccount and ended with 11, or 53 bare),
#    group by name and by gid, initgroups by memberUid and by member DN
#    (the DN spelled in other case and spacing: DN matching, as slapd);
#  - memberUid in another case (caseExactIA5Match: none, as slapd);
#  - a bare (uidNumber=N) and (gidNumber=N) (53 on the old code).
# Prints lookup latency (p50/p99, python3-ldap3 on one connection) by uid
# number and by memberUid for ldapfe and slapd.
# Our own slapd only: a generated slapd.conf, ldapi:// socket in the work dir.
source "$(dirname "$0")/lib.sh"
PATH=$PATH:/usr/sbin
for t in slapd slapadd ldapsearch; do
	command -v "$t" >/dev/null || { echo "SKIP: $t missing (scripts/deps.sh)"; exit 77; }
done
lfe_init sssdix 150

N=1000
ldif=$LFE_WORK/dir.ldif
"$PY" - "$LFE_SUFFIX" "$N" >"$ldif" <<'EOF'
import sys
suf, n = sys.argv[1], int(sys.argv[2])
print("dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: example\ndc: example\n" % suf)
print("dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n" % suf)
print("dn: ou=groups,%s\nobjectClass: organizationalUnit\nou: groups\n" % suf)
for i in range(n):
    print("dn: uid=user%d,ou=people,%s\nobjectClass: inetOrgPerson\nobjectClass: posixAccount\n"
          "uid: user%d\ncn: User %d\nsn: user%d\nuidNumber: %d\ngidNumber: %d\n"
          "homeDirectory: /home/user%d\nloginShell: /bin/sh\nmail: user%d@example.com\n"
          % (i, suf, i, i, i, 10000 + i, 20000 + i % 50, i, i))
# 50 posixGroups (user i in group i % 50 and in group (i * 7) % 50), and a
# groupOfNames for each with the same members by DN.
for g in range(50):
    members = sorted({i for i in range(n) if i % 50 == g or (i * 7) % 50 == g})
    print("dn: cn=grp%d,ou=groups,%s\nobjectClass: posixGroup\ncn: grp%d\ngidNumber: %d"
          % (g, suf, g, 20000 + g))
    for i in members:
        print("memberUid: user%d" % i)
    print()
    print("dn: cn=bis%d,ou=groups,%s\nobjectClass: groupOfNames\ncn: bis%d" % (g, suf, g))
    for i in members:
        print("member: uid=user%d,ou=people,%s" % (i, suf))
    print()
EOF

SLAPD=$(lfe_slapd_ldapi)
lfe_slapd_start "$ldif" "$SLAPD" "" "" "index objectClass,uid,memberUid,member,gidNumber eq
index cn,mail eq,sub
index uidNumber eq,pres
access to * by * read"

mkdir -p "$LFE_STORE"
lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null
lfe_slapd_wait   # slapadd done: the import's figure below is measured alone
t0=$(date +%s%N)
lfe_ctl import "$ldif" >/dev/null
lfe_log "figure: import of $N users and 100 groups with the default indexes: $((($(date +%s%N) - t0) / 1000000)) ms"
# Substring indexes on cn and mail, presence on uidNumber (issue 26).
lfe_ctl index add cn sub
lfe_ctl index add mail sub
lfe_ctl index add uidNumber pres
lfe_ctl index list >&2
conf=$(lfe_conf 1)
lfe_start "$conf" 0
LFE="ldap://$LFE_SADDR"

# q URL OUT ARGS...: ldapsearch's entries as sorted "dn|attr|value" lines,
# then "rc N" (its exit code).
q() {
	local url=$1 out=$2; shift 2
	local run=()
	[[ $url == ldap://1* ]] && run=(ip netns exec "$LFE_CLI")
	set +e
	"${run[@]}" timeout 60 ldapsearch -x -LLL -o ldif-wrap=no -H "$url" -b "$LFE_SUFFIX" "$@" \
		>"$out.raw" 2>"$out.err"
	local rc=$?
	set -e
	"$PY" - "$out.raw" >"$out" <<'EOF'
import sys
rows, dn = [], None
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    line = line.rstrip("\n")
    if not line:
        continue
    k, _, v = line.partition(": ")
    if k == "dn":
        dn = v
        rows.append("%s|" % dn)
    else:
        rows.append("%s|%s|%s" % (dn, k.rstrip(":").lower(), v))
print("\n".join(sorted(rows)))
EOF
	echo "rc $rc" >>"$out"
}

# same WHAT MIN ARGS...: both servers, identical answers, at least MIN entries.
same() {
	local what=$1 min=$2; shift 2
	q "$SLAPD" "$LFE_WORK/a" "$@"
	q "$LFE" "$LFE_WORK/b" "$@"
	if ! cmp -s "$LFE_WORK/a" "$LFE_WORK/b"; then
		diff "$LFE_WORK/a" "$LFE_WORK/b" | head -20 >&2
		cat "$LFE_WORK/b.err" >&2
		lfe_fail "$what: ldapfe and slapd differ"
	fi
	local n; n=$(grep -c '|$' "$LFE_WORK/a" || true)
	((n >= min)) || lfe_fail "$what: $n entries, want at least $min"
	lfe_log "ok: $what ($n entries, $(tail -1 "$LFE_WORK/a"))"
}

U='(uid=*)(&(uidNumber=*)(!(uidNumber=0)))'
G='(cn=*)(&(gidNumber=*)(!(gidNumber=0)))'
for i in 0 1 499 998 999; do
	same "user by name user$i" 1 "(&(uid=user$i)(objectclass=posixAccount)$U)"
	same "user by number $((10000 + i))" 1 "(&(uidNumber=$((10000 + i)))(objectclass=posixAccount)$U)"
	same "initgroups rfc2307 user$i" 1 "(&(memberuid=user$i)(objectclass=posixGroup)$G)" cn gidNumber
	same "initgroups rfc2307bis user$i" 1 \
		"(&(member=uid=user$i,ou=people,$LFE_SUFFIX)(objectclass=groupOfNames)(cn=*))" cn
done
same "initgroups rfc2307bis, DN in other case and spacing" 1 \
	"(&(member=UID=user7, OU=People,${LFE_SUFFIX^^})(objectclass=groupOfNames)(cn=*))" cn
same "memberUid is caseExactIA5" 0 "(&(memberuid=USER7)(objectclass=posixGroup)$G)" cn
same "user by number, none" 0 "(&(uidNumber=99999)(objectclass=posixAccount)$U)"
for g in 0 17 49; do
	same "group by name grp$g" 1 "(&(cn=grp$g)(objectclass=posixGroup)$G)" cn gidNumber
	same "group by gid $((20000 + g))" 1 "(&(gidNumber=$((20000 + g)))(objectclass=posixGroup)$G)" cn
done
# Presence and substring indexes: ldapfe answers (53 without them) and
# agrees with slapd; pieces under 3 characters at the start or end still
# have keys, the evaluator decides on every candidate.
same "substring initial (cn=user 1*)" 111 "(cn=user 1*)" cn
same "substring initial and any" 11 "(&(objectclass=posixAccount)(cn=US*er 99*))" cn uid
same "substring one-char initial (cn=u*7)" 100 "(cn=u*7)" cn
same "substring final (mail=*9@example.com)" 100 "(mail=*9@example.com)" mail
same "substring initial and final (mail=user99*@example.com)" 11 "(mail=user99*@example.com)" mail
same "substring, none" 0 "(mail=*@example.org)" mail
same "presence (uidNumber=*)" 1000 "(uidNumber=*)" uid
same "presence beside substring" 1 "(&(uidNumber=*)(mail=user12*)(mail=*0@example.com))" uid
same "bare uidNumber" 1 "(uidNumber=10500)"
same "bare gidNumber (a group and 20 users)" 21 "(gidNumber=20003)" dn

# python3-ldap3: the same lookups, and latency by uid number and memberUid.
lfe_py '
import sys, time
from ldap3 import Server, Connection, SUBTREE
addr, suf, slapd, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
U = "(uid=*)(&(uidNumber=*)(!(uidNumber=0)))"
G = "(cn=*)(&(gidNumber=*)(!(gidNumber=0)))"
def ask(c, f, attrs):
    c.search(suf, f, SUBTREE, attributes=attrs)
    rows = sorted("%s|%s" % (e["dn"], sorted((k.lower(), sorted(v)) for k, v in e["raw_attributes"].items()))
                  for e in c.response if e["type"] == "searchResEntry")
    return rows, c.result["result"]
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] * 1e6
conns = {"ldapfe": Connection(Server(addr, port=389, connect_timeout=5), receive_timeout=30, auto_bind=True),
         "slapd": Connection(Server(slapd), receive_timeout=30, auto_bind=True)}
for i in (3, 250, n - 1):
    for f, attrs in (("(&(uidNumber=%d)(objectclass=posixAccount)%s)" % (10000 + i, U), ["uid", "uidNumber"]),
                     ("(&(memberUid=user%d)(objectclass=posixGroup)%s)" % (i, G), ["cn", "gidNumber"]),
                     ("(&(gidNumber=%d)(objectclass=posixGroup)%s)" % (20000 + i % 50, G), ["cn"])):
        a, b = ask(conns["ldapfe"], f, attrs), ask(conns["slapd"], f, attrs)
        assert a == b and a[1] == 0 and len(a[0]) >= 1, (f, a, b)
print("ok: ldap3 user by number, initgroups, group by gid: same as slapd")
for name, c in conns.items():
    for what, mk in (("uid number", lambda i: "(&(uidNumber=%d)(objectclass=posixAccount)%s)" % (10000 + i, U)),
                     ("memberUid", lambda i: "(&(memberUid=user%d)(objectclass=posixGroup)%s)" % (i, G))):
        t = []
        for k in range(300):
            f = mk((k * 37) % n)
            t0 = time.perf_counter()
            c.search(suf, f, SUBTREE, attributes=["cn"])
            t.append(time.perf_counter() - t0)
            assert c.result["result"] == 0 and len(c.response) >= 1, (f, c.result)
        print("figure %s lookup by %s (%d users, ldap3, one connection): p50 %.0f us p99 %.0f us"
              % (name, what, n, pct(t, 50), pct(t, 99)))
' "$LFE_SADDR" "$LFE_SUFFIX" "$SLAPD" "$N" >&2

echo "PASS"
