#!/usr/bin/env bash
# ldapfectl's daemon commands against the real daemon (af_packet/veth):
#   - status/stats/conns/top answer while clients bind; stats move by the
#     exact number of binds made; conns shows peers, bound or not, the DN
#     only with --show-dn;
#   - reload: a good file changes the search policy live; a bad file (a key
#     that cannot change live, or a bad value) is refused with the key and
#     nothing changes;
#   - garbage, a non-ASCII and a huge request on the control socket get an
#     error and the daemon keeps serving; an unknown command exits 2;
#   - drain while a client binds in a loop: every bind answered or its
#     connection refused cleanly, drain and the daemon exit 0;
#   - with no daemon, every daemon command fails clearly with exit 1;
#   - event lines (log.h): reload and drain logged as level=info lines with
#     key=value fields; a flood of bad control requests is rate-limited (at
#     most the burst, then suppressed=N on the next line that passes).
source "$(dirname "$0")/lib.sh"
lfe_init ops 95
lfe_make_store
conf=$(lfe_conf 1)
lfe_start "$conf" 0
H=ldap://$LFE_SADDR
SOCK=/var/run/dpdk/$LFE_PREFIX/ldapfe.ctl

ctl() { "$LFE_CTL" --prefix "$LFE_PREFIX" "$@"; }
rc_of() { local rc=0; "$@" >/dev/null 2>&1 || rc=$?; echo $rc; }
jget() { "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {"d": d}))' "$1" "$2"; }

[[ -S $SOCK ]] || lfe_fail "no control socket at $SOCK"
lfe_eq "control socket mode" "$(stat -c %a "$SOCK")" 660

# status, text and JSON.
st=$(ctl status)
grep -q "^version: ldapfe " <<<"$st" || lfe_fail "status: $st"
grep -q "^port0: .*link up .*address $LFE_SADDR/24" <<<"$st" || lfe_fail "status port line: $st"
js=$(ctl status --json)
lfe_eq "status --json store path" "$(jget "$js" 'd["store"]["path"]')" "$LFE_STORE"
lfe_eq "status --json ldap ports" "$(jget "$js" 'd["ldap_ports"]')" "[389]"
lfe_eq "status --json workers" "$(jget "$js" 'd["workers"]')" "[0]"
lfe_eq "status --json tls (none configured)" "$(jget "$js" 'd["tls"]')" "{'configured': False}"
grep -Eq "^store: .* entries [0-9]+ last txn [0-9]+ at 20[0-9-]+T[0-9:]+Z$" <<<"$st" || lfe_fail "status store line: $(grep ^store: <<<"$st")"
# The store's last transaction: one password change is one commit.
t1=$(jget "$js" 'd["store"]["last_txnid"]')
printf 'carol-pw2\n' | "$LFE_CTL" --store "$LFE_STORE" passwd "$(lfe_dn carol)" >/dev/null
lfe_eq "status: last txnid after one passwd" "$(jget "$(ctl status --json)" 'd["store"]["last_txnid"]')" $((t1 + 1))

# stats: counters move by exactly the binds made.
before=$(ctl stats --json)
for i in 1 2 3 4 5 6 7; do
	lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn bob)" -w bob-pw >/dev/null
done
for i in 1 2 3; do
	lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn bob)" -w nope >/dev/null 2>&1 || true
