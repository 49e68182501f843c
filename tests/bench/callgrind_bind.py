#!/usr/bin/env python3
"""tests/bench/callgrind_bind.py — instructions per bind by layer from
callgrind dumps of the worker (tests/bench/callgrind-bind.sh).

  callgrind_bind.py DUMP_N DUMP_2N [DUMP_IDLE] [--json OUT.json] [--event EV]

--event: another of the dumps' events instead of Ir, e.g. DLmr (last-level
read misses) from a run with LFE_CG_VGARGS=--cache-sim=yes; the tables
then count that event.

Each dump covers one window of steady persistent binds (the worker never
idle: the generator keeps more binds outstanding than the server under
valgrind answers). The binds of a window are the calls of the glue's
bind entry (be_bind, once per BindRequest with a DN and a password).
Per bind = (cost(2N window) - cost(N window)) / (binds(2N) - binds(N)),
so whatever a window costs once (the dump itself, a timer wheel step that
fell into one window) cancels; both windows' plain ratios are printed too.

Layers are by the source file (or, without debug info, the shared object)
each instruction belongs to, inlined code included (fi=/fe=), so the
layers add up to the total. Stages are inclusive costs of the named
functions (each includes what it calls).
"""
import json
import re
import sys

BIND_FN = "be_bind"

# (layer, regex on the source file or object path), first match wins.
LAYERS = [
    ("pmd memif", r"net_memif|/memif/"),
    ("dpdk mbuf/mempool/ring", r"rte_mbuf|rte_mempool|mempool|rte_ring|librte_mbuf|librte_ring"),
    ("dpdk other", r"librte_|/rte_|dpdk"),
    ("worker loop+tx", r"dataplane/worker\.c"),
    ("net eth/ip/tcp hdr", r"net/net\.[ch]"),
    ("tcp", r"net/tcp[a-z_]*\.[ch]"),
    ("stream", r"tls/stream\.c"),
    ("glue", r"dataplane/glue\.c"),
    ("verifier/tlsoff poll", r"(dataplane/(verifier|control|log)|tls/tlsoff)\.c"),
    ("ber/ldap codec", r"ldap/(ber|msg)\.[ch]"),
    ("session", r"ldap/session[a-z_]*\.[ch]"),
    ("dn.c+attr.c (normalize, attr types)", r"ldap/(dn|attr)\.c"),
    ("credcache+siphash", r"(backend/credcache|common/siphash)\.[ch]"),
    ("throttle", r"backend/throttle\.c"),
    ("store+lmdb", r"backend/(store\w*|record|acctlock|bindjob)\.c|liblmdb|mdb\.c|midl\.c"),
    ("password hash", r"backend/pwscheme\.c|libcrypto|sha"),
    ("libc", r"libc\.so|libc-|/glibc|string/|memcpy|memset|memmove|memcmp"),
]

STAGES = [
    ("rx+process+tx loop (lfe_worker_main)", "lfe_worker_main"),
    ("  net parse (lfe_net_parse)", "lfe_net_parse"),
    ("  tcp input (lfe_tcp_input)", "lfe_tcp_input"),
    ("    stream deliver (lfe_stream_deliver)", "lfe_stream_deliver"),
    ("      session (lfe_session_process)", "lfe_session_process"),
    ("        ldap decode (lfe_ldap_decode)", "lfe_ldap_decode"),
    ("        dn normalize (lfe_dn_normalize)", "lfe_dn_normalize"),
    ("        backend bind (be_bind)", "be_bind"),
    ("          credcache key (lfe_credcache_key)", "lfe_credcache_key"),
    ("          credcache check (lfe_credcache_check)", "lfe_credcache_check"),
    ("          store verify (lfe_store_verify_bind)", "lfe_store_verify_bind"),
    ("        result encode (lfe_ldap_enc_result)", "lfe_ldap_enc_result"),
    ("  tcp flush (lfe_tcp_flush)", "lfe_tcp_flush"),
    ("  tcp timers (lfe_tcp_timers)", "lfe_tcp_timers"),
    ("  segment out (lfe_worker_tx_seg)", "lfe_worker_tx_seg"),
    ("    frame build (lfe_net_build_tcp)", "lfe_net_build_tcp"),
    ("  verifier poll (lfe_verifier_poll)", "lfe_verifier_poll"),
    ("  tlsoff poll (lfe_tlsoff_poll)", "lfe_tlsoff_poll"),
]

NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


def parse(path, event="Ir"):
    names = {"ob": {}, "fl": {}, "fn": {}}
    kind_of = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl",
               "cfl": "fl", "fn": "fn", "cfn": "fn"}

    def name(kind, val):
        m = NAMED.match(val)
        if not m:
            return val
        tab = names[kind_of[kind]]
        if m.group(2) is not None:
            tab[m.group(1)] = m.group(2)
        return tab.get(m.group(1), "?")

    self_cost = {}      # fn -> Ir
    layer_cost = {}     # file-or-object -> Ir
    calls_to = {}       # fn -> call count
    calls_from = {}     # (caller, callee) -> call count
    incl_calls = {}     # fn -> Ir of the calls it makes (to other functions)
    ob = fl = fi = fn = "?"
    cfn = None
    pending_call = False
    total = 0
    col = 1     # the event's column in a cost line (after the position)
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line[0] == "#":
                continue
            c0 = line[0]
            if c0.isdigit() or c0 in "+-*":
                parts = line.split()
                cost = int(parts[col]) if len(parts) > col else 0   # trailing zeros left out
                if pending_call:
                    pending_call = False
                    if cfn != fn:
                        incl_calls[fn] = incl_calls.get(fn, 0) + cost
                    continue
                self_cost[fn] = self_cost.get(fn, 0) + cost
                where = fi if fi != "?" else fl
                key = where if where != "???" else ob
                layer_cost[(key, ob)] = layer_cost.get((key, ob), 0) + cost
                total += cost
                continue
            if line.startswith("events:"):
                evs = line.split()[1:]
                if event not in evs:
                    sys.exit("callgrind_bind.py: %s counts no %s (it has %s)" % (path, event, " ".join(evs)))
                col = 1 + evs.index(event)
                continue
            key, _, val = line.partition("=")
            if key == "ob":
                ob = name("ob", val)
            elif key == "fl":
                fl = name("fl", val)
                fi = "?"
            elif key in ("fi", "fe"):
                fi = name(key, val)
            elif key == "fn":
                fn = name("fn", val)
                fi = "?"
            elif key in ("cob", "cfi", "cfl"):
                name(key, val)
            elif key == "cfn":
                cfn = name("cfn", val)
            elif key == "calls":
                n = int(val.split()[0])
                calls_to[cfn] = calls_to.get(cfn, 0) + n
                calls_from[(fn, cfn)] = calls_from.get((fn, cfn), 0) + n
                pending_call = True
    incl = {k: self_cost.get(k, 0) + incl_calls.get(k, 0) for k in set(self_cost) | set(incl_calls)}
    return {"total": total, "self": self_cost, "incl": incl, "calls": calls_to, "files": layer_cost,
            "from": calls_from}


def layer_of(path, ob):
    for name, rx in LAYERS:
        if re.search(rx, path) or (path in ("???", "?") and re.search(rx, ob)):
            return name
    if re.search(r"ldapfe$", ob):
        return "other ldapfe"
    return "other: " + ob.rsplit("/", 1)[-1]


def layers(d):
    out = {}
    for (path, ob), c in d["files"].items():
        ln = layer_of(path, ob)
        out[ln] = out.get(ln, 0) + c
    return out


def loops(d):
    """Worker loop turns (one rx poll of the one port each) and the turns
    whose poll found frames (process_frames ran: gcc may rename it
    process_frames.isra.0 and the like)."""
    turns = d["calls"].get("rx_port", 0)
    busy = sum(n for fnn, n in d["calls"].items() if fnn.split(".")[0] == "process_frames")
    return turns, busy


