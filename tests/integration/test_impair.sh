#!/usr/bin/env bash
# 500 bind sessions through ldapfe with 5% loss, 5% reordering and 5%
# duplication injected on its rx and tx paths (--impair, seeded): every
# session must complete with the right answer within a bounded time.
# test_impair.sh tls: 200 LDAPS sessions (python3-ldap3 over TLS with
# certificate validation: TCP and TLS handshakes, bind, WhoAmI, unbind).
source "$(dirname "$0")/lib.sh"
if [[ ${1:-} == tls ]]; then
	lfe_init tlsimpair 31
	N=200 PORT=636 LIMIT=50 WHAT="LDAPS sessions"
else
	lfe_init impair 13
	N=500 PORT=389 LIMIT=100 WHAT="bind sessions"
fi
lfe_make_store
lfe_make_users 50
if [[ ${1:-} == tls ]]; then
	lfe_pki
	conf=$(lfe_tls_conf)
else
	conf=$(lfe_conf 1)
fi
lfe_start "$conf" 0 --impair drop=50000,dup=50000,reorder=50000,seed=42

out=$(lfe_py '
import ssl, sys, time
from concurrent.futures import ThreadPoolExecutor
from ldap3 import Server, Connection, Tls
addr, suffix, n, port, ca = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
tls = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=ca) if ca else None
srv = Server(addr, port=port, use_ssl=tls is not None, tls=tls, connect_timeout=15)
def one(i):
    u = "user%d" % (i % 50)
    right = i % 5 != 4
    try:
        c = Connection(srv, "uid=%s,ou=people,%s" % (u, suffix),
                       ("pw-%d" % (i % 50)) if right else "wrong", receive_timeout=30)
        ok = c.bind()
        rc = c.result["result"]
        who = c.extend.standard.who_am_i() if ok else None
        c.unbind()
    except Exception as e:
        return repr(e)
    if right:
        return ok and rc == 0 and who == "dn:uid=%s,ou=people,%s" % (u, suffix)
    return (not ok) and rc == 49
t0 = time.time()
with ThreadPoolExecutor(16) as ex:
    res = list(ex.map(one, range(n)))
print("correct", sum(1 for r in res if r is True))
print("seconds", int(time.time() - t0))
bad = [r for r in res if r is not True]
if bad: print("first failure", bad[0])
' "$LFE_SADDR" "$LFE_SUFFIX" "$N" "$PORT" "${LFE_PKI:+$LFE_PKI/ca.crt}")
echo "$out" >&2
if [[ $(grep ^correct <<<"$out") != "correct $N" ]]; then   # say which bound cut a session
	"$PY" -c 'import json,sys
t = json.loads(sys.argv[1])["/ldapfe/stats"]["total"]
print("nonzero counters:", " ".join("%s=%s" % (k, v) for k, v in sorted(t.items()) if v), file=sys.stderr)' "$(lfe_telemetry /ldapfe/stats)" || true
fi
lfe_eq "$N $WHAT under 5% loss/reorder/dup" "$(grep ^correct <<<"$out")" "correct $N"
secs=$(grep ^seconds <<<"$out" | cut -d' ' -f2)
((secs < LIMIT)) || lfe_fail "took ${secs} s"
tel=$(lfe_telemetry /ldapfe/stats)
rtx=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["/ldapfe/stats"]["total"]["tcp_retransmits"] > 0)' "$tel")
lfe_eq "TCP retransmitted under loss" "$rtx" True
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
echo "PASS test_impair"
