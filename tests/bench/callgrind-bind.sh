#!/usr/bin/env bash
# tests/bench/callgrind-bind.sh — callgrind instructions per persistent bind
# of one ldapfe worker, by layer and by stage, for before/after figures.
# Not part of CI; needs root (a namespace, EAL) and valgrind.
#
# ldapfe (--no-huge, one worker) runs under callgrind and ldapfe-gen
# (native) sends persistent simple binds over net_memif. After a warm-up,
# three windows are dumped: N binds (LFE_CG_BINDS, counted by the daemon's
# telemetry), 2N binds, and idle (generator gone, connections open).
# tests/bench/callgrind_bind.py then prints
#   per bind = (cost(2N) - cost(N)) / (binds(2N) - binds(N)),
# whatever a window costs once cancelling, with the worker loop's idle
# polls taken out: each window's polls that found no frame, times the cost
# of a poll measured in the idle window. Work paced by the clock, not by
# binds (the timer wheel's tick, the store reader's renew, the control
# poll, the counter publish) is not collected (callgrind --toggle-collect):
# under valgrind a bind takes ~50x longer, so per bind it would be
# overstated ~50x. Binds are counted exactly as calls of the glue's be_bind
# (one per BindRequest with a DN and a password).
#
# Two figures worth taking: LFE_CG_GEN_USERS=1000 (every bind a credential
# cache hit: the path outside the store) and the default (100,000 users,
# uniform: cache misses, the store's lookup and the {SSHA} hash).
#
# Environment (defaults):
#   LFE_CG_BUILD=build-bench   build dir (meson -O3 -g, made if absent; the
#                             same as run-bench.sh's)
#   LFE_CG_USERS=100000        store size ({SSHA}); the store is made in
#                             BUILD/bench-work/store-N if absent (the one
#                             run-bench.sh makes and reuses)
#   LFE_CG_GEN_USERS=USERS     users the generator binds as (uniform): a
#                             few thousand keep every bind a credential
#                             cache hit after the first round
#   LFE_CG_STORE=              use this store instead (users user%07u,
#                             passwords pw%07u under ou=people,dc=example,dc=com)
#   LFE_CG_CONNS=256           generator connections (the per-source cap;
#                             many keep the server under valgrind busy)
#   LFE_CG_BINDS=3000          binds in the N window (the 2N window: twice)
#   LFE_CG_WARM_BINDS=         binds before the windows (default: 8 per
#                             generator user up to 5000 users, so that the
#                             credential cache holds them all; else 2000)
#   LFE_CG_IDLE_S=3            seconds of the idle window
#   LFE_CG_WORKLOAD=persistent or session (connect, bind, unbind, close:
#                             the figures are then per whole session)
#   LFE_CG_CONF=               daemon config items section.key=value,
#                             e.g. "store.bind_cache=0"
#   LFE_CG_OUT=BUILD/callgrind-bind  dumps, logs, result.txt, result.json
#   LFE_CG_VGARGS=             more valgrind options, e.g. --cache-sim=yes
#                             (the dumps then also count simulated cache
#                             misses: callgrind_bind.py --event DLmr)
#   LFE_CG_TLS=                1: LDAPS (TLS 1.3, a throwaway P-256
#                             certificate made here; ldapfe's record layer
#                             unless LFE_CG_CONF says tls.record_layer=openssl):
#                             the generator's --tls on port 636, its
#                             handshakes in the warm-up; the figures are per
#                             TLS bind, its two records included
#   LFE_NS_TAG=                suffix of the namespace and EAL prefixes
#                             (tests/integration/lib.sh's: lfe-cg<tag>-srv)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${LFE_CG_BUILD:-$ROOT/build-bench}
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD
USERS=${LFE_CG_USERS:-100000}
GEN_USERS=${LFE_CG_GEN_USERS:-$USERS}
CONNS=${LFE_CG_CONNS:-256}
BINDS=${LFE_CG_BINDS:-3000}
WARM_BINDS=${LFE_CG_WARM_BINDS:-$((GEN_USERS <= 5000 ? 8 * GEN_USERS : 2000))}
IDLE_S=${LFE_CG_IDLE_S:-3}
WORKLOAD=${LFE_CG_WORKLOAD:-persistent}
OUT=${LFE_CG_OUT:-$BUILD/callgrind-bind}
SUFFIX="dc=example,dc=com"
PY=/usr/bin/python3
CG_NAME=cg CG_NET=192

# checks, build, lib.sh (namespace lfe-cg<tag>-srv, clean-up), cg_store,
# cg_conf, cg_ready, tel, wait_binds
source "$ROOT/tests/bench/cg-common.sh"

STORE=${LFE_CG_STORE:-$WORK/store-$USERS}
[[ -n ${LFE_CG_STORE:-} ]] || cg_store "$STORE"
[[ -d $STORE ]] || die "no store at $STORE"

CONF=$OUT/ldapfe.conf
cg_conf "$CONF.base" "$STORE"
# shellcheck disable=SC2206   # LFE_CG_CONF: words
ITEMS=(${LFE_CG_CONF:-})
GEN_TLS=()
if [[ ${LFE_CG_TLS:-} == 1 ]]; then
	mkdir -p "$OUT/tls"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$OUT/tls/srv.key" \
		-out "$OUT/tls/srv.crt" -days 2 -subj "/CN=$SADDR" >/dev/null 2>&1 || die "openssl req failed"
	# No handshake deadline: under valgrind 256 handshakes take longer than
	# the default 10 s and would be reset (tls_handshake_expired).
	ITEMS=(ldap.ldaps_ports=636 "tls.certificate=$OUT/tls/srv.crt" "tls.key=$OUT/tls/srv.key"
	       tls.handshake_timeout_ms=0 "${ITEMS[@]}")
	GEN_TLS=(--tls --tls-version 1.3 --dport 636)
