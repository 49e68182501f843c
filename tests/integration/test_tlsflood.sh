#!/usr/bin/env bash
# A handshake flood does not stall the poll core: ldapfe with LDAPS on an
# RSA-2048 certificate (made here with the openssl CLI; no key committed),
# flooded with full handshakes (parallel `openssl s_time -new`) while
# another client binds in a loop on an established cleartext connection
# and times each bind.
#  (a) handshake_threads = 1: every handshake step ran on the crypto thread
#      (telemetry: tls_offloaded >= tls_handshakes > 0), every bind
#      succeeded, and the binds' p99 stays under a generous bound;
#  (b) handshake_threads = 0 (inline, the comparison mode): the same flood
#      with no step offloaded; both p99s and handshakes/s are printed;
#  (c) handshake_queue = 1, handshake_per_source = 1: handshakes beyond the
#      queue are refused (RST, tls_busy > 0) and LDAPS still works after.
# LFE_FLOOD_RUNS=3 repeats (a) and (b) and prints the medians (the
# benchmark figure); the assertions need one run.
# The worker polls CPU 0. Where there is a second CPU, the flood and the
# timed client run on CPU 1 only, with the crypto thread (EAL keeps non-lcore
# threads off the lcores), and the timed client at a real-time priority
# (chrt -f; it sleeps 2 ms between binds): a client's machine does not share
# the server's poll core, nor does a client wait behind its neighbours'
# handshakes, so what the p99 shows is the server's. On one CPU, as before.
source "$(dirname "$0")/lib.sh"
lfe_init tlsflood 27
lfe_make_store
command -v openssl >/dev/null || { echo "SKIP: no openssl CLI"; exit 77; }
PIN=() RT=()
if (($(nproc) >= 2)); then
	PIN=(taskset -c 1)
	command -v chrt >/dev/null && RT=(chrt -f 10)
fi

P=$LFE_WORK/pki
mkdir -p "$P"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/srv.key" -out "$P/srv.crt" -days 2 \
	-subj "/CN=$LFE_SADDR" >/dev/null 2>&1 || lfe_fail "openssl req failed"

flood_conf() {   # flood_conf [TLS KEY=VALUE...]
	local f
	f=$(lfe_conf 1)
	sed -i 's/^port = 389$/port = 389\nldaps_ports = 636/' "$f"
	printf '[tls]\ncertificate = %s\nkey = %s\n' "$P/srv.crt" "$P/srv.key" >> "$f"
	for kv in "$@"; do echo "$kv" >> "$f"; done
	echo "$f"
}

# binder SECONDS: simple binds (alice, {SSHA}: verified inline) on one
# connection, ~2 ms apart; prints "n ok p50_us p99_us".
BINDER='
import socket, sys, time
host, secs, dn, pw = sys.argv[1], float(sys.argv[2]), sys.argv[3].encode(), sys.argv[4].encode()
from lfe_ber import bind_req, read_msg
s = socket.create_connection((host, 389), timeout=10)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
lat, ok, i = [], 0, 0
end = time.time() + secs
while time.time() < end:
    i = i % 120 + 1
    req = bind_req(i, dn, pw)
    t0 = time.perf_counter()
    s.sendall(req)
    try:
        buf = read_msg(s, bytearray())   # one recv, as before
    except EOFError:
        raise SystemExit("connection closed")
    lat.append(time.perf_counter() - t0)
    ok += buf[2:5] == b"\x02\x01" + bytes([i]) and b"\x61\x07\x0a\x01\x00" in buf
    time.sleep(0.002)
