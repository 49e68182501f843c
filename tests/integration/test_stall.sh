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
import socket, struct, sys, threading, time
from ldap3 import Server, Connection
addr, suffix = sys.argv[1], sys.argv[2]

def tlv(tag, body):
    n = len(body)
    if n < 128: h = bytes([n])
    elif n < 256: h = bytes([0x81, n])
    elif n < 65536: h = bytes([0x82]) + struct.pack(">H", n)
    else: h = bytes([0x83]) + struct.pack(">I", n)[1:]
    return bytes([tag]) + h + body

def msg(mid, op):
    n = (mid.bit_length() + 8) // 8   # minimal two-complement length
    return tlv(0x30, tlv(0x02, mid.to_bytes(n, "big")) + op)

# (&(objectClass=inetOrgPerson)(|(cn=*zq*zq*...*)(sn=...)...)): every user a
# candidate, no match, as many pieces as the filter caps allow (16 per item,
# 64 per filter): the costliest filter a client may send.
sub = lambda t: tlv(0xa4, tlv(0x04, t) + tlv(0x30, tlv(0x81, b"zq") * 16))
filt = tlv(0xa0, tlv(0xa3, tlv(0x04, b"objectClass") + tlv(0x04, b"inetOrgPerson")) +
           tlv(0xa1, sub(b"cn") + sub(b"sn") + sub(b"cn") + sub(b"sn")))
def search(mid):
    return msg(mid, tlv(0x63, tlv(0x04, suffix.encode()) + b"\x0a\x01\x02\x0a\x01\x00"
                   b"\x02\x01\x00\x02\x01\x00\x01\x01\x00" + filt + tlv(0x30, b"")))

def read_msg(s, buf):
    while True:
        if len(buf) >= 2:
            l = buf[1]; hl = 2
            if l & 0x80:
                k = l & 0x7f; hl = 2 + k
                if len(buf) >= hl: l = int.from_bytes(buf[2:hl], "big")
                else: l = None
            if l is not None and len(buf) >= hl + l:
                m = buf[:hl + l]; del buf[:hl + l]; return m
        d = s.recv(65536)
        if not d: return None
        buf += d

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
            m = read_msg(s, buf)
            if m is None:
                codes["closed"] = codes.get("closed", 0) + 1; return
            # op tag after the messageID
            i = 2 if m[1] < 0x80 else 2 + (m[1] & 0x7f)
            i += 2 + m[i + 1]
            if m[i] == 0x65:
                j = i + 2 if m[i + 1] < 0x80 else i + 2 + (m[i + 1] & 0x7f)
                rc = m[j + 2]
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
LFE_CADDR2=10.99.$LFE_NET.3
lfe_cli ip addr add "$LFE_CADDR2/24" dev veth0
out=$(lfe_py '
import socket, sys, time
from ldap3 import Server, Connection
addr, suffix, src2 = sys.argv[1], sys.argv[2], sys.argv[3]
dn = lambda u: "uid=%s,ou=people,%s" % (u, suffix)
def bindreq(mid, d, pw):
    def tlv(tag, body): return bytes([tag, len(body)]) + body
    return tlv(0x30, tlv(0x02, bytes([mid])) + tlv(0x60, b"\x02\x01\x03" + tlv(0x04, d.encode()) +
                                                  tlv(0x80, pw.encode())))
# 30 connections from the first address, each one slow bind (a wrong
# password for the {CRYPT} user), all sent before any can finish.
socks = [socket.create_connection((addr, 389), timeout=30) for _ in range(30)]
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
print("busy_ok", codes.get(51, 0) >= 15 and codes.get(49, 0) >= 4 and sum(codes.values()) == 30)
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
