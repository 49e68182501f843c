#!/usr/bin/env bash
# An unknown DN costs what a wrong password costs on a real entry
# (backend/store.c, lfe_store_verify_bind): on a store whose users all have
# a slow scheme ({PBKDF2-SHA256}; dave {CRYPT}) and a fast dummy scheme
# ([store] default_scheme = {SSHA}), unknown DNs take the verifier path as a
# wrong password does, instead of a fast inline dummy that told them apart
# by latency (the old code: no unknown DN was ever offloaded here). Through
# the daemon with python3-ldap3:
#   - a wrong password for alice is a verifier job (the baseline);
#   - 20 unknown DNs, each bound twice with alice's password: none succeeds;
#     each DN takes the same path both times (0 or 2 jobs: it lands on the
#     same entry), and some take the verifier path (an unknown DN lands on
#     a drawn real entry: 4 of the 6 entries have a slow password, the 2
#     without one get the dummy; all 20 on those 2: chance (1/3)^20).
# The daemon opens the store with [store] preload = true (read at start).
source "$(dirname "$0")/lib.sh"
lfe_init unknowndn 40
lfe_make_store "{PBKDF2-SHA256}"
conf=$(lfe_conf 1)
sed -i "/^path = /a default_scheme = {SSHA}\npreload = true" "$conf"
lfe_start "$conf" 0

out=$(lfe_py '
import json, subprocess, sys, time
from ldap3 import SIMPLE, Server, Connection
addr, suffix, ctl, prefix = sys.argv[1:5]
def stats():
    time.sleep(0.05)   # counters are published every millisecond
    r = subprocess.run([ctl, "--prefix", prefix, "stats", "--json"], capture_output=True,
                       timeout=10, check=True)
    return json.loads(r.stdout)["total"]
c = Connection(Server(addr, port=389, connect_timeout=5), receive_timeout=10)
c.open()
def bind(dn, pw):
    c.authentication, c.user, c.password = SIMPLE, dn, pw
    return c.bind()
def fail(msg):
    print("FAIL " + msg)
    sys.exit(0)
s0 = stats()
if bind("uid=alice,ou=people," + suffix, "wrong"):
    fail("wrong password accepted")
s1 = stats()
if s1["binds_offloaded"] - s0["binds_offloaded"] != 1:
    fail("a wrong password of a {PBKDF2} user is not a verifier job")
jobs = 0
for i in range(20):
    dn = "uid=ghost%d,ou=people,%s" % (i, suffix)
    a = stats()
    if bind(dn, "alice-pw") or bind(dn, "alice-pw"):
        fail("unknown DN %s accepted" % dn)
    b = stats()
    d = b["binds_offloaded"] - a["binds_offloaded"]
    if d not in (0, 2):
        fail("%s: %d verifier jobs for two binds of one DN" % (dn, d))
    jobs += d
print("unknown DN binds: 40, verifier jobs: %d" % jobs)
if jobs == 0:
    fail("no unknown DN took the verifier path of the slow entries")
print("PASS")
' "$LFE_SADDR" "$LFE_SUFFIX" "$LFE_CTL" "$LFE_PREFIX")
echo "$out" >&2
grep -q "^PASS$" <<<"$out" || lfe_fail "$(grep FAIL <<<"$out" || echo "client died")"
lfe_log "ok: unknown DNs take a real entry's (slow) path, never succeed"
lfe_stop
lfe_eq "daemon exit" "$LFE_STOP_RC" 0
