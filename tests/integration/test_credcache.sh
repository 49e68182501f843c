#!/usr/bin/env bash
# The verified-credential cache ([store] bind_cache, backend/credcache.h)
# through the daemon, on a {PBKDF2-SHA256} store (every uncached bind is a
# verifier job), with python3-ldap3 binding on persistent connections:
#   - the first right bind of a user goes to the verifier, every later one
#     is answered from the cache on the worker (binds_offloaded stays put,
#     bind_cache_hits counts them); wrong passwords are never answered right;
#   - while a client binds with alice's password in a loop, `ldapfectl passwd`
#     changes it: no bind sent after the change was committed (plus 10 ms,
#     the store's 2 ms renew bound with room) succeeds with the old password;
#     the new one works and is cached in its turn;
#   - the same with `ldapfectl del` for a cached user (bob);
#   - counters: hits, misses and invalidations move as expected;
#   - with bind_cache = 0 every right bind is a verifier job again;
#   - the cache is large enough for the bind peek (worker.h): binds' keys
#     are made from their frames ahead (bind_cache_peeked), with the same
#     answers.
source "$(dirname "$0")/lib.sh"
lfe_init credcache 21
lfe_make_store "{PBKDF2-SHA256}"
conf=$(lfe_conf 1)
# 2^20 entries: above LFE_BIND_PEEK_MIN_ENTRIES, so the worker peeks at
# every in-order bind frame and makes its key ahead (bind_cache_peeked).
sed -i "/^path = /a bind_cache = 1048576" "$conf"
lfe_start "$conf" 0

