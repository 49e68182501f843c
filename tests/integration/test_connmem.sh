#!/usr/bin/env bash
# tests/integration/test_connmem.sh — memory per connection (issue 10):
# the daemon starts with max_conns_per_core = 1048576 inside the test's
# 768 MB of EAL memory and prints what an idle connection costs (TCP part
# ≤ 1 KiB); with a receive-buffer pool of 4, 24 kernel clients each
# pipeline a slow bind ({CRYPT}, through the verifier) and a fast one in
# one segment: the bytes behind the pending bind need a pool buffer, most
# find the pool dry and get a zero window, and every client still gets
# both answers (the kernel resends when the window reopens); the counters
# (tcp_rcvbuf_pool_empty, tcp_drop_paws, tcp_sack_rexmits, buffers in use)
# are in telemetry; the 24 bound, quiet connections hold one 64-byte DN
# chunk each in the DN pool (dn_pool_bytes), and the start line's figure
# for an idle connection (TCP and session slot) is at most 1 KiB.
# Then 1,500 kernel clients each split a bind across two segments, one
# after the other, and hold their connections: the 4 KiB reassembly
# buffers are handed out last-freed first, so one or two are ever held
# (pdu_small_peak) and their mapping holds one or two resident pages, not
# the 4 KiB per connection that a buffer per slot made resident.
source "$(dirname "$0")/lib.sh"
lfe_init connmem 25
lfe_make_store

conf=$(lfe_conf)
sed -i 's/^max_conns_per_core = .*/max_conns_per_core = 1048576/' "$conf"
sed -i '/^\[workers\]/a verify_per_source = 64' "$conf"
sed -i 's/^max_conns_per_core = .*/&\nmax_conns_per_source = 0/' "$conf"
printf '[tcp]\nbuffer_pool = 4\n' >> "$conf"
lfe_start "$conf" 0

line=$(grep -m1 "memory per idle connection" "$LFE_LOG") || lfe_fail "no memory line at start"
lfe_log "$line"
cb=$(sed -n 's/.*TCP control block \([0-9]*\) B + table \([0-9]*\) B.*/\1 \2/p' <<<"$line")
read -r cb_b table_b <<<"$cb"
[[ -n $cb_b && -n $table_b ]] || lfe_fail "cannot read the TCP figures: $line"
((cb_b + table_b <= 1024)) || lfe_fail "TCP bytes per idle connection $((cb_b + table_b)) > 1024"
lfe_log "ok: TCP bytes per idle connection $((cb_b + table_b))"
idle_b=$(sed -n 's/.*memory per idle connection \([0-9]*\) B.*/\1/p' <<<"$line")
((idle_b > cb_b + table_b && idle_b <= 1024)) || lfe_fail "bytes per idle connection '$idle_b' (TCP and session slot) not in ($((cb_b + table_b)), 1024]"
lfe_log "ok: bytes per idle connection $idle_b (TCP and the session slot)"
grep -q "per core: 1048576 connections, buffer pool 4 x" "$LFE_LOG" || lfe_fail "pool size not as configured: $line"
rss=$(ps -o rss= -p "$LFE_PID" | tr -d ' ')
lfe_log "daemon RSS ${rss} KiB with a table for 1048576 connections"
((rss < 1536 * 1024)) || lfe_fail "daemon RSS ${rss} KiB"

tel() {
	lfe_telemetry /ldapfe/stats | "$PY" -c 'import json,sys; t=json.load(sys.stdin)["/ldapfe/stats"]["total"]; print(" ".join(str(t.get(k, -1)) for k in sys.argv[1:]))' "$@"
}

# The clients keep their connections (bound, quiet) for a while after
# printing, so the daemon's buffers in use can be read meanwhile.
ip netns exec "$LFE_CLI" timeout 120 "$PY" -c '
import os, socket, sys, time
from lfe_ber import bind_req, bind_code, read_msg
SRV = sys.argv[1]
DAVE = "uid=dave,ou=people,dc=example,dc=com"
ALICE = "uid=alice,ou=people,dc=example,dc=com"
socks = []
for i in range(24):
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(30)
    s.connect((SRV, 389))
    socks.append(s)
for s in socks:
    s.sendall(bind_req(1, DAVE, "dave-pw") + bind_req(2, ALICE, "alice-pw"))
ok = 0
for s in socks:
    try:
        a = bind_code(read_msg(s)); b = bind_code(read_msg(s))
        ok += a == 0 and b == 0
    except Exception as e:
        print("error", e, file=sys.stderr)
print(ok, flush=True)
t_end = time.time() + 4   # held until the counters are read (release), at most 4 s
while time.time() < t_end and not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
' "$LFE_SADDR" "$LFE_WORK/release1" > "$LFE_WORK/clients.out" &
cpid=$!
for ((i = 0; i < 300; i++)); do
	[[ -s $LFE_WORK/clients.out ]] && break
	sleep 0.1
done
lfe_eq "24 clients, both binds answered" "$(cat "$LFE_WORK/clients.out")" 24

