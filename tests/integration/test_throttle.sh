#!/usr/bin/env bash
# Brute-force throttling through the daemon ([throttle], backend/throttle.h),
# with python3-ldap3 and ldapwhoami. The client namespace gets a second
# address: A = 10.99.75.2 (the attacker), B = 10.99.75.3 (everyone else).
#   - 3 wrong passwords for alice from A (dn_failures = 3): alice's right
#     password from A gets 49 during the penalty, from B it works;
#   - a 4th wrong password for alice, from B (dn_global_failures = 4): now
#     alice's right password gets 49 from B too, bob's still works;
#   - 6 failures from A in all (src_failures = 6; one of them a {CRYPT} DN,
#     verified by the verifier thread, one an unknown DN): every bind from
#     A gets 49, bob's right password included; a throttled unknown DN and a
#     throttled existing DN get the same answer;
#   - after penalty_ms every right password from A works again;
#   - bob binds from B on fresh connections all along and never fails;
#   - the telemetry counters move by exactly the expected amounts.
source "$(dirname "$0")/lib.sh"
lfe_init throttle 75
LFE_CADDR2=10.99.75.3
lfe_cli ip addr add "$LFE_CADDR2/24" dev veth0
lfe_make_store
conf=$(lfe_conf 1)
cat >> "$conf" <<EOF
[throttle]
enabled = true
src_failures = 6
dn_failures = 3
dn_global_failures = 4
window_ms = 60000
penalty_ms = 4000
EOF
lfe_start "$conf" 0

