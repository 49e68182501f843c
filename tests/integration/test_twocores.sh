#!/usr/bin/env bash
# Two workers on one af_packet port; both cores must carry connections
# (per-lcore telemetry) and every bind on every connection must be answered
# right. test_twocores.sh [rss|steer]:
#   rss    qpairs=2: the kernel's fanout spreads flows over the two queues;
#          each flow stays on its core (what RSS does on a NIC).
#   steer  qpairs=1: software steering. Worker 0 polls the queue and hands
#          each flow to its owner by 4-tuple hash; the other worker's frames
#          leave through worker 0.
source "$(dirname "$0")/lib.sh"
mode=${1:-rss}
case $mode in
rss) lfe_init twocores 14; qpairs=2 ;;
steer) lfe_init steer 15; qpairs=1 ;;
*) echo "usage: test_twocores.sh [rss|steer]" >&2; exit 2 ;;
esac
lfe_make_store
lfe_make_users 100
conf=$(lfe_conf "$qpairs" "0,1")
lfe_start "$conf" 0,1

out=$(lfe_py '
import sys
from concurrent.futures import ThreadPoolExecutor
from ldap3 import Server, Connection
addr, suffix = sys.argv[1], sys.argv[2]
srv = Server(addr, port=389, connect_timeout=10)
def one(i):
    dn = "uid=user%d,ou=people,%s" % (i % 100, suffix)
    try:
        c = Connection(srv, dn, "pw-%d" % (i % 100), receive_timeout=15)
        ok = c.bind() and c.extend.standard.who_am_i() == "dn:" + dn
        ok = ok and c.rebind(dn, "wrong") is False and c.result["result"] == 49
        c.unbind()
        return ok
    except Exception as e:
        return repr(e)
with ThreadPoolExecutor(8) as ex:
    res = list(ex.map(one, range(300)))
print("correct", sum(1 for r in res if r is True))
bad = [r for r in res if r is not True]
if bad: print("first failure", bad[0])
' "$LFE_SADDR" "$LFE_SUFFIX")
echo "$out" >&2
lfe_eq "300 connections on two cores ($mode)" "$(grep ^correct <<<"$out")" "correct 300"
if [[ $mode == rss ]]; then
	grep -q "2 queue(s)" "$LFE_LOG" || lfe_fail "port not configured with 2 queues"
else
	grep -q "software steering" "$LFE_LOG" || lfe_fail "port not in software steering"
fi
tel=$(lfe_telemetry /ldapfe/stats)
per=$("$PY" -c '
import json, sys
t = json.loads(sys.argv[1])["/ldapfe/stats"]
a, b = t["lcore_0"], t["lcore_1"]
print(a["conns_opened"] > 0, b["conns_opened"] > 0, a["conns_opened"] + b["conns_opened"],
      a["binds_ok"] + b["binds_ok"], a["binds_failed"] + b["binds_failed"])' "$tel")
echo "$tel" >&2
lfe_eq "both cores carry connections; totals" "$per" "True True 300 300 300"
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
grep -q "lcore 1: rx [1-9]" "$LFE_LOG" || lfe_fail "final counters lack lcore 1"
echo "PASS test_twocores $mode"