out=$(lfe_py '
import json, subprocess, sys, threading, time
from ldap3 import SIMPLE, Server, Connection
addr, suffix, ctl, store, prefix = sys.argv[1:6]
srv = Server(addr, port=389, connect_timeout=5)
dn = lambda u: "uid=%s,ou=people,%s" % (u, suffix)

def stats():
    time.sleep(0.05)   # counters are published every millisecond
    r = subprocess.run([ctl, "--prefix", prefix, "stats", "--json"], capture_output=True,
                       timeout=10, check=True)
    return json.loads(r.stdout)["total"]

def conn():
    c = Connection(srv, receive_timeout=10)
    c.open()
    return c

def bind(c, user, pw):
    c.authentication, c.user, c.password = SIMPLE, dn(user), pw
    return c.bind()

def fail(msg):
    print("FAIL " + msg)
    sys.exit(0)

# 1. First bind verified off the core, the next ones from the cache.
s0 = stats()
c = conn()
if not bind(c, "alice", "alice-pw"):
    fail("alice first bind")
for i in range(20):
    if not bind(c, "alice", "alice-pw"):
        fail("alice cached bind %d" % i)
    if i % 4 == 0 and bind(c, "alice", "wrong-%d" % (i % 3)):
        fail("alice wrong password %d accepted" % i)
    if i % 4 == 1 and bind(c, "nobody", "alice-pw"):
        fail("unknown DN accepted")
s1 = stats()
d = lambda k, a, b: b[k] - a[k]
print("phase1 ok=%d offloaded=%d hits=%d misses=%d peeked=%d" % (d("binds_ok", s0, s1),
      d("binds_offloaded", s0, s1), d("bind_cache_hits", s0, s1), d("bind_cache_misses", s0, s1), d("bind_cache_peeked", s0, s1)))
if d("binds_ok", s0, s1) != 21 or d("bind_cache_hits", s0, s1) != 20:
    fail("phase 1 counters")
# 1 right + 5 wrong + 5 unknown went the full path: the first two as
# verifier jobs, unknown DNs too when the dummy scheme is slow.
if d("bind_cache_misses", s0, s1) != 11 or d("binds_offloaded", s0, s1) not in (6, 11):
    fail("phase 1 offloaded/misses")
# Each bind came in one in-order segment: its key was made by the peek
# (the same answers as above, so the peeked keys were the right ones).
if d("bind_cache_peeked", s0, s1) < 29:
    fail("phase 1 peeked %d of %d" % (d("bind_cache_peeked", s0, s1), d("bind_cache_hits", s0, s1) +
         d("bind_cache_misses", s0, s1)))

# 2./3. A change committed while a client binds in a loop: no stale success.
def hammer(user, pw, stop, log):
    c = conn()
    n = 0
    while not stop.is_set() and n < 20000:
        t = time.monotonic()
        log.append((t, bind(c, user, pw)))
        n += 1

def change(user, pw, cmd, stdin):
    stop, log = threading.Event(), []
    c = conn()
    if not bind(c, user, pw) or not bind(c, user, pw):
        fail("%s not bound before the change" % user)
    th = threading.Thread(target=hammer, args=(user, pw, stop, log))
    th.start()
    time.sleep(0.5)
    subprocess.run([ctl, "--store", store, "--scheme", "{PBKDF2-SHA256}"] + cmd, input=stdin,
                   timeout=30, check=True, capture_output=True)
    t_commit = time.monotonic()
    # Binds with the old password now miss the cache and cost a PBKDF2 each
    # (slow under load): wait for a few of them, bounded.
    for i in range(100):
        time.sleep(0.1)
        if i >= 10 and sum(1 for t, ok in log if t > t_commit + 0.010) >= 5:
            break
    stop.set()
    th.join(30)
    before = [ok for t, ok in log if t < t_commit]
    after = [ok for t, ok in log if t > t_commit + 0.010]
    stale = sum(after)
    print("%s: %d binds before the change (%d ok), %d after (%d ok)" % (
          user, len(before), sum(before), len(after), stale))
    if sum(before) < 5:
        fail("%s: too few successes before the change to mean anything" % user)
    if len(after) < 3:
        fail("%s: too few binds after the change" % user)
    if stale:
        fail("%s: %d stale successes after the change was committed" % (user, stale))

s2 = stats()
change("alice", "alice-pw", ["passwd", dn("alice")], b"alice-new\n")
c = conn()
if bind(c, "alice", "alice-pw"):
    fail("old password of alice still works")
if not bind(c, "alice", "alice-new") or not bind(c, "alice", "alice-new"):
    fail("new password of alice")
change("bob", "bob-pw", ["del", dn("bob")], b"")
if bind(c, "bob", "bob-pw"):
    fail("deleted bob still binds")
s3 = stats()
print("phase2 hits=%d invalidated=%d offloaded=%d" % (d("bind_cache_hits", s2, s3),
      d("bind_cache_invalidated", s2, s3), d("binds_offloaded", s2, s3)))
if d("bind_cache_invalidated", s2, s3) < 2:
    fail("invalidations not counted")
if d("bind_cache_hits", s2, s3) < 10:
    fail("the loops were not answered from the cache")
print("PASS")
' "$LFE_SADDR" "$LFE_SUFFIX" "$LFE_CTL" "$LFE_STORE" "$LFE_PREFIX")
echo "$out" >&2
grep -q "^PASS$" <<<"$out" || lfe_fail "$(grep FAIL <<<"$out" || echo "client died")"
lfe_log "ok: cache hits, no stale success after passwd/del"

# bind_cache = 0: every right bind is a verifier job again.
lfe_stop_restart
sed -i "s/^bind_cache = .*/bind_cache = 0/" "$conf"
lfe_start "$conf" 0
out=$(lfe_py '
import json, subprocess, sys, time
from ldap3 import SIMPLE, Server, Connection
addr, suffix, ctl, prefix = sys.argv[1:5]
def stats():
    time.sleep(0.05)
    r = subprocess.run([ctl, "--prefix", prefix, "stats", "--json"], capture_output=True,
                       timeout=10, check=True)
    return json.loads(r.stdout)["total"]
c = Connection(Server(addr, port=389, connect_timeout=5), receive_timeout=10)
c.open()
s0 = stats()
ok = 0
for i in range(5):
    c.authentication, c.user, c.password = SIMPLE, "uid=carol,ou=people," + suffix, "carol-pw"
    ok += c.bind()
s1 = stats()
print(ok, s1["binds_offloaded"] - s0["binds_offloaded"], s1["bind_cache_hits"] - s0["bind_cache_hits"])
' "$LFE_SADDR" "$LFE_SUFFIX" "$LFE_CTL" "$LFE_PREFIX")
lfe_eq "bind_cache = 0: binds ok, verifier jobs, cache hits" "$out" "5 5 0"
lfe_stop
lfe_eq "daemon exit" "$LFE_STOP_RC" 0
