# tests/bench/cg-common.sh — sourced by callgrind-bind.sh and callgrind-gen.sh:
# the daemon's bind count from its telemetry socket. Uses the caller's PY,
# PFX (EAL file prefix; the daemon's is PFX-srv), GEN_PID, OUT and die.

# Binds answered so far and connections open, from the daemon's telemetry.
tel() {
	"$PY" - "/var/run/dpdk/$PFX-srv/dpdk_telemetry.v2" <<'EOF'
import json, socket, sys
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(20)
    s.connect(sys.argv[1])
    json.loads(s.recv(16384).decode())
    s.send(b"/ldapfe/stats")
    t = json.loads(s.recv(1 << 20).decode())["/ldapfe/stats"]["total"]
    print(t["binds_ok"] + t["binds_failed"], t["conns_active"])
except Exception:
    print(-1, -1)
EOF
}
# wait_binds N: until the daemon has answered N binds (10 minutes at most).
wait_binds() {
	local t0=$SECONDS b
	while :; do
		read -r b _ < <(tel)
		((b >= $1)) && return 0
		((SECONDS - t0 < 600)) || die "only $b of $1 binds in 10 minutes"
		kill -0 "$GEN_PID" 2>/dev/null || die "generator exited: $(tail -2 "$OUT/gen.log")"
		sleep 0.2
	done
}
