#!/usr/bin/env bash
# tests/bench/bind-latency.sh — unknown DN vs wrong password through the real
# daemon: the latency a client sees, for an {SSHA} store and an {ARGON2}
# store (default scheme matching the users'). python3-ldap3 in a client
# namespace rebinds on one connection, the two kinds interleaved; per kind
# median and p99 of each run, and the median of LFE_BENCH_RUNS runs.
# Figures, not a test (not in CI): run by hand as root on an idle machine.
#
#   LFE_BUILD=build LFE_NS_TAG=x tests/bench/bind-latency.sh
#
# Environment: LFE_BENCH_RUNS (3), LFE_BENCH_FAST_N (300 binds per kind and
# run for {SSHA}), LFE_BENCH_SLOW_N (40 for {ARGON2}).
source "$(dirname "$0")/../integration/lib.sh"
runs=${LFE_BENCH_RUNS:-3}

measure() {   # scheme n users...
	local scheme=$1 n=$2; shift 2
	lfe_py '
import sys, time, statistics
from ldap3 import Server, Connection
addr, suffix, runs, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
users = sys.argv[5:]
srv = Server(addr, port=389, connect_timeout=5)
dn = lambda u: "uid=%s,ou=people,%s" % (u, suffix)
c = Connection(srv, receive_timeout=60); c.open()
res = {"unknown": [], "wrong": []}
for r in range(runs):
    lat = {"unknown": [], "wrong": []}
    for i in range(n):
        for kind, d in (("unknown", dn("ghost%d" % i)), ("wrong", dn(users[i % len(users)]))):
            t0 = time.perf_counter()
            ok = c.rebind(d, "not-the-password")
            lat[kind].append((time.perf_counter() - t0) * 1e6)
            assert not ok and c.result["result"] == 49, c.result
    for k, v in lat.items():
        v.sort()
        res[k].append((v[len(v) // 2], v[int(len(v) * 0.99)]))
for k in ("unknown", "wrong"):
    med = statistics.median(x[0] for x in res[k]); p99 = statistics.median(x[1] for x in res[k])
    print("  %-8s median %9.1f µs  p99 %9.1f µs" % (k, med, p99))
' "$LFE_SADDR" "$LFE_SUFFIX" "$runs" "$n" "$@" | sed "s/^  /  $scheme /"
}

lfe_init bindlat 66
lfe_make_store '{SSHA}'
lfe_make_users 300
conf=$(lfe_conf 1)
lfe_start "$conf" 0
echo "bind latency through ldapfe (1 worker, 1 verifier thread), median of $runs runs:"
measure '{SSHA}' "${LFE_BENCH_FAST_N:-300}" alice bob carol user1 user2 user3
lfe_stop_restart

rm -rf "$LFE_STORE"
lfe_make_store '{ARGON2}'
sed -i '/^\[store\]/a default_scheme = {ARGON2}' "$conf"
lfe_start "$conf" 0
measure '{ARGON2}' "${LFE_BENCH_SLOW_N:-40}" alice bob carol
lfe_stop
