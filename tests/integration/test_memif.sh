#!/usr/bin/env bash
# The daemon on net_memif (server role) while its peer comes and goes:
# LFE_MEMIF_CYCLES (default 10) runs of ldapfe-gen (memif client, 16
# connections, persistent binds at full speed for 0.4 s, then exit: the
# PMD tears the link down and unmaps the peer's regions in the EAL
# interrupt thread while the worker polls the port). Every other run is in
# zero-copy mode, the benchmark's (the generator's mbufs are the shared
# buffers: requests built in place, responses parsed where the server wrote
# them).
#   - every run's binds are all answered right, the daemon still runs after
#     each disconnect (DPDK 22.11's memif PMD unmapped the regions under a
#     worker inside eth_memif_rx: SIGSEGV; dpdk/unmapguard.h now holds
#     the unmap until the worker's next turn), and it answers a new peer;
#   - before them, 300 local peers that connect to the socket and close at
#     once (or after the HELLO, or after a message of zeros) leave the
#     daemon running with no descriptor left behind (DPDK's listener
#     panicked the interrupt thread: dpdk/ctlsend.c);
#   - the daemon stops cleanly at the end, under a running generator, which
#     finishes and reports.
# The race itself is played deterministically by test_unmapguard; here the
# real PMD's disconnect path runs with the guard in place.
source "$(dirname "$0")/lib.sh"
CYCLES=${LFE_MEMIF_CYCLES:-10}
lfe_init memif 34
GEN=${LFE_GEN:-$LFE_BUILD/gen/ldapfe-gen}
[[ -x $GEN ]] || { echo "SKIP: $GEN not built"; exit 77; }

lfe_make_gen_store 200

SOCK=$LFE_WORK/memif.sock
conf=$LFE_WORK/ldapfe.conf
cat > "$conf" <<EOF
[store]
path = $LFE_STORE
[ldap]
port = 389
max_conns_per_core = 1024
[port0]
dev = net_memif0,role=server,id=0,socket=$SOCK,socket-abstract=no
address = $LFE_SADDR/24
[workers]
verifier_threads = 1
EOF
# idle_sleep_us unset: the worker polls the port without pause, as in
# production, so a disconnect finds it inside a burst as often as can be.
LFE_NOPING=1 lfe_start "$conf" 0

# gen_run N SECONDS [zc]: one ldapfe-gen run, LFE_WORK/gen-N.{json,log};
# zc: memif zero-copy (its regions are the EAL's segments: one file).
gen_run() {
	local eal=(--no-huge -m 256) dev="net_memif0,role=client,id=0,socket=$SOCK,socket-abstract=no"
	[[ ${3:-} == zc ]] && eal+=(--single-file-segments) dev+=",zero-copy=yes"
	ip netns exec "$LFE_SRV" timeout 60 "$GEN" -l 1 --no-pci "${eal[@]}" \
		--file-prefix "$LFE_PREFIX-gen" --log-level=lib.eal:error \
		-- --port "$dev" \
		--src-ip "$LFE_CADDR/24" --dst-ip "$LFE_SADDR" --users 200 \
		--user-fmt "uid=user%07u,ou=people,$LFE_SUFFIX" --password-fmt 'pw%07u' \
		--workload persistent --conns 16 --rate max --duration "$2" --connect-timeout-ms 10000 \
		--quiet --json "$LFE_WORK/gen-$1.json" > "$LFE_WORK/gen-$1.log" 2>&1
}
# Hostile local peers first: 300 connections to the memif socket that close
# at once, after reading the HELLO, or after a message of zeros. DPDK's
# listener panicked the daemon's interrupt thread within three (a send to a
# peer already gone left a closed descriptor registered); ctlsend.c reports
# such a send done, and the PMD's own teardown runs at the end of file.
fds0=$(ls "/proc/$LFE_PID/fd" | wc -l)
"$PY" - "$SOCK" <<'EOF'
import socket, sys, time
for i in range(300):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(2)
    try:
        s.connect(sys.argv[1])
        if i % 3 == 0:
            s.recv(256)
        elif i % 3 == 1:
            s.send(bytes(128))
    except OSError:
        pass
    s.close()
    if i % 50 == 49:
        time.sleep(0.05)
