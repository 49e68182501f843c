#!/usr/bin/env bash
# The management side under a hostile local client (issue 29, item 6):
#   - "[admin] metrics_listen =" (empty) starts the daemon with no /metrics;
#   - gid 0 in [daemon] group is refused at start;
#   - no_new_privs on every thread of the daemon (not only under systemd);
#   - /metrics: connections from one address are capped (4), so 16 idle
#     ones from 127.0.0.2 no longer starve a scrape from 127.0.0.1;
#   - the control socket's 1 s is for the whole request: a client that
#     dribbles a byte every 0.3 s is cut off, `ldapfectl reload` still
#     answers within 2.5 s;
#   - drain answers later and no longer holds the control thread: status
#     (draining) and reload answer while it waits for an open connection;
#     when that closes, drain says so and the daemon exits 0;
#   - ldapfectl as a user without XDG_RUNTIME_DIR asks /var/run/dpdk, never
#     /tmp/dpdk; a runtime directory owned by someone else is not trusted.
source "$(dirname "$0")/lib.sh"
lfe_init ctlsafe 132
lfe_make_store
ctl() { "$LFE_CTL" --prefix "$LFE_PREFIX" "$@"; }
SOCK=/var/run/dpdk/$LFE_PREFIX/ldapfe.ctl

# gid 0 refused at start
conf=$(lfe_conf)
printf '[daemon]\nuser = nobody\ngroup = root\n' >> "$conf"
rc=0
out=$(ip netns exec "$LFE_SRV" timeout 60 "$LFE_LDAPFE" -l 0 --no-pci --no-huge -m 768 --file-prefix "$LFE_PREFIX" \
	--log-level=lib.eal:error -- --config "$conf" 2>&1) || rc=$?
((rc != 0)) || lfe_fail "gid 0 accepted"
[[ $out == *"gid 0"* ]] || lfe_fail "gid 0: $out"
lfe_log "ok: [daemon] group = root refused: $(grep -o '\[daemon\] group.*' <<<"$out" | head -1)"

# metrics_listen = (empty): off
conf=$(lfe_conf)
printf '[admin]\nmetrics_listen =\n' >> "$conf"
lfe_start "$conf" 0
grep -q "metrics on" "$LFE_LOG" && lfe_fail "metrics served with metrics_listen empty"
lfe_log "ok: metrics_listen = (empty) is off"
for t in /proc/$LFE_PID/task/*/status; do
	[[ $(awk '/^NoNewPrivs:/ { print $2 }' "$t") == 1 ]] || lfe_fail "no_new_privs off in $t"
done
lfe_log "ok: no_new_privs on all $(ls /proc/$LFE_PID/task | wc -l) threads"
lfe_stop_restart

conf=$(lfe_conf)
printf '[admin]\nmetrics_listen = 127.0.0.1:9392\n' >> "$conf"
lfe_start "$conf" 0

# /metrics: 16 idle connections from 127.0.0.2, then a scrape from 127.0.0.1
out=$(ip netns exec "$LFE_SRV" timeout 30 "$PY" - <<'PYEOF'
import socket, time
held = []
for i in range(16):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", 9392))
    held.append(s)
time.sleep(0.5)
closed = 0
for s in held:
    s.settimeout(0.2)
    try:
        if s.recv(1) == b"":
            closed += 1
    except socket.timeout:
        pass
    except OSError:
        closed += 1
c = socket.create_connection(("127.0.0.1", 9392), timeout=3)
c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
data = b""
try:
    while True:
        d = c.recv(65536)
        if not d:
            break
        data += d
except socket.timeout:
    pass
print("closed=%d scrape=%s" % (closed, b"ldapfe_conns_active" in data))
PYEOF
)
lfe_log "metrics: $out"
[[ $out == *"scrape=True"* ]] || lfe_fail "scrape starved by 16 connections from one address: $out"
closed=$(sed -n 's/.*closed=\([0-9]*\).*/\1/p' <<<"$out")
((closed >= 12)) || lfe_fail "per-address cap: only $closed of 16 closed"
lfe_log "ok: /metrics per-address cap ($closed of 16 from one address closed, scrape answered)"

# dribbling control client vs reload
ip netns exec "$LFE_SRV" timeout 30 "$PY" - "$SOCK" > "$LFE_WORK/dribble.out" 2>&1 <<'PYEOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
t0 = time.time()
try:
    for ch in b"status" * 5:
        s.send(bytes([ch]))
        time.sleep(0.3)
except OSError as e:
    print("cut off (%s) after %.1f s" % (e, time.time() - t0))
s.settimeout(3)
try:
    print("answer:", s.recv(4096).decode(errors="replace").strip())
except OSError as e:
    print("no answer:", e)
