#!/usr/bin/env bash
# tests/bench/callgrind-gen.sh — callgrind instructions per persistent bind
# of one ldapfe-gen lcore, by layer, for before/after figures of the
# generator (issue 13: one generator core must drive >= 2x what one server
# core answers). Not part of CI; needs root (a namespace, EAL) and valgrind.
#
# The mirror of callgrind-bind.sh: here ldapfe runs natively (--no-huge, one
# worker, a small store so that it answers at once) and ldapfe-gen (one
# lcore, persistent binds over net_memif) under callgrind, collecting only
# inside its loop turn (gen_poll_once) less the TCP timer wheel
# (lfe_tcp_timers: paced by the clock, not by binds; under valgrind a turn
# takes ~50x longer, so per bind it would be overstated ~50x). After a
# warm-up three windows are dumped: N binds and 2N binds (counted by the
# daemon's telemetry, only to size them), then idle (the daemon stopped
# with SIGSTOP: every turn finds nothing). The figures come from the dumps
# alone:
#   per bind = (cost(2N) - cost(N)) / (binds(2N) - binds(N)),
# binds being the calls of lfe_gen_bind_pdu (one per bind request built;
# with a fixed number outstanding, requests and responses of a window
# differ by at most the connections, and the difference cancels that),
# with the turns that received nothing taken out: each window's empty turns
# (turns: calls of lfe_tcp_flush, one a turn; busy turns: calls of
# input_frames) times the idle window's cost per turn. How many empty turns
# a window has depends on the machine's load (the native daemon's answers
# arrive while the generator is slowed ~50x); what remains does not, apart
# from binds per busy turn (printed: what a turn costs once is shared by
# the binds it carries).
# The dumps are read with tests/bench/callgrind_bind.py's parse(); the
# layers are the generator's: its own code (gen/), the response decoder
# (ldap/), net/tcp*.c, net/net.c, the memif PMD, mbuf/mempool,
# other DPDK, libc.
#
# Environment (defaults):
#   LFE_CG_BUILD=build-bench   build dir (meson -O3 -g, made if absent)
#   LFE_CG_USERS=1000          store size ({SSHA}), BUILD/bench-work/store-N
#                             (made if absent); the generator binds as all
#   LFE_CG_CONNS=64            generator connections
#   LFE_CG_BINDS=20000         binds in the N window (the 2N window: twice)
#   LFE_CG_WARM_BINDS=10000    binds before the windows (every user's
#                             credentials cached by the server)
#   LFE_CG_IDLE_S=2            seconds of the idle window
#   LFE_CG_WORKLOAD=persistent or session (connect, bind, unbind, close:
#                             the figures are then per whole session)
#   LFE_CG_GEN_ARGS=           more ldapfe-gen options (e.g. --dist zipf:1)
#   LFE_CG_GEN_ZC=1            memif zero-copy on the generator's side, as
#                             run-bench.sh's LFE_BENCH_GEN_ZC; 0: copy mode
#                             (1,973 instructions a bind against 2,162)
#   LFE_CG_OUT=BUILD/callgrind-gen  dumps, logs, result.txt, result.json
#   LFE_NS_TAG=                suffix of the namespace and EAL prefixes
#                             (tests/integration/lib.sh's: lfe-cgg<tag>-srv)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${LFE_CG_BUILD:-$ROOT/build-bench}
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD
USERS=${LFE_CG_USERS:-1000}
CONNS=${LFE_CG_CONNS:-64}
BINDS=${LFE_CG_BINDS:-20000}
WARM_BINDS=${LFE_CG_WARM_BINDS:-10000}
IDLE_S=${LFE_CG_IDLE_S:-2}
WORKLOAD=${LFE_CG_WORKLOAD:-persistent}
GEN_ZC=${LFE_CG_GEN_ZC:-1}
OUT=${LFE_CG_OUT:-$BUILD/callgrind-gen}
SUFFIX="dc=example,dc=com"
PY=/usr/bin/python3
CG_NAME=cgg CG_NET=193

# checks, build, lib.sh (namespace lfe-cgg<tag>-srv, clean-up), cg_store,
# cg_conf, cg_ready, tel, wait_binds
source "$ROOT/tests/bench/cg-common.sh"

STORE=$WORK/store-$USERS
cg_store "$STORE"

CONF=$OUT/ldapfe.conf
cg_conf "$CONF" "$STORE"

log "ldapfe (native, store $STORE)"
ip netns exec "$NS" "$LDAPFE" -l 0 --no-pci --no-huge -m 512 --file-prefix "$PFX" \
	--log-level=lib.eal:error -- --config "$CONF" > "$OUT/ldapfe.log" 2>&1 &
LFE_PID=$!
cg_ready 600