fi
# LFE_CG_CONF items go under their sections (appended: a later key wins).
"$PY" - "$CONF.base" "$CONF" "${ITEMS[@]}" <<'EOF'
import re, sys
src, dst, items = sys.argv[1], sys.argv[2], sys.argv[3:]
secs, cur = {}, None
for line in open(src).read().splitlines():
    m = re.match(r"^\[(.+)\]$", line)
    if m:
        cur = m.group(1); secs.setdefault(cur, [])
    elif line.strip():
        secs[cur].append(line)
for it in items:
    m = re.match(r"^(\w+)\.(\w+)=(.*)$", it)
    if not m:
        sys.exit("callgrind-bind.sh: bad config item %r" % it)
    s, k, v = m.groups()
    secs[s] = [l for l in secs.setdefault(s, []) if l.split("=")[0].strip() != k] + ["%s = %s" % (k, v)]
open(dst, "w").write("".join("[%s]\n%s\n" % (s, "\n".join(l)) for s, l in secs.items()))
EOF

log "ldapfe under callgrind (store $STORE, generator users $GEN_USERS, conf items: ${LFE_CG_CONF:-none})"
# --fair-sched: the worker busy-polls, and valgrind runs one thread at a
# time; memif's control thread must get its turn to bring the link up.
# shellcheck disable=SC2086   # LFE_CG_VGARGS: words, e.g. --cache-sim=yes
ip netns exec "$NS" valgrind --tool=callgrind --fair-sched=yes --collect-atstart=no ${LFE_CG_VGARGS:-} \
	--toggle-collect=lfe_worker_main --toggle-collect=lfe_tcp_timers \
	--toggle-collect=lfe_store_reader_renew --toggle-collect=lfe_worker_ctl_poll \
	--toggle-collect='publish*' \
	--callgrind-out-file="$OUT/callgrind.out.%p" \
	"$LDAPFE" -l 0 --no-pci --no-huge -m 512 --file-prefix "$PFX" \
	--log-level=lib.eal:error -- --config "$CONF" > "$OUT/ldapfe.log" 2>&1 &
LFE_PID=$!
cg_ready 1800

start_gen() {
	ip netns exec "$NS" timeout 900 "$GEN" -l 1 --no-pci --no-huge -m 256 \
		--file-prefix "$PFX-gen" --log-level=lib.eal:error \
		-- --port "net_memif0,role=client,id=0,socket=$SOCK,socket-abstract=no" \
		--src-ip "$CADDR/24" --dst-ip "$SADDR" \
		--users "$GEN_USERS" --user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
		--workload "$WORKLOAD" --conns "$CONNS" --rate max --duration 800 --quiet \
		--binds-per-conn 0 --connect-timeout-ms 30000 "${GEN_TLS[@]}" > "$OUT/gen.log" 2>&1 &
	cg_gen_pid $!
}
# The generator gives the memif link 10 s; under valgrind the server's
# control thread may need longer: try again while it reports the link down.
for ((try = 1; ; try++)); do
	log "generator: $CONNS connections, persistent binds (try $try)"
	start_gen
	up=0
	for ((i = 0; i < 300; i++)); do
		sleep 0.2
		kill -0 "$GEN_PID" 2>/dev/null || break
		read -r b c < <(tel)
		((c == CONNS && b > 0)) && { up=1; break; }
	done
	((up)) && break
	lfe_stop_pid "$GEN_PID" 30
	GEN_PID=
	grep -q "still down" "$OUT/gen.log" && ((try < 4)) || die "generator: $(tail -2 "$OUT/gen.log")"
done
cg() { callgrind_control "$1" "$LFE_PID" >/dev/null 2>&1 || die "callgrind_control $1 failed"; }
# Warm-up: every connection has bound (and the credential cache, when the
# generator's users are few, holds them all) before the windows open.
read -r b _ < <(tel)
wait_binds $((b + WARM_BINDS))
log "windows: $BINDS and $((2 * BINDS)) binds, then ${IDLE_S} s idle"
read -r b _ < <(tel)
cg -z
wait_binds $((b + BINDS))
cg -d   # dump 1: the N window
read -r b _ < <(tel)
wait_binds $((b + 2 * BINDS))
cg -d   # dump 2: the 2N window
lfe_stop_pid "$GEN_PID" 30
GEN_PID=
sleep 1
cg -z
sleep "$IDLE_S"
cg -d   # dump 3: idle, no traffic (the connections stay open, unused)
sleep 1
# callgrind writes its last dump on the way out: time enough for that
lfe_stop_pid "$LFE_PID" 120
LFE_PID=
d=("$OUT"/callgrind.out.*.[123])
((${#d[@]} == 3)) || die "expected 3 dumps, got: ${d[*]}"
base=${d[0]%.[123]}
"$PY" "$ROOT/tests/bench/callgrind_bind.py" "$base.1" "$base.2" "$base.3" --json "$OUT/result.json" \
	| tee "$OUT/result.txt"
