#!/usr/bin/env bash
# Hostile load must not stall a worker or starve a neighbour:
#  (a) one connection pipelines costly searches (the most substring
#      pieces the caps allow, over the 3000 candidates of the objectClass index) while
#      another times binds with python3-ldap3: the searches end on their
#      budget (adminLimitExceeded) or complete, and bind latency stays low;
#  (b) wrong-password binds for a slow-scheme user ({CRYPT}) answer 49
#      through the verifier (binds_offloaded moves) while a fast user's
#      binds on other connections stay fast (unknown DNs take the path of
#      the real entry they land on: daemon_unknowndn);
#  (c) a flood of slow binds from one address gets busy (51) beyond the
#      per-source bound while a second address of the client still gets
#      its answer.
# LFE_STALL_PARTS (default "abc") runs a subset, e.g. against an old build.
source "$(dirname "$0")/lib.sh"
lfe_init stall 65
lfe_make_store
lfe_make_users 3000
conf=$(lfe_conf 1)
parts=${LFE_STALL_PARTS:-abc}
# Latency bounds are against stalls of a second or more; an ASan build runs
# the daemon (and the machine) several times slower, so its bounds are 4x.
scale=1
ldd "$LFE_LDAPFE" | grep -q libasan && scale=4

# ---- (a) costly searches vs. binds --------------------------------------
if [[ $parts == *a* ]]; then
lfe_start "$conf" 0
out=$(lfe_py '
import socket, sys, threading, time
from ldap3 import Server, Connection
addr, suffix = sys.argv[1], sys.argv[2]

from lfe_ber import search_req, f_and, f_or, f_eq, f_sub, read_msg, decode, result_code

# (&(objectClass=inetOrgPerson)(|(cn=*zq*zq*...*)(sn=...)...)): every user a
# candidate, no match, as many pieces as the filter caps allow (16 per item,
# 64 per filter): the costliest filter a client may send.
sub = lambda t: f_sub(t, any=[b"zq"] * 16)
filt = f_and(f_eq("objectClass", "inetOrgPerson"), f_or(sub("cn"), sub("sn"), sub("cn"), sub("sn")))
def search(mid):
    return search_req(mid, suffix, filt)

codes = {}
searches = 0
stop = threading.Event()
def searcher():
    global searches
    s = socket.create_connection((addr, 389), timeout=30)
    buf = bytearray(); mid = 1
    while not stop.is_set():
        s.sendall(b"".join(search(mid + i) for i in range(8)))
        mid += 8
        done = 0
        while done < 8:
            try:
                m = read_msg(s, buf)
            except EOFError:
                codes["closed"] = codes.get("closed", 0) + 1; return
            if decode(m)[1] == 0x65:
                rc = result_code(m)[1]
                codes[rc] = codes.get(rc, 0) + 1
                done += 1
        searches += 8
    s.close()

t = threading.Thread(target=searcher); t.start()
time.sleep(0.5)
srv = Server(addr, port=389, connect_timeout=5)
dn = lambda u: "uid=%s,ou=people,%s" % (u, suffix)
c = Connection(srv, receive_timeout=20); c.open()
lat = []; good = 0
for i in range(200):
    t0 = time.perf_counter()
    good += c.rebind(dn("user%d" % (i % 3000)), "pw-%d" % (i % 3000))
    lat.append((time.perf_counter() - t0) * 1000)
c.unbind()
stop.set(); t.join(60)
lat.sort()
print("binds", good)
print("searches", searches, "codes", sorted((str(k), v) for k, v in codes.items()))
print("latency_ms p50 %.2f p99 %.2f max %.2f" % (lat[len(lat) // 2], lat[int(len(lat) * 0.99)], lat[-1]))
k = int(sys.argv[3])
print("bounded", lat[int(len(lat) * 0.99)] < 200 * k and lat[-1] < 500 * k)
print("codes_ok", all(k in (0, 11) for k in codes if k != "closed") and searches >= 8)
' "$LFE_SADDR" "$LFE_SUFFIX" "$scale")
echo "$out" >&2
lfe_eq "(a) binds answered during costly searches" "$(sed -n 's/^binds //p' <<<"$out")" 200
lfe_eq "(a) searches end with success or adminLimitExceeded" "$(sed -n 's/^codes_ok //p' <<<"$out")" True
lfe_eq "(a) bind latency p99 < 200 ms, max < 500 ms (x$scale)" "$(sed -n 's/^bounded //p' <<<"$out")" True
tel=$(lfe_telemetry /ldapfe/stats)
# The budget bit: the searches yielded their turn (and went on later:
# issue 25) or ended on it.
lim=$("$PY" -c 'import json,sys; t = json.loads(sys.argv[1])["/ldapfe/stats"]["total"]; print(t["search_yielded"] + t["search_limited"] > 0)' "$tel")
lfe_eq "(a) telemetry search_yielded or search_limited moved" "$lim" True
lfe_stop_restart
fi

# ---- (b) slow binds through the verifier -----------------------------------
[[ $parts == *[bc]* ]] || { echo "PASS test_stall ($parts)"; exit 0; }
# The floods below fail on purpose against one slow user: the brute-force
# throttle (tested in daemon_throttle) would answer them before the verifier.
printf '[throttle]\nenabled = false\n' >> "$conf"
lfe_start "$conf" 0
if [[ $parts == *b* ]]; then
out=$(lfe_py '
import sys, threading, time
from ldap3 import Server, Connection
addr, suffix = sys.argv[1], sys.argv[2]
srv = Server(addr, port=389, connect_timeout=5)
dn = lambda u: "uid=%s,ou=people,%s" % (u, suffix)
res = []
def unknown(k):
    c = Connection(srv, receive_timeout=30); c.open()
    for i in range(15):
        c.rebind(dn("dave"), "wrong-%d-%d" % (k, i))
        res.append(c.result["result"])
    c.unbind()
ts = [threading.Thread(target=unknown, args=(k,)) for k in range(4)]
[t.start() for t in ts]
c = Connection(srv, receive_timeout=20); c.open()
lat = []; good = 0
for i in range(100):
    t0 = time.perf_counter()
    good += c.rebind(dn("alice"), "alice-pw")
    lat.append((time.perf_counter() - t0) * 1000)
c.unbind()
[t.join(120) for t in ts]
lat.sort()
print("unknown", len(res), sorted(set(res)))
print("fast", good)
print("latency_ms p50 %.2f p99 %.2f max %.2f" % (lat[len(lat) // 2], lat[int(len(lat) * 0.99)], lat[-1]))
k = int(sys.argv[-1])
print("fast_ok", lat[len(lat) // 2] < 20 * k and lat[int(len(lat) * 0.99)] < 150 * k)
' "$LFE_SADDR" "$LFE_SUFFIX" "$scale")
echo "$out" >&2
lfe_eq "(b) slow wrong-password binds all answered 49" "$(sed -n 's/^unknown //p' <<<"$out")" "60 [49]"
lfe_eq "(b) fast binds on another connection" "$(sed -n 's/^fast //p' <<<"$out")" 100
lfe_eq "(b) fast bind latency p50 < 20 ms, p99 < 150 ms (x$scale)" "$(sed -n 's/^fast_ok //p' <<<"$out")" True
tel=$(lfe_telemetry /ldapfe/stats)
off=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["/ldapfe/stats"]["total"]["binds_offloaded"] >= 60)' "$tel")
lfe_eq "(b) slow binds went through the verifier (binds_offloaded >= 60)" "$off" True
fi

# ---- (c) per-source bound of the verifier queue ---------------------------
if [[ $parts == *c* ]]; then
# Per-source bounds bite only under pressure (share.h): with a queue of 64
# and the pressure level at 10 % (6 jobs), one address's 60 slow binds fill
# it to its fair share (half the queue: shares count one more address to
# come) and the rest are answered busy, while a second address still finds
# room.
lfe_stop
sed -i -e 's/^\[workers\]$/[workers]\nverify_queue = 64/' \
	-e 's/^\[ldap\]$/[ldap]\nshare_pressure_pct = 10/' "$conf"
lfe_start "$conf" 0
LFE_CADDR2=10.99.$LFE_NET.3
lfe_cli ip addr add "$LFE_CADDR2/24" dev veth0
out=$(lfe_py '
import socket, sys, time
from ldap3 import Server, Connection
addr, suffix, src2 = sys.argv[1], sys.argv[2], sys.argv[3]
dn = lambda u: "uid=%s,ou=people,%s" % (u, suffix)
from lfe_ber import bind_req as bindreq
# 60 connections from the first address, each one slow bind (a wrong
# password for the {CRYPT} user), all sent before any can finish.
socks = [socket.create_connection((addr, 389), timeout=30) for _ in range(60)]
for k, s in enumerate(socks):
    s.sendall(bindreq(1, dn("dave"), "x%d" % k))
# Meanwhile a second address: a slow-scheme user ({CRYPT}) is answered.
c = Connection(Server(addr, port=389, connect_timeout=5), dn("dave"), "dave-pw",
               source_address=src2, receive_timeout=30)
other = c.bind(); other_rc = c.result["result"]; c.unbind()
codes = {}
for s in socks:
    d = s.recv(4096)
    rc = d[d.index(b"\x61") + 4] if b"\x61" in d else -1
    codes[rc] = codes.get(rc, 0) + 1
    s.close()
print("flood", sorted(codes.items()))
print("busy_ok", codes.get(51, 0) >= 15 and codes.get(49, 0) >= 4 and sum(codes.values()) == 60)
print("other", other, other_rc)
' "$LFE_SADDR" "$LFE_SUFFIX" "$LFE_CADDR2")
echo "$out" >&2
lfe_eq "(c) flood from one address: excess answered busy (51), the rest 49" \
	"$(sed -n 's/^busy_ok //p' <<<"$out")" True
lfe_eq "(c) second address still answered" "$(sed -n 's/^other //p' <<<"$out")" "True 0"
tel=$(lfe_telemetry /ldapfe/stats)
busy=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["/ldapfe/stats"]["total"]["verify_busy_source"] > 0)' "$tel")
lfe_eq "(c) telemetry verify_busy_source moved" "$busy" True
fi
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
echo "PASS test_stall ($parts)"
