#!/usr/bin/env bash
# ldapfe driven by python3-ldap3 and raw sockets: binds right and wrong,
# WhoAmI, 100 binds on one connection, 200 connections binding at once, a
# bind split into 1-byte segments, three PDUs in one segment.
source "$(dirname "$0")/lib.sh"
lfe_init ldap3 12
lfe_make_store
lfe_make_users 200
conf=$(lfe_conf 1)
lfe_start "$conf" 0

out=$(lfe_py '
import sys, threading
from ldap3 import Server, Connection, SIMPLE
from ldap3.core.exceptions import LDAPException
addr, suffix = sys.argv[1], sys.argv[2]
srv = Server(addr, port=389, connect_timeout=5)
dn = lambda u: "uid=%s,ou=people,%s" % (u, suffix)

c = Connection(srv, dn("alice"), "alice-pw", receive_timeout=10)
print("right", c.bind(), c.result["result"])
print("whoami", c.extend.standard.who_am_i())
c.unbind()
c = Connection(srv, dn("alice"), "bad", receive_timeout=10)
print("wrong", c.bind(), c.result["result"])
c.unbind()

# 100 binds on one connection, alternating right and wrong.
c = Connection(srv, receive_timeout=10)
c.open()
good = 0
for i in range(100):
    u = "user%d" % i
    ok = c.rebind(dn(u), "pw-%d" % i if i % 2 == 0 else "nope")
    good += (ok == (i % 2 == 0))
print("rebinds", good)
# Past the 16 KiB send ring many times (responses must cross its wrap).
good = 0
for i in range(600):
    good += c.rebind(dn("user%d" % (i % 200)), "pw-%d" % (i % 200)) and c.extend.standard.who_am_i() == "dn:" + dn("user%d" % (i % 200))
print("wrap", good)
c.unbind()

# 200 connections opened, then all bind at once.
conns = [Connection(srv, dn("user%d" % i), "pw-%d" % i, receive_timeout=20) for i in range(200)]
for c in conns:
    c.open()
res = [None] * 200
barrier = threading.Barrier(200, timeout=30)
def run(i):
    try:
        barrier.wait()
        res[i] = conns[i].bind() and conns[i].extend.standard.who_am_i() == "dn:" + dn("user%d" % i)
    except Exception as e:
        res[i] = repr(e)
ts = [threading.Thread(target=run, args=(i,)) for i in range(200)]
[t.start() for t in ts]
[t.join(60) for t in ts]
print("concurrent", sum(1 for r in res if r is True))
bad = [r for r in res if r is not True]
if bad:
    print("first failure", bad[0])
for c in conns:
    c.unbind()
' "$LFE_SADDR" "$LFE_SUFFIX")
echo "$out" >&2
lfe_eq "ldap3 right bind" "$(grep ^right <<<"$out")" "right True 0"
lfe_eq "ldap3 WhoAmI" "$(grep ^whoami <<<"$out")" "whoami dn:$(lfe_dn alice)"
lfe_eq "ldap3 wrong bind" "$(grep ^wrong <<<"$out")" "wrong False 49"
lfe_eq "100 binds on one connection" "$(grep ^rebinds <<<"$out")" "rebinds 100"
lfe_eq "600 bind+WhoAmI on one connection (send ring wraps)" "$(grep ^wrap <<<"$out")" "wrap 600"
lfe_eq "200 concurrent binds" "$(grep ^concurrent <<<"$out")" "concurrent 200"

# Raw BER over one TCP connection: a bind sent 1 byte per segment, then
# three PDUs (bind ok, bind wrong, WhoAmI) in one segment.
out=$(lfe_py '
import socket, sys, time
from lfe_ber import bind_req, extended_req, read_msg, result_code, decode
addr, dn = sys.argv[1], sys.argv[2].encode()
def bind(mid, pw): return bind_req(mid, dn, pw)
def whoami(mid): return extended_req(mid, "1.3.6.1.4.1.4203.1.11.3")
def read_msgs(s, n):
    s.settimeout(10)
    buf = bytearray()
    try:
        return [read_msg(s, buf) for _ in range(n)]
    except EOFError:
        raise SystemExit("closed early")
s = socket.create_connection((addr, 389), timeout=10)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
for b in bind(1, b"bob-pw"):
    s.send(bytes([b])); time.sleep(0.002)
print("split", *result_code(read_msgs(s, 1)[0]))
s.send(bind(2, b"bob-pw") + bind(3, b"wrong") + whoami(4))
ms = read_msgs(s, 3)
print("three", *[ "%d:%d:%d" % ((decode(m)[0],) + result_code(m)) for m in ms])
print("whoami-anon", ms[2].endswith(b"\x8b\x00") or not b"dn:" in ms[2])
' "$LFE_SADDR" "$(lfe_dn bob)")
echo "$out" >&2
lfe_eq "bind in 1-byte segments" "$(grep ^split <<<"$out")" "split 97 0"
lfe_eq "three PDUs in one segment" "$(grep ^three <<<"$out")" "three 2:97:0 3:97:49 4:120:0"
lfe_eq "WhoAmI after the failed bind is anonymous" "$(grep ^whoami-anon <<<"$out")" "whoami-anon True"
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
echo "PASS test_ldap3"