done
sleep 0.1
after=$(ctl stats --json --per-core)
d=$("$PY" -c 'import json,sys; a=json.loads(sys.argv[1])["total"]; b=json.loads(sys.argv[2]);
t=b["total"]; c=b["cores"]["0"]
print(t["binds_ok"]-a["binds_ok"], t["binds_failed"]-a["binds_failed"], t["conns_opened"]-a["conns_opened"], c["binds_ok"]==t["binds_ok"])' "$before" "$after")
lfe_eq "stats: binds ok, failed, connections opened (delta); per-core = total on one core" "$d" "7 3 10 True"
# Rates: per second over the daemon's last second or so; the binds just made
# show, never more than were made; per core = total on one core.
lfe_eq "stats rates while binding" "$("$PY" -c 'import json,sys; a=json.loads(sys.argv[1])["total"]; b=json.loads(sys.argv[2])
r=b["rates"]; w=b["rate_window_s"]; c=b["core_rates"]["0"]
print(0.2 <= w <= 2.5, r["binds_ok"] + r["binds_failed"] > 0, r["binds_ok"] * w < 7.2, r["binds_failed"] * w < 3.2,
      c["binds_failed"] == r["binds_failed"], "conns_active" in r)' "$before" "$after")" "True True True True True False"
txt=$(ctl stats --per-core)
grep -Eq "^binds_ok +[0-9]+ +[0-9.]+ +[0-9]+$" <<<"$txt" || lfe_fail "stats --per-core text: $txt"
# Idle: the rates fall to 0 within 2.2 s of the last bind (polled).
t_end=$(($(date +%s%N) + 2200000000))
while :; do
	idle=$(jget "$(ctl stats --json)" '(d["rates"]["binds_ok"], d["rates"]["binds_failed"])')
	[[ $idle == "(0.0, 0.0)" ]] && break
	(($(date +%s%N) < t_end)) || break
	sleep 0.1
done
lfe_eq "stats rates when idle" "$idle" "(0.0, 0.0)"
# The same names as the rte_telemetry command.
tel=$(lfe_telemetry /ldapfe/stats)
lfe_eq "stats names = telemetry names (non-drop)" \
	"$("$PY" -c 'import json,sys; a=json.loads(sys.argv[1])["total"]; t=json.loads(sys.argv[2])["/ldapfe/stats"]["total"]
print(sorted(k for k in a if not k.startswith("drop_")) == sorted(k for k in t if not k.startswith("drop_")))' "$after" "$tel")" True

# conns: one bound, one anonymous connection held open by a client.
hold=$LFE_WORK/hold
touch "$hold"
lfe_py '
import os, sys, time
from ldap3 import Server, Connection
addr, dn, hold = sys.argv[1:4]
s = Server(addr, port=389, connect_timeout=5)
a = Connection(s, dn, "alice-pw", receive_timeout=10); assert a.bind()
b = Connection(s, receive_timeout=10); b.open()
print("held", flush=True)
for _ in range(300):
    if not os.path.exists(hold): break
    time.sleep(0.1)
' "$LFE_SADDR" "$(lfe_dn alice)" "$hold" > "$LFE_WORK/hold.out" &
hold_pid=$!
LFE_EXTRA_PIDS="$hold_pid"
for ((i = 0; i < 50; i++)); do grep -q held "$LFE_WORK/hold.out" && break; sleep 0.1; done
grep -q held "$LFE_WORK/hold.out" || lfe_fail "holding client did not connect"
sleep 0.1
c=$(ctl conns)
grep -q "^lcore 0: 2 open" <<<"$c" || lfe_fail "conns: $c"
grep -q "^  $LFE_CADDR:[0-9]* -> :389 idle .* bound$" <<<"$c" || lfe_fail "conns bound line: $c"
grep -q " not bound$" <<<"$c" || lfe_fail "conns anonymous line: $c"
grep -qi "alice" <<<"$c" && lfe_fail "conns shows a DN without --show-dn: $c"
c=$(ctl conns --show-dn --json)
lfe_eq "conns --show-dn --json" "$(jget "$c" 'sorted(x.get("dn", "-") for x in d["cores"][0]["conns"])')" \
	"['-', '$(lfe_dn alice)']"
lfe_eq "conns --limit 1 lists one" "$(jget "$(ctl conns --limit 1 --json)" 'len(d["cores"][0]["conns"])')" 1
lfe_log "ok: conns"

# top: two refreshes, not a terminal.
t=$(timeout 10 "$LFE_CTL" --prefix "$LFE_PREFIX" top --count 2)
lfe_eq "top refreshes" "$(grep -c '^total ' <<<"$t")" 2

# reload: good file (search_access = none), then a bad one.
search_rc() { local rc=0; lfe_cli timeout 10 ldapsearch -x -LLL -H "$H" -b "$LFE_SUFFIX" "(uid=carol)" dn >/dev/null 2>&1 || rc=$?; echo $rc; }
lfe_eq "anonymous search before reload" "$(search_rc)" 0
cp "$conf" "$conf.orig"
sed -i 's/^\[ldap\]$/[ldap]\nsearch_access = none/' "$conf"
lfe_eq "reload (good file)" "$(rc_of ctl reload)" 0
lfe_eq "anonymous search refused after reload (insufficientAccessRights)" "$(search_rc)" 50
grep -q "^reloads: 1$" <<<"$(ctl status)" || lfe_fail "status does not count the reload"
cp "$conf.orig" "$conf"
sed -i 's/^\[ldap\]$/[ldap]\nmax_pdu = 2048/' "$conf"
err=$(ctl reload 2>&1) && lfe_fail "reload of a non-live key accepted: $err"
grep -q "\[ldap\] max_pdu: cannot change while running" <<<"$err" || lfe_fail "reload refusal: $err"
lfe_eq "refused reload changed nothing (search still refused)" "$(search_rc)" 50
cp "$conf.orig" "$conf"
sed -i 's/^\[ldap\]$/[ldap]\nsearch_scope = sideways/' "$conf"
lfe_eq "reload with a bad value exits 1" "$(rc_of ctl reload)" 1
grep -q "search_scope" <<<"$(ctl reload 2>&1)" || lfe_fail "bad value reload does not name the key"
lfe_eq "still nothing changed" "$(search_rc)" 50
cp "$conf.orig" "$conf"
printf '[daemon]\nlog_level = debug\n' >> "$conf"
grep -q "\[daemon\] log_level: cannot change while running" <<<"$(ctl reload 2>&1)" || lfe_fail "log_level reload not refused"
grep -q "^ldapfe: level=info event=reload config=$conf reloads=1$" "$LFE_LOG" ||
	lfe_fail "no reload event line: $(grep event= "$LFE_LOG")"
grep -q '^ldapfe: level=warn event=ctl_refused reason="\[ldap\] max_pdu: cannot change while running' "$LFE_LOG" ||
	lfe_fail "no refused-reload event line: $(grep event= "$LFE_LOG")"
lfe_log "ok: reload"

# Bad input to the control socket; the daemon keeps serving.
ans=$("$PY" - "$SOCK" <<'PYEOF'
import socket, sys
def ask(data):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(sys.argv[1])
    try:
        s.sendall(data)
    except OSError:
        pass
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b: break
            out += b
    except OSError:
        pass
    s.close()
    return out.split(b"\n")[0].decode(errors="replace")
print(ask(b"frobnicate now\n"))
print(ask(b"\x00\xff\xfe garbage\n"))
print(ask(b"A" * (1 << 20)))
print(ask(b"conns 5\n"))
PYEOF
)
lfe_eq "garbage answers" "$(cut -d' ' -f1 <<<"$ans" | tr '\n' ' ')" "error error error error "
grep -q "too long" <<<"$ans" || lfe_fail "huge request: $ans"
lfe_eq "status after bad requests" "$(rc_of ctl status)" 0
lfe_eq "bind after bad requests" "$(lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn bob)" -w bob-pw)" "dn:$(lfe_dn bob)"
# A flood of bad requests: the event lines stay within the burst (10) plus
# the refill (1/s), and the next line that passes counts what was held back.
"$PY" - "$SOCK" <<'PYEOF'
import socket, sys, time
for _ in range(200):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1]); s.sendall(b"bogus\n"); s.recv(100); s.close()
time.sleep(2.1)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1]); s.sendall(b"bogus last\n"); s.recv(100); s.close()
PYEOF
n=$(grep -c "event=ctl_refused" "$LFE_LOG")
((n >= 10 && n <= 30)) || lfe_fail "bad requests logged $n times (rate limit)"
grep -Eq '^ldapfe: level=warn event=ctl_refused reason="unknown request [^"]*" suppressed=[0-9]+$' "$LFE_LOG" ||
	lfe_fail "no suppressed=N line: $(grep ctl_refused "$LFE_LOG" | tail -3)"