def main():
    args = sys.argv[1:]
    out_json = None
    if "--json" in args:
        i = args.index("--json")
        out_json = args[i + 1]
        del args[i:i + 2]
    event = "Ir"
    if "--event" in args:
        i = args.index("--event")
        event = args[i + 1]
        del args[i:i + 2]
    if len(args) not in (2, 3):
        sys.exit(__doc__)
    a, b = parse(args[0], event), parse(args[1], event)
    idle = parse(args[2], event) if len(args) == 3 else None
    if event != "Ir":
        print("event: %s (every 'instructions' below counts it)" % event)
    ba, bb = a["calls"].get(BIND_FN, 0), b["calls"].get(BIND_FN, 0)
    if bb <= ba or ba == 0:
        sys.exit("callgrind_bind.py: the 2N window has no more binds (%d, %d) than the N window" % (ba, bb))
    db = bb - ba
    la, lb = layers(a), layers(b)
    (ta, ua), (tb, ub) = loops(a), loops(b)
    # Idle polls out: per layer, the idle window's cost per loop turn times
    # the turns that found nothing.
    idle_turn = {}
    if idle:
        ti, _ = loops(idle)
        if ti:
            idle_turn = {k: v / ti for k, v in layers(idle).items()}
    ia, ib = ta - ua, tb - ub
    for k, v in idle_turn.items():
        la[k] = la.get(k, 0) - ia * v
        lb[k] = lb.get(k, 0) - ib * v
    idle_cost = sum(idle_turn.values())
    adj_a, adj_b = a["total"] - ia * idle_cost, b["total"] - ib * idle_cost
    res = {
        "binds": [ba, bb], "instructions": [a["total"], b["total"]],
        "loop_turns": [ta, tb], "busy_turns": [ua, ub], "idle_turn_cost": idle_cost,
        "raw_per_bind": (b["total"] - a["total"]) / db,
        "per_bind_window_n": adj_a / ba, "per_bind_window_2n": adj_b / bb,
        "per_bind": (adj_b - adj_a) / db,
        "binds_per_busy_turn": db / (ub - ua) if ub > ua else 0.0,
        "layers": {k: (lb.get(k, 0) - la.get(k, 0)) / db for k in set(la) | set(lb)},
        "stages": {fnn: (b["incl"].get(fnn, 0) - a["incl"].get(fnn, 0)) / db for _, fnn in STAGES},
        "calls_per_bind": {fnn: (b["calls"].get(fnn, 0) - a["calls"].get(fnn, 0)) / db
                           for fnn in ("rx_port", "lfe_tcp_input", "lfe_worker_tx_seg", "flush_port",
                                       "rte_pktmbuf_alloc", "lfe_session_process", "memcpy", "memset")},
    }
    print("binds in the windows: %d, %d; instructions %d, %d" % (ba, bb, a["total"], b["total"]))
    print("loop turns %d, %d, of which found frames %d, %d; an idle turn costs %.0f instructions"
          % (ta, tb, ua, ub, idle_cost))
    print("instructions per bind: %.0f (difference of the windows, idle turns out; %.0f with them); "
          "%.0f and %.0f (each window alone, idle out)"
          % (res["per_bind"], res["raw_per_bind"], res["per_bind_window_n"], res["per_bind_window_2n"]))
    res["segments_per_bind_2n"] = [b["calls"].get("lfe_tcp_input", 0) / bb,
                                   b["calls"].get("lfe_worker_tx_seg", 0) / bb]
    print("binds per busy loop turn: %.1f; TCP segments per bind in the 2N window: %.2f in, %.2f out "
          "(1 and 1 when every request carries the ACK of the last answer and every answer the "
          "ACK of its request; more under load: the generator's delayed ACKs, retransmissions)"
          % (res["binds_per_busy_turn"], res["segments_per_bind_2n"][0], res["segments_per_bind_2n"][1]))
    print()
    print("| layer (self, by source file; idle turns out) | instr/bind | share |")
    print("|---|---|---|")
    for k, v in sorted(res["layers"].items(), key=lambda kv: -kv[1]):
        if abs(v) >= 1:
            print("| %s | %.0f | %.1f%% |" % (k, v, 100.0 * v / res["per_bind"]))
    print()
    print("| stage (inclusive; idle turns in) | instr/bind |")
    print("|---|---|")
    for label, fnn in STAGES:
        print("| %s | %.0f |" % (label, res["stages"][fnn]))
    print()
    print("calls per bind: " + ", ".join("%s %.2f" % kv for kv in res["calls_per_bind"].items() if kv[1]))
    print()
    top = sorted(((b["self"].get(k, 0) - a["self"].get(k, 0)) / db, k) for k in set(a["self"]) | set(b["self"]))
    print("top functions (self instr/bind, idle turns in):")
    for v, k in reversed(top[-25:]):
        print("  %7.0f  %s" % (v, k))
    if out_json:
        with open(out_json, "w") as f:
            json.dump(res, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
