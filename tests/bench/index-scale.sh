#!/usr/bin/env bash
# tests/bench/index-scale.sh — declared indexes at scale (issue 26 figures).
# Not part of CI; needs root (namespaces, EAL) and python3-ldap3.
#
# Makes a store of N posixAccounts (default 1,000,000; uidNumber, gidNumber,
# and N/20 posixGroups of 20 memberUid values each) with only the uid and
# objectClass indexes, imports it (time printed), then adds each other
# default index with `ldapfectl index add` (build time and store growth
# printed per index), starts ldapfe on it and measures, with python3-ldap3
# on one connection, the latency (p50/p99) of SSSD's lookup by uid number
# and of its initgroups filter by memberUid.
#
# Usage: sudo LFE_NS_TAG=x tests/bench/index-scale.sh [N]
#   LFE_BUILD=build  build dir with ldapfe and ldapfectl
set -euo pipefail
N=${1:-1000000}
export LFE_BUILD=${LFE_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
source "$(dirname "$0")/../integration/lib.sh"
lfe_init ixscale 151

ldif=$LFE_WORK/users.ldif
"$PY" - "$LFE_SUFFIX" "$N" >"$ldif" <<'EOF'
import sys
suf, n = sys.argv[1], int(sys.argv[2])
w = sys.stdout.write
w("dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: example\ndc: example\n\n" % suf)
w("dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n" % suf)
w("dn: ou=groups,%s\nobjectClass: organizationalUnit\nou: groups\n\n" % suf)
buf = []
for i in range(n):
    buf.append("dn: uid=user%d,ou=people,%s\nobjectClass: inetOrgPerson\nobjectClass: posixAccount\n"
               "uid: user%d\ncn: User %d\nsn: user%d\nuidNumber: %d\ngidNumber: %d\n"
               "homeDirectory: /home/user%d\n\n" % (i, suf, i, i, i, 100000 + i, 100000 + i // 20, i))
    if len(buf) == 10000:
        w("".join(buf)); buf = []
for g in range(n // 20):
    buf.append("dn: cn=grp%d,ou=groups,%s\nobjectClass: posixGroup\ncn: grp%d\ngidNumber: %d\n%s\n"
               % (g, suf, g, 100000 + g, "".join("memberUid: user%d\n" % (20 * g + k) for k in range(20))))
    if len(buf) == 10000:
        w("".join(buf)); buf = []
w("".join(buf))
EOF
mkdir -p "$LFE_STORE"
lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null
for ix in uidnumber gidnumber cn mail memberuid member uniquemember memberof entryuuid; do
	lfe_ctl index del "$ix"
done
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
used() { lfe_ctl info | sed -n 's/^size: \([0-9]*\) bytes/\1/p'; }
t0=$(date +%s%N)
lfe_ctl import "$ldif" >/dev/null
echo "figure: import of $N users, $((N / 20)) groups (indexes uid, objectClass): $(ms "$t0") ms, store $(used) bytes"
for ix in uidNumber gidNumber memberUid cn; do
	before=$(used)
	t0=$(date +%s%N)
	lfe_ctl index add "$ix"
	t=$(ms "$t0")
	echo "figure: index add $ix at $N users: $t ms, store +$(($(used) - before)) bytes ($(lfe_ctl index list | grep -i "^$ix "))"
done

conf=$(lfe_conf 1)
lfe_start "$conf" 0
lfe_py '
import sys, time, random
from ldap3 import Server, Connection, SUBTREE
addr, suf, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
U = "(uid=*)(&(uidNumber=*)(!(uidNumber=0)))"
G = "(cn=*)(&(gidNumber=*)(!(gidNumber=0)))"
c = Connection(Server(addr, port=389, connect_timeout=5), receive_timeout=30, auto_bind=True)
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] * 1e6
rnd = random.Random(1)
for what, mk in (("uid number", lambda i: "(&(uidNumber=%d)(objectclass=posixAccount)%s)" % (100000 + i, U)),
                 ("memberUid", lambda i: "(&(memberUid=user%d)(objectclass=posixGroup)%s)" % (i, G))):
    t = []
    for k in range(2000):
        f = mk(rnd.randrange(n))
        t0 = time.perf_counter()
        c.search(suf, f, SUBTREE, attributes=["cn"])
        t.append(time.perf_counter() - t0)
        assert c.result["result"] == 0 and len(c.response) == 1, (f, c.result)
    print("figure: lookup by %s at %d users (ldap3, one connection, 2,000 random): p50 %.0f us p99 %.0f us"
          % (what, n, pct(t, 50), pct(t, 99)))
' "$LFE_SADDR" "$LFE_SUFFIX" "$N"