lfe_log "ok: bad requests logged $n times for 206"
lfe_eq "unknown ldapfectl command" "$(rc_of ctl frobnicate)" 2
lfe_eq "option of another command" "$(rc_of ctl status --limit 3)" 2

# drain while a client binds in a loop; the held connections stay open,
# so the daemon drains for the whole --timeout and refuses new ones (RST:
# the connect fails at once) meanwhile.
lfe_py '
import sys, time
from ldap3 import Server, Connection
from ldap3.core.exceptions import LDAPSocketOpenError, LDAPException
addr, dn = sys.argv[1:3]
s = Server(addr, port=389, connect_timeout=1)
ok = fast_refused = slow = lost = 0
t0 = time.time()
while time.time() - t0 < 10 and slow < 2:
    c = Connection(s, dn, "bob-pw", receive_timeout=5)
    t = time.time()
    try:
        c.open()
    except LDAPSocketOpenError:
        if time.time() - t < 0.5:
            fast_refused += 1
            time.sleep(0.01)
        else:
            slow += 1       # the daemon is gone: nobody answers the SYN
        continue
    try:
        if c.bind(): ok += 1
        else: lost += 1
        c.unbind()
    except LDAPException as e:
        lost += 1
        print("lost:", repr(e), flush=True)
print("ok=%d refused=%d lost=%d" % (ok, fast_refused, lost), flush=True)
' "$LFE_SADDR" "$(lfe_dn bob)" > "$LFE_WORK/loop.out" 2>&1 &
loop_pid=$!
LFE_EXTRA_PIDS="$hold_pid $loop_pid"
sleep 1.5
drc=0
ctl drain --timeout 2 > "$LFE_WORK/drain.out" 2>&1 || drc=$?
lfe_eq "drain exit status" "$drc" 0
grep -q "^drained in [0-9]* ms; 2 connection(s) left" "$LFE_WORK/drain.out" || lfe_fail "drain: $(cat "$LFE_WORK/drain.out")"
dpid=$LFE_PID
for ((i = 0; i < 50; i++)); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$dpid" 2>/dev/null && lfe_fail "daemon still running after drain"
src=0; wait "$dpid" || src=$?
LFE_PID=
lfe_eq "daemon exit status after drain" "$src" 0
rm -f "$hold"
wait "$loop_pid" || true
wait "$hold_pid" || true
LFE_EXTRA_PIDS=
res=$(tail -n 1 "$LFE_WORK/loop.out")
lfe_log "bind loop during drain: $res"
[[ $res =~ ^ok=([0-9]+)\ refused=([0-9]+)\ lost=0$ ]] || lfe_fail "binds lost during drain: $(cat "$LFE_WORK/loop.out")"
((BASH_REMATCH[1] > 0 && BASH_REMATCH[2] > 0)) || lfe_fail "drain loop saw no binds or no refusal (RST): $res"
grep -q "^ldapfe: level=info event=drain timeout_s=2$" "$LFE_LOG" || lfe_fail "daemon log lacks the drain"
grep -Eq "^ldapfe: level=info event=drained waited_ms=[0-9]+ open=2$" "$LFE_LOG" || lfe_fail "daemon log lacks the drained line"
[[ -e $SOCK ]] && lfe_fail "control socket left behind"

# No daemon: clear error, exit 1, for every daemon command.
for cmd in status stats conns reload drain top; do
	out=$(ctl $cmd 2>&1) && lfe_fail "$cmd without a daemon succeeded"
	lfe_eq "$cmd without a daemon: exit 1" "$(rc_of ctl $cmd)" 1
	grep -q "no ldapfe daemon answers at $SOCK" <<<"$out" || lfe_fail "$cmd without a daemon: $out"
done
lfe_log "ok: all"