out=$(lfe_py '
import json, socket, subprocess, sys, threading, time
from ldap3 import Server, Connection
addr, suffix, a, b, tel = sys.argv[1:6]
srv = Server(addr, port=389, connect_timeout=5)
dn = lambda u: "uid=%s,ou=people,%s" % (u, suffix)

def bind(user, pw, src):
    c = Connection(srv, dn(user), pw, source_address=src, receive_timeout=10)
    ok = c.bind()
    r = c.result
    c.unbind()
    return ok, (r["result"], r["description"], r["message"], r["dn"])

def whoami(user, pw):
    # ldapwhoami binds from the namespace default address, A.
    p = subprocess.run(["ldapwhoami", "-x", "-H", "ldap://%s" % addr, "-D", dn(user), "-w", pw],
                       capture_output=True, text=True, timeout=20)
    return p.returncode, (p.stdout + p.stderr).strip()

def stats():
    time.sleep(0.05)   # counters are published every millisecond
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(tel)
    s.recv(16384)
    s.send(b"/ldapfe/stats")
    t = json.loads(s.recv(1 << 20).decode())["/ldapfe/stats"]["total"]
    s.close()
    return t

# Bob from B, on a fresh connection every ~20 ms, for the whole test.
stop = threading.Event()
bob = {"ok": 0, "bad": []}
def bob_loop():
    t_end = time.time() + 60
    while not stop.is_set() and time.time() < t_end:
        ok, r = bind("bob", "bob-pw", b)
        if ok:
            bob["ok"] += 1
        else:
            bob["bad"].append(r)
        time.sleep(0.02)
th = threading.Thread(target=bob_loop)
th.start()

s0 = stats()
# 1. dn_failures: three wrong passwords for alice from A.
print("alice-wrong", [bind("alice", "nope", a)[1][0] for _ in range(3)])
print("alice-A-throttled", bind("alice", "alice-pw", a)[1][0])
rc, txt = whoami("alice", "alice-pw")
print("whoami-alice-A", rc, "Invalid credentials (49)" in txt)
print("alice-B", bind("alice", "alice-pw", b)[0])
# 1b. dn_global_failures: the 4th failure for alice, from B.
print("alice-B-wrong", bind("alice", "nope", b)[1][0])
print("alice-B-throttled", bind("alice", "alice-pw", b)[1][0])
s1 = stats()
# 2. src_failures: three more failures from A (a slow {CRYPT} DN through the
# verifier, an unknown DN, carol): six in all.
print("src-wrong", [bind(u, "nope", a)[1][0] for u in ("dave", "nobody", "carol")])
okb, rb = bind("bob", "bob-pw", a)
okn, rn = bind("nobody", "nobody-pw", a)
okc, rc_ = bind("carol", "carol-pw", a)
print("A-throttled", okb, rb[0], okn, rn[0], okc, rc_[0])
print("same-answer", rn == rc_ and rn == rb)
s2 = stats()
# 3. After the penalty (4 s from the last failure) A works again.
time.sleep(4.5)
print("after", bind("bob", "bob-pw", a)[0], bind("alice", "alice-pw", a)[0])
rc, txt = whoami("alice", "alice-pw")
print("whoami-after", rc, txt)
s3 = stats()
stop.set()
th.join(30)
print("bob-B", bob["ok"] > 20, bob["bad"][:1])
d = lambda x, y, k: y[k] - x[k]
keys = ["binds_throttled", "throttled_src", "throttled_dn", "throttled_dn_global",
        "throttle_penalties", "binds_failed"]
for name, x, y in (("d1", s0, s1), ("d2", s1, s2), ("d3", s2, s3)):
    print(name, *["%s=%d" % (k, d(x, y, k)) for k in keys])
' "$LFE_SADDR" "$LFE_SUFFIX" "$LFE_CADDR" "$LFE_CADDR2" "/var/run/dpdk/$LFE_PREFIX/dpdk_telemetry.v2")
echo "$out" >&2
lfe_eq "3 wrong passwords for alice from A" "$(grep ^alice-wrong <<<"$out")" "alice-wrong [49, 49, 49]"
lfe_eq "alice's right password from A throttled" "$(grep ^alice-A-throttled <<<"$out")" "alice-A-throttled 49"
lfe_eq "ldapwhoami from A throttled" "$(grep ^whoami-alice-A <<<"$out")" "whoami-alice-A 49 True"
lfe_eq "alice's right password from B" "$(grep '^alice-B ' <<<"$out")" "alice-B True"
lfe_eq "a 4th wrong password for alice, from B" "$(grep ^alice-B-wrong <<<"$out")" "alice-B-wrong 49"
lfe_eq "alice's right password from B throttled (global)" "$(grep ^alice-B-throttled <<<"$out")" \
	"alice-B-throttled 49"
lfe_eq "3 more failures from A (verifier, unknown DN, carol)" "$(grep ^src-wrong <<<"$out")" \
	"src-wrong [49, 49, 49]"
lfe_eq "every bind from A throttled" "$(grep ^A-throttled <<<"$out")" "A-throttled False 49 False 49 False 49"
lfe_eq "throttled unknown and existing DNs answer alike" "$(grep ^same-answer <<<"$out")" "same-answer True"
lfe_eq "A works again after the penalty" "$(grep ^after <<<"$out")" "after True True"
lfe_eq "ldapwhoami after the penalty" "$(grep ^whoami-after <<<"$out")" "whoami-after 0 dn:$(lfe_dn alice)"
lfe_eq "bob from B never failed" "$(grep ^bob-B <<<"$out")" "bob-B True []"
lfe_eq "counters, step 1" "$(grep ^d1 <<<"$out")" \
	"d1 binds_throttled=3 throttled_src=0 throttled_dn=2 throttled_dn_global=1 throttle_penalties=2 binds_failed=4"
lfe_eq "counters, step 2" "$(grep ^d2 <<<"$out")" \
	"d2 binds_throttled=3 throttled_src=3 throttled_dn=0 throttled_dn_global=0 throttle_penalties=1 binds_failed=3"
lfe_eq "counters, step 3" "$(grep ^d3 <<<"$out")" \
	"d3 binds_throttled=0 throttled_src=0 throttled_dn=0 throttled_dn_global=0 throttle_penalties=0 binds_failed=0"
# Each penalty is one event line (log.h), written by the control thread from
# the worker's ring: core and (when the verdict came inline) peer, no DN.
sleep 0.5
lfe_eq "penalties logged" "$(grep -Ec '^ldapfe: level=info event=throttle_penalty core=0( peer=10\.99\.75\.[23])?$' "$LFE_LOG")" 3
grep -q "event=.*uid=" "$LFE_LOG" && lfe_fail "a DN in an event line: $(grep event= "$LFE_LOG")"
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
echo "PASS test_throttle"