EOF
sleep 0.5
kill -0 "$LFE_PID" 2>/dev/null || lfe_fail "ldapfe died under connect-and-close peers: $(grep -A1 PANIC "$LFE_LOG" | head -2)"
fds1=$(ls "/proc/$LFE_PID/fd" | wc -l)
((fds1 <= fds0 + 2)) || lfe_fail "descriptors: $fds0 before the hostile peers, $fds1 after"
lfe_log "ok: 300 connect-and-close peers, daemon alive, descriptors $fds0 -> $fds1"

jget() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
total=0
for ((c = 1; c <= CYCLES; c++)); do
	out=$LFE_WORK/gen-$c.json
	rc=0
	gm=copy
	((c % 2 == 0)) && gm=zc
	gen_run "$c" 0.4 "$gm" || rc=$?
	((rc == 0)) || lfe_fail "run $c ($gm): ldapfe-gen exit $rc: $(tail -n 5 "$LFE_WORK/gen-$c.log")"
	ok=$(jget "$out" 'j["binds_ok"]')
	errs=$(jget "$out" 'j["errors"]["total"]')
	((ok > 100 && errs == 0)) || lfe_fail "run $c ($gm): $ok binds right, $errs errors"
	total=$((total + ok))
	# The peer is gone: the daemon must still run (a fault in the PMD's
	# teardown kills it within moments).
	sleep 0.3
	kill -0 "$LFE_PID" 2>/dev/null || lfe_fail "ldapfe died after peer $c disconnected: $(dmesg 2>/dev/null | grep -i segfault | tail -1)"
done
lfe_log "ok: $CYCLES peers came and went (half in zero-copy mode), $total binds answered right, daemon alive"
grep -qi "segfault\|panic" "$LFE_LOG" && lfe_fail "daemon log: $(grep -i 'segfault\|panic' "$LFE_LOG" | head -2)"

# The other side: the daemon goes while the generator polls. The
# generator's PMD unmaps its own regions in its interrupt thread; it must
# finish its run and report (binds unanswered, connections lost), not fault.
gen_run 0 3 &
GEN_PID=$!
LFE_EXTRA_PIDS=$GEN_PID
for ((i = 0; i < 100; i++)); do
	[[ -s $LFE_WORK/gen-0.log ]] && grep -q "is at" "$LFE_WORK/gen-0.log" && break
	sleep 0.1
done
sleep 1
lfe_stop
[[ $LFE_STOP_RC == 0 ]] || lfe_fail "ldapfe stop: $LFE_STOP_RC"
rc=0
wait "$GEN_PID" || rc=$?
LFE_EXTRA_PIDS=
((rc < 128)) || lfe_fail "ldapfe-gen killed by signal $((rc - 128)) when its peer went: $(tail -n 3 "$LFE_WORK/gen-0.log")"
[[ -f $LFE_WORK/gen-0.json ]] || lfe_fail "ldapfe-gen wrote no report (exit $rc): $(tail -n 3 "$LFE_WORK/gen-0.log")"
lfe_log "ok: the generator outlived its peer (exit $rc), $(jget "$LFE_WORK/gen-0.json" 'j["binds_ok"]') binds right before"
# Each teardown unmapped the peer's regions through the daemon's munmap,
# from the interrupt thread, and no wait ran out of time.
held=$(sed -n "s/^ldapfe: unmaps held for the workers' turns: \([0-9]*\) (\([0-9]*\) past the bound; .*)$/\1 \2/p" "$LFE_LOG")
[[ -n $held ]] || lfe_fail "no unmap figures in the daemon's log"
read -r waits late <<<"$held"
((waits >= CYCLES && late == 0)) || lfe_fail "unmaps held: $waits for $CYCLES disconnects, $late past the bound"
mode=$(sed -n "s/^ldapfe: unmaps held for the workers' turns: .*past the bound; \(.*\))$/\1/p" "$LFE_LOG")
lfe_log "ok: $waits unmaps held for the worker's turn, none past the bound ($mode)"
echo "PASS test_memif"