PYEOF
DRIB=$!
LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $DRIB"
sleep 0.5
t0=$(date +%s%N)
rc=0; timeout 10 "$LFE_CTL" --prefix "$LFE_PREFIX" reload > "$LFE_WORK/reload.out" 2>&1 || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
lfe_eq "reload while a client dribbles: exit" "$rc" 0
((ms < 2500)) || lfe_fail "reload waited $ms ms behind a dribbling client"
lfe_log "ok: reload answered in $ms ms while a client dribbles"
wait "$DRIB" || true
grep -q "incomplete request" "$LFE_WORK/dribble.out" || lfe_fail "dribbler: $(cat "$LFE_WORK/dribble.out")"
lfe_log "ok: dribbler cut off: $(cat "$LFE_WORK/dribble.out")"

# drain with a connection held open: status and reload meanwhile
lfe_cli timeout 30 "$PY" -c '
import socket, sys, time
s = socket.create_connection((sys.argv[1], 389), timeout=3)
print("connected", flush=True)
time.sleep(25)' "$LFE_SADDR" > "$LFE_WORK/hold.out" 2>&1 &
HOLD=$!
LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $HOLD"
for ((i = 0; i < 50; i++)); do grep -q connected "$LFE_WORK/hold.out" && break; sleep 0.1; done
grep -q connected "$LFE_WORK/hold.out" || lfe_fail "held connection"
sleep 0.2
ctl drain --timeout 15 > "$LFE_WORK/drain.out" 2>&1 &
DRAIN=$!
LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $DRAIN"
sleep 0.5
t0=$(date +%s%N)
st=$(timeout 5 "$LFE_CTL" --prefix "$LFE_PREFIX" status 2>&1) || lfe_fail "status during drain: $st"
ms=$((($(date +%s%N) - t0) / 1000000))
[[ $st == *draining* ]] || lfe_fail "status during drain: $st"
((ms < 1500)) || lfe_fail "status took $ms ms during a drain"
rc=0; timeout 5 "$LFE_CTL" --prefix "$LFE_PREFIX" reload >/dev/null 2>&1 || rc=$?
lfe_eq "reload during a drain" "$rc" 0
t=0; timeout 5 "$LFE_CTL" --prefix "$LFE_PREFIX" drain --timeout 1 > "$LFE_WORK/drain2.out" 2>&1 || t=$?
((t != 0)) && grep -q "already in progress" "$LFE_WORK/drain2.out" || lfe_fail "second drain: $(cat "$LFE_WORK/drain2.out")"
lfe_log "ok: status ($ms ms), reload and a refused second drain answered during a drain"
kill -TERM $(_lfe_desc "$HOLD") "$HOLD" 2>/dev/null; wait "$HOLD" 2>/dev/null || true
rc=0; wait "$DRAIN" || rc=$?
lfe_eq "drain exit status" "$rc" 0
lfe_log "drain: $(cat "$LFE_WORK/drain.out")"
grep -q "^drained in [0-9]* ms; 0 connection(s) left" "$LFE_WORK/drain.out" || lfe_fail "drain: $(cat "$LFE_WORK/drain.out")"
for ((i = 0; i < 100; i++)); do kill -0 "$LFE_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$LFE_PID" 2>/dev/null && lfe_fail "daemon still running after drain"
rc=0; wait "$LFE_PID" || rc=$?
LFE_PID=
lfe_eq "daemon exit after drain" "$rc" 0

# ldapfectl's socket path as a user without XDG_RUNTIME_DIR; an untrusted one
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR \
	"$LFE_CTL" --prefix "$LFE_PREFIX" status 2>&1) && lfe_fail "status as nobody answered: $out"
[[ $out == *"/var/run/dpdk/$LFE_PREFIX/ldapfe.ctl"* && $out != *"/tmp/"* ]] ||
	lfe_fail "without XDG_RUNTIME_DIR: $out"
xdg=$(mktemp -d /tmp/lfe-xdg.XXXXXX)
chmod 0755 "$xdg"
mkdir -p "$xdg/dpdk/$LFE_PREFIX"
chown 65534:65534 "$xdg/dpdk/$LFE_PREFIX"
out=$(setpriv --reuid=64030 --regid=64030 --clear-groups env XDG_RUNTIME_DIR="$xdg" \
	"$LFE_CTL" --prefix "$LFE_PREFIX" status 2>&1) && lfe_fail "untrusted runtime dir used: $out"
rm -rf "$xdg"
[[ $out == *"not trusted"* ]] || lfe_fail "a runtime directory of another user: $out"
lfe_log "ok: ldapfectl's socket: /var/run/dpdk without XDG_RUNTIME_DIR, another user's directory refused"
echo "PASS test_ctlsafe"