log "ldapfe-gen under callgrind: $CONNS connections, $WORKLOAD workload, $USERS users"
# --fair-sched: the lcore busy-polls and valgrind runs one thread at a time;
# memif's control thread must get its turn to bring the link up.
gen_eal=(--no-huge -m 256) gen_dev="net_memif0,role=client,id=0,socket=$SOCK,socket-abstract=no"
((GEN_ZC)) && gen_eal+=(--single-file-segments) gen_dev+=",zero-copy=yes"
# shellcheck disable=SC2086
ip netns exec "$NS" valgrind --tool=callgrind --fair-sched=yes --collect-atstart=no \
	--toggle-collect='gen_poll_once*' --toggle-collect=lfe_tcp_timers \
	--callgrind-out-file="$OUT/callgrind.out.%p" \
	"$GEN" -l 1 --no-pci "${gen_eal[@]}" --file-prefix "$PFX-gen" --log-level=lib.eal:error \
	-- --port "$gen_dev" \
	--src-ip "$CADDR/24" --dst-ip "$SADDR" \
	--users "$USERS" --user-fmt "uid=user%07u,ou=people,$SUFFIX" --password-fmt 'pw%07u' \
	--workload "$WORKLOAD" --conns "$CONNS" --rate max --duration 800 --quiet \
	--binds-per-conn 0 --connect-timeout-ms 30000 ${LFE_CG_GEN_ARGS:-} > "$OUT/gen.log" 2>&1 &
cg_gen_pid $!
up=0
for ((i = 0; i < 600; i++)); do
	sleep 0.2
	kill -0 "$GEN_PID" 2>/dev/null || die "generator exited: $(tail -3 "$OUT/gen.log")"
	read -r b c < <(tel)
	# sessions: connections come and go, so binds alone say it runs
	((b > 0)) && [[ $WORKLOAD == session || $c == "$CONNS" ]] && { up=1; break; }