sleep 0.5   # counters are published every few ms; the gauges settle
read -r empty rused sused active paws sack stall dnb dndry <<<"$(tel tcp_rcvbuf_pool_empty tcp_rcvbufs_used \
	tcp_sndbufs_used conns_active tcp_drop_paws tcp_sack_rexmits tcp_buf_stall_closed dn_pool_bytes dn_pool_dry)"
lfe_log "tcp_rcvbuf_pool_empty $empty, tcp_rcvbufs_used $rused, tcp_sndbufs_used $sused, conns_active $active, tcp_drop_paws $paws, tcp_sack_rexmits $sack, tcp_buf_stall_closed $stall"
((empty > 0)) || lfe_fail "the pool of 4 never ran dry (tcp_rcvbuf_pool_empty $empty)"
lfe_eq "24 bound connections held" "$active" 24
lfe_eq "held bound connections hold no receive buffer" "$rused" 0
lfe_eq "held bound connections hold no send ring" "$sused" 0
# Each is bound as alice (36 bytes): one 64-byte DN chunk, nothing else.
lfe_eq "held bound connections hold one 64 B DN chunk each" "$dnb" $((24 * 64))
lfe_eq "no bind found the DN pool dry" "$dndry" 0
touch "$LFE_WORK/release1"
wait "$cpid" || true
((paws >= 0 && sack >= 0 && stall >= 0)) || lfe_fail "counters missing from telemetry"
lfe_log "ok: counters in telemetry"

# Split requests on 1,500 held connections, one at a time, on a daemon
# with a table of 4,096 (a million-entry connection hash would make RSS
# move with the random pages new connections land on).
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
sed -i 's/^max_conns_per_core = .*/max_conns_per_core = 4096/' "$conf"
lfe_start "$conf" 0
NSPLIT=1500
sleep 0.5
rss0=$(ps -o rss= -p "$LFE_PID" | tr -d ' ')
ip netns exec "$LFE_CLI" timeout 120 "$PY" -c '
import os, socket, sys, time
from lfe_ber import bind_req
SRV, N = sys.argv[1], int(sys.argv[2])
req = bind_req(1, "uid=alice,ou=people,dc=example,dc=com", "alice-pw")
socks, ok, t_end = [], 0, time.time() + 90
for i in range(N):
    if time.time() > t_end: break
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(10)
    s.connect((SRV, 389))
    s.sendall(req[:12])
    time.sleep(0.002)
    s.sendall(req[12:])
    r = s.recv(64)
    ok += len(r) > 9 and r[-3:] == b"\x04\x00\x04" or (b"\x61\x07\x0a\x01\x00" in r)
    socks.append(s)
print(ok, flush=True)
t_end = time.time() + 5   # held until the counters are read (release), at most 5 s
while time.time() < t_end and not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
' "$LFE_SADDR" "$NSPLIT" "$LFE_WORK/release2" > "$LFE_WORK/split.out" &
cpid=$!
for ((i = 0; i < 1000; i++)); do
	[[ -s $LFE_WORK/split.out ]] && break
	sleep 0.1
done
lfe_eq "$NSPLIT split binds answered success" "$(cat "$LFE_WORK/split.out")" "$NSPLIT"
sleep 0.5
read -r held peak active <<<"$(tel pdu_small_held pdu_small_peak conns_active)"
rss1=$(ps -o rss= -p "$LFE_PID" | tr -d ' ')
lfe_log "split requests: pdu_small_held $held, pdu_small_peak $peak, conns_active $active, RSS $rss0 -> $rss1 KiB"
lfe_eq "split connections held" "$active" "$NSPLIT"
lfe_eq "no reassembly buffer held by the quiet connections" "$held" 0
((peak >= 1 && peak <= 2)) || lfe_fail "reassembly buffers held at once: $peak (want 1..2)"
# A buffer per slot made at least 4 KiB per connection resident by itself;
# what grows now is each connection's TCP block, session slot and DN chunk.
((rss1 - rss0 < NSPLIT * 4)) || lfe_fail "RSS grew $((rss1 - rss0)) KiB for $NSPLIT split requests"
lfe_log "ok: $NSPLIT split requests held: RSS grew $((rss1 - rss0)) KiB"
touch "$LFE_WORK/release2"
wait "$cpid" || true

# The smallest table the config allows (max_conns_per_core = 1, range
# 1..2^20) starts and answers binds one connection after the other (the
# half-open share was once sized 16 regardless, over a table of 1, and
# the daemon refused to start).
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
sed -i 's/^max_conns_per_core = .*/max_conns_per_core = 1/' "$conf"
lfe_start "$conf" 0
for i in 1 2 3; do
	out=$(ip netns exec "$LFE_CLI" timeout 10 ldapwhoami -x -H "ldap://$LFE_SADDR" \
		-D "uid=alice,ou=people,dc=example,dc=com" -w alice-pw 2>&1) ||
		lfe_fail "bind $i on a table of one connection: $out"
	[[ $out == "dn:uid=alice,ou=people,dc=example,dc=com" ]] || lfe_fail "whoami $i: $out"
	for ((k = 0; k < 50; k++)); do   # the closed connection leaves the table
		[[ $(tel conns_active) == 0 ]] && break
		sleep 0.1
	done
done
lfe_log "ok: max_conns_per_core = 1 starts and answers binds in turn"

lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