lat.sort()
print(len(lat), ok, int(lat[len(lat) // 2] * 1e6), int(lat[int(len(lat) * 0.99)] * 1e6))
'

stat() {   # stat NAME...: total counters from telemetry
	"$PY" -c 'import json,sys; t=json.loads(sys.argv[1])["/ldapfe/stats"]["total"]
print(" ".join(str(t.get(k, "none")) for k in sys.argv[2:]))' "$(lfe_telemetry /ldapfe/stats)" "$@"
}

# flood N SECONDS: N parallel s_time -new in the background; FLOOD_OUT gets
# their output files.
flood() {
	FLOOD_OUT=()
	FLOOD_PIDS=()
	local i
	for ((i = 0; i < $1; i++)); do
		local f=$LFE_WORK/stime.$i
		lfe_cli "${PIN[@]}" timeout $(($2 + 15)) openssl s_time -connect "$LFE_SADDR:636" -new -time "$2" \
			>"$f" 2>&1 &
		FLOOD_PIDS+=($!)
		FLOOD_OUT+=("$f")
	done
	LFE_EXTRA_PIDS="${FLOOD_PIDS[*]}"
}
# flood_wait: wait for them (bounded by their timeout); CONNS gets the
# handshakes they completed.
flood_wait() {
	local p
	for p in "${FLOOD_PIDS[@]}"; do wait "$p" || true; done
	LFE_EXTRA_PIDS=
	CONNS=$(cat "${FLOOD_OUT[@]}" | awk '/connections in [0-9.]+s;/ { n += $1 } END { print n + 0 }')
}

# phase THREADS: one flood with binds timed during it. Sets P_N P_OK P50
# P99 HS OFF BUSY FAILED CONNS.
FLOOD_SECS=4
phase() {
	lfe_start "$(flood_conf "handshake_threads = $1")" 0
	# the measured connection is established before the flood starts
	flood 4 "$FLOOD_SECS"
	sleep 0.5
	read -r P_N P_OK P50 P99 < <(lfe_cli "${RT[@]}" "${PIN[@]}" timeout 60 "$PY" -c "$BINDER" \
		"$LFE_SADDR" $((FLOOD_SECS - 1)) "$(lfe_dn alice)" alice-pw) || lfe_fail "binder failed"
	flood_wait
	read -r HS OFF BUSY FAILED < <(stat tls_handshakes tls_offloaded tls_busy tls_handshake_failed)
	lfe_log "threads=$1: $P_N binds ($P_OK ok) p50 ${P50} µs p99 ${P99} µs during" \
		"$CONNS s_time handshakes ($((CONNS / FLOOD_SECS))/s); telemetry handshakes $HS" \
		"offloaded $OFF busy $BUSY failed $FAILED"
	lfe_stop_restart
}

runs=${LFE_FLOOD_RUNS:-1}
p99_off=() p99_inl=() hs_off=() hs_inl=()
for ((r = 0; r < runs; r++)); do
	# (a) offloaded
	phase 1
	[[ $HS != none ]] || lfe_fail "no tls_handshakes counter"
	# s_time closes right after its Finished, so the server's last step of
	# most handshakes is cancelled (tls_cancelled) rather than counted in
	# tls_handshakes: count the client's handshakes. Each took at least one
	# offloaded step, and the inline mode offloads none.
	((CONNS > 0)) || lfe_fail "(a) no handshake completed under the flood"
	((OFF >= CONNS)) || lfe_fail "(a) $OFF steps offloaded for $CONNS handshakes: some ran on the worker"
	((P_N > 50 && P_OK == P_N)) || lfe_fail "(a) binds: $P_OK of $P_N ok"
	# Inline, the median bind waits behind handshakes (an RSA-2048 one
	# costs the core ~0.3 ms, and a burst of ClientHellos stacks them: 4-20
	# ms here at load 10-20); offloaded it took 90-160 µs at that load. The
	# p99 of a Python client on a loaded machine is scheduling noise: only
	# a sanity bound.
	((P50 < 2000)) || lfe_fail "(a) bind p50 ${P50} µs under the flood"
	((P99 < 200000)) || lfe_fail "(a) bind p99 ${P99} µs under the flood"
	p99_off+=("$P99")
	hs_off+=($((CONNS / FLOOD_SECS)))
	# (b) inline, for comparison
	phase 0
	((CONNS > 0 && HS > 0 && OFF == 0)) || lfe_fail "(b) inline mode: $CONNS handshakes, $OFF offloaded"
	((P_OK == P_N)) || lfe_fail "(b) binds: $P_OK of $P_N ok"
	p99_inl+=("$P99")
	hs_inl+=($((CONNS / FLOOD_SECS)))
done
lfe_log "ok: (a) every handshake step on the crypto thread; binds unharmed"
med() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
lfe_log "figure ($runs run(s), median): bind p99 during the flood: offloaded $(med "${p99_off[@]}") µs" \
	"($(med "${hs_off[@]}") handshakes/s), inline $(med "${p99_inl[@]}") µs" \
	"($(med "${hs_inl[@]}") handshakes/s); load: $(cut -d' ' -f1-3 /proc/loadavg)"

# (c) a queue of one: concurrent handshakes beyond it are refused.
lfe_start "$(flood_conf "handshake_threads = 1" "handshake_queue = 1" "handshake_per_source = 1")" 0
flood 6 2
flood_wait
sleep 0.1   # the last steps come back
read -r OFF BUSY DEPTH < <(stat tls_offloaded tls_busy tls_queue_depth)
lfe_log "(c) $CONNS s_time handshakes, telemetry offloaded $OFF busy $BUSY depth $DEPTH"
((BUSY > 0)) || lfe_fail "(c) no handshake refused with a queue of one"
((OFF > 0)) || lfe_fail "(c) no handshake admitted"
lfe_eq "(c) queue drained" "$DEPTH" 0
got=$(lfe_cli timeout 10 openssl s_client -brief -connect "$LFE_SADDR:636" </dev/null 2>&1 |
	awk '/^Protocol version *:/ { print $NF; exit }')
lfe_eq "(c) LDAPS handshake after the flood" "$got" "TLSv1.3"
lfe_stop
lfe_log "stopped in ${LFE_STOP_MS} ms"
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