done
((up)) || die "no $CONNS connections binding in 120 s: $(tail -3 "$OUT/gen.log")"
cg() { callgrind_control "$1" "$GEN_PID" >/dev/null 2>&1 || die "callgrind_control $1 failed"; }
read -r b _ < <(tel)
wait_binds $((b + WARM_BINDS))
log "windows: $BINDS and $((2 * BINDS)) binds"
read -r b _ < <(tel)
cg -z
wait_binds $((b + BINDS))
cg -d   # dump 1: the N window
read -r b _ < <(tel)
wait_binds $((b + 2 * BINDS))
cg -d   # dump 2: the 2N window
log "idle window: ldapfe stopped for ${IDLE_S} s"
kill -STOP "$LFE_PID"
sleep 1   # what was in flight is taken
cg -z
sleep "$IDLE_S"
cg -d   # dump 3: idle
kill -CONT "$LFE_PID"
# callgrind writes its last dump on the way out: time enough for that
lfe_stop_pid "$GEN_PID" 120
GEN_PID=
lfe_stop_pid "$LFE_PID" 10
LFE_PID=
d=("$OUT"/callgrind.out.*.[123])
((${#d[@]} == 3)) || die "expected 3 dumps, got: ${d[*]}"
base=${d[0]%.[123]}

"$PY" - "$ROOT/tests/bench" "$base.1" "$base.2" "$base.3" "$OUT/result.json" "$WORKLOAD" <<'EOF' | tee "$OUT/result.txt"
import json, re, sys
sys.path.insert(0, sys.argv[1])
from callgrind_bind import parse  # the one parser of callgrind dumps

BIND_FN = "lfe_gen_bind_pdu"
# (layer, regex on the source file or object path), first match wins.
LAYERS = [
    ("pmd memif", r"net_memif|/memif/"),
    ("dpdk mbuf/mempool/ring", r"rte_mbuf|rte_mempool|mempool|rte_ring|librte_mbuf|librte_ring"),
    ("dpdk other (ethdev, cycles)", r"librte_|/rte_|dpdk"),
    ("gen/main.c (loop, tx, checks)", r"gen/main\.c"),
    ("gen/pdu.c (request build)", r"gen/pdu\.[ch]"),
    ("gen/hist+dist (latency, user draw)", r"gen/(hist|dist|tuples)\.[ch]"),
    ("ldap/ response decode", r"ldap/"),
    ("net eth/ip/tcp hdr, csum", r"net/net\.[ch]"),
    ("tcp", r"net/tcp[a-z_]*\.[ch]"),
    ("libc", r"libc\.so|libc-|/glibc|string/|memcpy|memset|memmove|memcmp"),
]
CALLS = ["lfe_gen_bind_pdu", "lfe_ldap_decode_resp", "lfe_ldap_frame", "lfe_net_parse", "lfe_tcp_input",
         "lfe_net_build_tcp", "lfe_tcp_flush", "lfe_tcp_send", "eth_memif_rx", "eth_memif_tx",
         "rte_pktmbuf_free_bulk", "memcpy", "memset", "memmove"]


def layer_of(path, ob):
    for name, rx in LAYERS:
        if re.search(rx, path) or (path in ("???", "?") and re.search(rx, ob)):
            return name
    return "other: " + (path if path not in ("???", "?") else ob.rsplit("/", 1)[-1])


def layers(d):
    out = {}
    for (path, ob), c in d["files"].items():
        k = layer_of(path, ob)
        out[k] = out.get(k, 0) + c
    return out


def turns(d):
    """Loop turns (lfe_tcp_flush, once a turn) and those that received
    frames (input_frames; gcc may name it input_frames.isra.0)."""
    busy = sum(n for f, n in d["calls"].items() if f.split(".")[0] == "input_frames")
    return d["calls"].get("lfe_tcp_flush", 0), busy


a, b, idle = parse(sys.argv[2]), parse(sys.argv[3]), parse(sys.argv[4])
ba, bb = a["calls"].get(BIND_FN, 0), b["calls"].get(BIND_FN, 0)
if bb <= ba or ba == 0:
    sys.exit("callgrind-gen: the 2N window has no more binds (%d, %d) than the N window" % (ba, bb))
db = bb - ba
la, lb = layers(a), layers(b)
(ta, ua), (tb, ub), (ti, ui) = turns(a), turns(b), turns(idle)
if not ti or ui:
    sys.exit("callgrind-gen: the idle window has %d turns, %d of them busy" % (ti, ui))
idle_turn = {k: v / ti for k, v in layers(idle).items()}
for k, v in idle_turn.items():
    la[k] = la.get(k, 0) - (ta - ua) * v
    lb[k] = lb.get(k, 0) - (tb - ub) * v
idle_cost = idle["total"] / ti
adj_a, adj_b = a["total"] - (ta - ua) * idle_cost, b["total"] - (tb - ub) * idle_cost
per = (adj_b - adj_a) / db
res = {"binds": [ba, bb], "instructions": [a["total"], b["total"]], "per_bind": per,
       "raw_per_bind": (b["total"] - a["total"]) / db, "turns": [ta, tb], "busy_turns": [ua, ub],
       "idle_turn_cost": idle_cost, "binds_per_busy_turn": db / (ub - ua) if ub > ua else 0.0,
       "per_bind_window_n": adj_a / ba, "per_bind_window_2n": adj_b / bb,
       "layers": {k: (lb.get(k, 0) - la.get(k, 0)) / db for k in set(la) | set(lb)},
       "calls_per_bind": {f: (b["calls"].get(f, 0) - a["calls"].get(f, 0)) / db for f in CALLS}}
print("ldapfe-gen, one lcore, %s workload: binds in the windows %d, %d; instructions %d, %d"
      % (sys.argv[6], ba, bb, a["total"], b["total"]))
print("loop turns %d, %d, of which received frames %d, %d; an empty turn costs %.0f instructions"
      % (ta, tb, ua, ub, idle_cost))
print("instructions per bind: %.0f (difference of the windows, empty turns out; %.0f with them); "
      "%.0f and %.0f (each window alone, empty turns out); binds per busy turn %.1f"
      % (per, res["raw_per_bind"], res["per_bind_window_n"], res["per_bind_window_2n"],
         res["binds_per_busy_turn"]))
print()
print("| layer (self, by source file) | instr/bind | share |")
print("|---|---|---|")
for k, v in sorted(res["layers"].items(), key=lambda kv: -kv[1]):
    if abs(v) >= 1:
        print("| %s | %.0f | %.1f%% |" % (k, v, 100.0 * v / per))
print()
print("calls per bind: " + ", ".join("%s %.2f" % kv for kv in res["calls_per_bind"].items() if kv[1]))
print()
top = sorted(((b["self"].get(k, 0) - a["self"].get(k, 0)) / db, k) for k in set(a["self"]) | set(b["self"]))
print("top functions (self instr/bind, empty turns in):")
for v, k in reversed(top[-25:]):
    print("  %7.0f  %s" % (v, k))
incl = sorted(((b["incl"].get(k, 0) - a["incl"].get(k, 0)) / db, k) for k in set(a["incl"]) | set(b["incl"]))
print("top functions (inclusive instr/bind, empty turns in):")
for v, k in reversed(incl[-25:]):
    print("  %7.0f  %s" % (v, k))
json.dump(res, open(sys.argv[5], "w"), indent=2, sort_keys=True)
EOF
