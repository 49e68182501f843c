# tests/bench/cg-common.sh — sourced by callgrind-bind.sh and callgrind-gen.sh
# after they set ROOT, BUILD, USERS, OUT, SUFFIX, PY and CG_NAME, CG_NET
# (their tests/integration/lib.sh name and NET): the checks, the build, the
# store, the namespace, the daemon's memif config, clean-up, and the
# daemon's bind count from its telemetry socket.
#
# Namespaces, EAL prefixes, the work dir and the EXIT trap are lib.sh's
# (lfe_init CG_NAME CG_NET; LFE_NS_TAG as there): the daemon and the
# generator run in the namespace NS=lfe-CG_NAME<tag>-srv (memif between
# them), the daemon with the EAL prefix PFX=lfe-CG_NAME<tag> (LFE_PID),
# the generator with PFX-gen (cg_gen_pid); both are stopped by PID.

ME=$(basename "$0")
log() { echo "[$(date +%T)] $*" >&2; }
die() { echo "$ME: $*" >&2; exit 1; }

[[ $EUID -eq 0 ]] || die "needs root"
command -v valgrind >/dev/null || die "needs valgrind"

if [[ ! -f $BUILD/build.ninja ]]; then
	# -O3 with debug info: callgrind attributes instructions to source files.
	meson setup "$BUILD" "$ROOT" --buildtype=debugoptimized -Doptimization=3 >/dev/null
fi
meson compile -C "$BUILD" dataplane/ldapfe mgmt/ldapfectl gen/ldapfe-gen >/dev/null
LFE_BUILD=$BUILD
# shellcheck source=../integration/lib.sh
source "$ROOT/tests/integration/lib.sh"
LDAPFE=$LFE_LDAPFE
GEN=$BUILD/gen/ldapfe-gen
WORK=$BUILD/bench-work
mkdir -p "$WORK" "$OUT"

# cg_store DIR: the store of USERS users ({SSHA}) made in DIR if absent (the
# one run-bench.sh makes and reuses).
cg_store() {
	if [[ ! -f $WORK/data-$USERS.done ]]; then
		rm -rf "$1"
		log "generating $USERS users ({SSHA}) and importing them"
		"$PY" "$ROOT/tests/gen/mkldif.py" "$USERS" "$SUFFIX" > "$WORK/users-$USERS.ldif"
		mkdir -p "$1"
		"$BUILD/mgmt/ldapfectl" --store "$1" init --suffix "$SUFFIX" >/dev/null
		"$BUILD/mgmt/ldapfectl" --store "$1" import "$WORK/users-$USERS.ldif" >/dev/null
		touch "$WORK/data-$USERS.done"
	fi
}

# namespaces, work dir, EXIT trap (lfe_cleanup: LFE_PID, LFE_EXTRA_PIDS,
# the namespaces, both EAL prefixes)
lfe_init "$CG_NAME" "$CG_NET"
NS=$LFE_SRV
PFX=$LFE_PREFIX
SADDR=$LFE_SADDR
CADDR=$LFE_CADDR
LFE_PID=
GEN_PID=
# cg_gen_pid PID: the generator just started in the background, stopped
# by the EXIT trap if the script ends before it.
cg_gen_pid() {
	GEN_PID=$1
	LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $1"
}
SOCK=$OUT/memif.sock
rm -f "$SOCK" "$OUT"/callgrind.out.*

# cg_conf FILE STORE: the daemon's config, one worker on a memif server port.
cg_conf() {
	{
		printf '[store]\npath = %s\n[ldap]\nport = 389\nmax_conns_per_core = 65536\n' "$2"
		printf '[port0]\ndev = net_memif0,role=server,id=0,socket=%s,socket-abstract=no\naddress = %s/24\n' \
			"$SOCK" "$SADDR"
		printf '[workers]\nlcores = 0\n'
	} > "$1"
}

# cg_ready TENTHS: until the daemon (LFE_PID) logs that it is ready.
cg_ready() {
	for ((i = 0; i < $1; i++)); do
		grep -q "ldapfe: ready" "$OUT/ldapfe.log" 2>/dev/null && return 0
		kill -0 "$LFE_PID" 2>/dev/null || die "ldapfe exited: $(tail -5 "$OUT/ldapfe.log")"
		sleep 0.1
	done
	die "ldapfe not ready in $(($1 / 10)) s"
}

# Binds answered so far and connections open, from the daemon's telemetry.
tel() {
	"$PY" - "/var/run/dpdk/$PFX/dpdk_telemetry.v2" <<'EOF'
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
