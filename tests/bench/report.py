#!/usr/bin/python3
"""tests/bench/report.py — the benchmark's table, JSON and chart.

  report.py report RUNS.jsonl OUTDIR [CALLGRIND.json] [--meta "k=v ..."]
      Medians over runs per (target, transport, workload, users, dist,
      variant): binds/s, sessions/s, latency p50/p99, server and generator
      busy µs per bind, which side was the limit (the busier core), and
      the ratios ldapfe/slapd. Prints a table, writes OUTDIR/results.json
      and OUTDIR/bench.png (Debian's python3-matplotlib, Agg backend).
  report.py callgrind ANNOTATE.txt GEN.json
      Instructions per bind by layer (tcp, ldap, backend, net, pmd, worker,
      other) from `callgrind_annotate --inclusive=no` output and the number
      of binds the generator counted over the same window; prints JSON.

Run lines (one JSON object per line, written by run-bench.sh):
  {"target": "ldapfe"|"slapd", "transport": "memif"|"afpacket",
   "workload": "persistent"|"session", "run": N, "server_cpu_s": S,
   "users": N, "dist": "uniform"|"zipf:S", "variant": NAME,
   "gen": <ldapfe-gen --json output>}
users, dist and variant may be absent (older lines): "", "uniform", "default".
server_cpu_s is ldapfe's busy time (telemetry busy_cycles) or slapd's CPU
time; the generator's busy time is gen_busy_cycles / tsc_hz of its JSON.
"""

# A side counts as the limit when its core is at least this busy.
LIMIT_BUSY = 0.85
import json
import os
import re
import statistics
import sys


def median(xs):
    return statistics.median(xs) if xs else 0.0


def key_of(r):
    return (r["target"], r["transport"], r["workload"], str(r.get("users", "")),
            r.get("dist", "uniform"), r.get("variant", "default"))


def gen_busy_s(r):
    g = r["gen"]
    return g.get("gen_busy_cycles", 0) / g["tsc_hz"] if g.get("tsc_hz") else 0.0


def limit_of(server_frac, gen_frac):
    """Which side limited the run: the busier core, if it was (nearly) saturated."""
    if max(server_frac, gen_frac) < LIMIT_BUSY:
        return "neither"
    return "server" if server_frac >= gen_frac else "generator"


def summarize(runs):
    groups = {}
    for r in runs:
        groups.setdefault(key_of(r), []).append(r)
    rows = []
    for (target, transport, workload, users, dist, variant), rs in sorted(groups.items()):
        def g(f):
            return [f(r) for r in rs]
        cpu_per_bind = g(lambda r: 1e6 * r["server_cpu_s"] / r["gen"]["binds"] if r["gen"]["binds"] else 0.0)
        gen_per_bind = g(lambda r: 1e6 * gen_busy_s(r) / r["gen"]["binds"] if r["gen"]["binds"] else 0.0)
        server_frac = median(g(lambda r: r["server_cpu_s"] / r["gen"]["duration_s"]))
        gen_frac = median(g(lambda r: gen_busy_s(r) / r["gen"]["duration_s"] / r["gen"].get("lcores", 1)))
        rows.append({
            "target": target, "transport": transport, "workload": workload, "users": users,
            "dist": dist, "variant": variant, "runs": len(rs),
            "binds_per_s": median(g(lambda r: r["gen"]["binds_per_s"])),
            "sessions_per_s": median(g(lambda r: r["gen"]["sessions_per_s"])),
            "p50_us": median(g(lambda r: r["gen"]["latency_us"]["p50"])),
            "p99_us": median(g(lambda r: r["gen"]["latency_us"]["p99"])),
            "server_cpu_us_per_bind": median(cpu_per_bind),
            "gen_busy_us_per_bind": median(gen_per_bind),
            "server_busy": server_frac, "gen_busy": gen_frac,
            "limit": limit_of(server_frac, gen_frac),
            "errors": sum(g(lambda r: r["gen"]["errors"]["total"])),
            "all_binds_per_s": g(lambda r: round(r["gen"]["binds_per_s"])),
        })
    return rows


def headline(rows):
    """The rows the ratios and the first panels use: the largest store, the
    uniform distribution, the first variant (the old single-row layout)."""
    if not rows:
        return rows
    users = max((r["users"] for r in rows), key=lambda u: int(u) if u.isdigit() else -1)
    variants = sorted({r["variant"] for r in rows}, key=lambda v: (v != "default", v))
    return [r for r in rows if r["users"] == users and r["dist"] == "uniform" and r["variant"] == variants[0]] \
        or rows


def find(rows, target, transport, workload):
    for r in headline(rows):
        if (r["target"], r["transport"], r["workload"]) == (target, transport, workload):
            return r
    return None


def ratios(rows):
    out = []
    for wl in ("persistent", "session"):
        s = find(rows, "slapd", "afpacket", wl)
        if not s:
            continue
        for tr in ("afpacket", "memif"):
            l = find(rows, "ldapfe", tr, wl)
            if not l:
                continue
            out.append({
                "workload": wl, "ldapfe_transport": tr, "slapd_transport": "afpacket",
                "binds_per_s": l["binds_per_s"] / s["binds_per_s"] if s["binds_per_s"] else None,
                "cpu_per_bind": (l["server_cpu_us_per_bind"] / s["server_cpu_us_per_bind"]
                                 if s["server_cpu_us_per_bind"] else None),
            })
    return out


def fmt_table(rows, rat, cg):
    lines = []
    hdr = ("target", "transport", "workload", "users", "dist", "variant", "binds/s", "sessions/s",
           "p50 us", "p99 us", "server busy us/bind", "gen busy us/bind", "limit (server/gen busy)",
           "errors", "runs (binds/s)")
    lines.append("| " + " | ".join(hdr) + " |")
    lines.append("|" + "---|" * len(hdr))
    for r in rows:
        lines.append("| %s | %s | %s | %s | %s | %s | %.0f | %.0f | %.1f | %.1f | %.2f | %.2f | %s (%.0f%%/%.0f%%) "
                     "| %d | %s |" % (
                         r["target"], r["transport"], r["workload"], r["users"], r["dist"], r["variant"],
                         r["binds_per_s"], r["sessions_per_s"], r["p50_us"], r["p99_us"],
                         r["server_cpu_us_per_bind"], r["gen_busy_us_per_bind"], r["limit"],
                         100 * r["server_busy"], 100 * r["gen_busy"], r["errors"],
                         " ".join(str(x) for x in r["all_binds_per_s"])))
    if rat:
        lines.append("")
        lines.append("| ratio ldapfe/slapd | binds/s | server CPU per bind |")
        lines.append("|---|---|---|")
        for x in rat:
            lines.append("| %s, ldapfe on %s vs slapd on %s | %s | %s |" % (
                x["workload"], x["ldapfe_transport"], x["slapd_transport"],
                "%.2f" % x["binds_per_s"] if x["binds_per_s"] is not None else "n/a",
                "%.3f" % x["cpu_per_bind"] if x["cpu_per_bind"] is not None else "n/a"))
    if cg:
        lines.append("")
        lines.append("callgrind: %.0f instructions per bind over %d binds (%s)" % (
            cg["instructions_per_bind"], cg["binds"], cg["window"]))
        lines.append("| layer | instructions/bind | share |")
        lines.append("|---|---|---|")
        for k, v in sorted(cg["layers"].items(), key=lambda kv: -kv[1]):
            lines.append("| %s | %.0f | %.1f%% |" % (k, v, 100.0 * v / cg["instructions_per_bind"]))
    return "\n".join(lines)


def chart(rows, cg, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [(r["target"], r["transport"]) for r in headline(rows)]
    series = sorted(set(labels), key=labels.index)
    names = ["%s\n%s" % s for s in series]
    # The store-size / distribution / variant rows: ldapfe persistent binds/s.
    grid = [r for r in rows if r["target"] == "ldapfe" and r["workload"] == "persistent"]
    npanels = 3 + (1 if cg else 0) + (1 if len(grid) > 1 else 0)
    fig, axes = plt.subplots(1, npanels, figsize=(4.6 * npanels, 4.5))
    for ax, wl, key, title in ((axes[0], "persistent", "binds_per_s", "persistent: binds/s"),
                               (axes[1], "session", "sessions_per_s", "session: sessions/s")):
        vals = [(find(rows, t, tr, wl) or {}).get(key, 0) for t, tr in series]
        bars = ax.bar(names, vals, color=["tab:blue" if t == "ldapfe" else "tab:gray" for t, _ in series])
        ax.bar_label(bars, fmt="%.0f", fontsize=8)
        ax.set_title(title)
    ax = axes[2]
    width = 0.35
    xs = range(len(series))
    vals_p = [(find(rows, t, tr, "persistent") or {}).get("server_cpu_us_per_bind", 0) for t, tr in series]
    vals_s = [(find(rows, t, tr, "session") or {}).get("server_cpu_us_per_bind", 0) for t, tr in series]
    b1 = ax.bar([x - width / 2 for x in xs], vals_p, width, label="persistent")
    b2 = ax.bar([x + width / 2 for x in xs], vals_s, width, label="session")
    ax.bar_label(b1, fmt="%.2f", fontsize=7)
    ax.bar_label(b2, fmt="%.2f", fontsize=7)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names)
    ax.set_title("server CPU µs per bind")
    ax.legend(fontsize=8)
    if cg:
        ax = axes[3]
        items = sorted(cg["layers"].items(), key=lambda kv: -kv[1])
        ax.barh([k for k, _ in items], [v for _, v in items], color="tab:blue")
        ax.set_title("ldapfe instructions per bind (callgrind)")
        ax.invert_yaxis()
    if len(grid) > 1:
        ax = axes[-1]
        gl = ["%s %s\n%s%s" % (r["transport"], r["users"], r["dist"],
                               "" if r["variant"] == "default" else " " + r["variant"]) for r in grid]
        bars = ax.barh(gl, [r["binds_per_s"] for r in grid],
                       color=["tab:red" if r["limit"] == "generator" else "tab:blue" for r in grid])
        ax.bar_label(bars, labels=["%.0f  %s" % (r["binds_per_s"], r["limit"]) for r in grid], fontsize=7)
        ax.set_title("ldapfe persistent binds/s (red: generator-limited)")
        ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# ---- callgrind ----

LAYER_RULES = [
    # (layer, file regex, function regex); the first match wins.
    ("net", r"net/net\.[ch]$", r"^(lfe_net_|lfe_csum_|lfe_tcp_csum|lfe_arp_)"),
    ("tcp", r"net/tcp\.[ch]$", r"^lfe_tcp_"),
    ("ldap", r"(^|/)ldap/", r"^(lfe_ber|lfe_ldap|lfe_session|lfe_dn|lfe_filter)"),
    ("backend", r"(^|/)backend/|mdb\.c$|midl\.c$|/crypto/|sha1|sha256|sha512",
     r"^(lfe_store|lfe_pw|lfe_rec|lfe_be_|mdb_|SHA|sha1_|sha256_|sha512_|EVP_|OPENSSL_|CRYPTO_|ossl_)"),
    ("pmd", r"/drivers/|/lib/(ethdev|mbuf|mempool)/|/dpdk/rte_(ethdev|mbuf|mempool)",
     r"^(rte_|eth_|memif|eth_af_packet|pmd_|mempool_|common_ring|bucket_)"),
    ("worker", r"dataplane/|/dpdk/rte_", r"^lfe_"),
]
OBJ_RULES = [("backend", r"liblmdb|libcrypto"), ("pmd", r"librte_|/pmds-")]


def classify(file_, func, obj):
    for layer, frx, fnrx in LAYER_RULES:
        if file_ != "???" and re.search(frx, file_):
            return layer
    for layer, orx in OBJ_RULES:
        if obj and re.search(orx, obj):
            return layer
    for layer, frx, fnrx in LAYER_RULES:
        if re.search(fnrx, func):
            return layer
    return "other"


def callgrind(annotate_path, gen_path):
    gen = json.load(open(gen_path))
    binds = gen["binds"]
    layers = {}
    total = 0
    line_rx = re.compile(r"^\s*([\d,]+)\s+(?:\([\d.]+%\)\s+)?(\S.*?)\s*$")
    in_funcs = False
    for line in open(annotate_path, errors="replace"):
        if "file:function" in line:
            in_funcs = True
            continue
        if in_funcs and not line.strip() and layers:
            break   # the function table ends; annotated sources may follow
        m = line_rx.match(line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        rest = m.group(2)
        if "PROGRAM TOTALS" in rest:
            total = ir
            continue
        if not in_funcs or (total and ir >= total):
            continue   # callers above the toggled function carry the whole total
        obj = ""
        mo = re.match(r"^(.*?)\s+\[(.*)\]$", rest)
        if mo:
            rest, obj = mo.group(1), mo.group(2)
        file_, _, func = rest.rpartition(":")
        layer = classify(file_ or "???", func, obj)
        layers[layer] = layers.get(layer, 0) + ir
    counted = sum(layers.values())
    if total > counted:   # below callgrind_annotate's threshold
        layers["other"] = layers.get("other", 0) + (total - counted)
    per = {k: v / binds for k, v in layers.items()} if binds else {}
    return {"binds": binds, "instructions": total or counted,
            "instructions_per_bind": (total or counted) / binds if binds else 0,
            "layers": per, "window": "lfe_worker_main, counters zeroed before and dumped after "
                                      "the generator's run (idle polls included)"}


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "callgrind":
        json.dump(callgrind(sys.argv[2], sys.argv[3]), sys.stdout, indent=2)
        print()
        return 0
    if len(sys.argv) >= 4 and sys.argv[1] == "report":
        args = sys.argv[2:]
        meta = ""
        if "--meta" in args:
            i = args.index("--meta")
            meta = args[i + 1]
            del args[i:i + 2]
        runs = [json.loads(l) for l in open(args[0]) if l.strip()]
        outdir = args[1]
        cg = json.load(open(args[2])) if len(args) > 2 and os.path.exists(args[2]) else None
        rows = summarize(runs)
        rat = ratios(rows)
        print(fmt_table(rows, rat, cg))
        if meta:
            print("\n" + meta)
        res = {"meta": dict(kv.split("=", 1) for kv in meta.split()), "rows": rows, "ratios": rat,
               "callgrind": cg}
        with open(os.path.join(outdir, "results.json"), "w") as f:
            json.dump(res, f, indent=2)
        try:
            chart(rows, cg, os.path.join(outdir, "bench.png"))
            print("\nwrote %s and %s" % (os.path.join(outdir, "results.json"),
                                         os.path.join(outdir, "bench.png")))
        except ImportError:
            print("\nwrote %s (no PNG: python3-matplotlib missing)" % os.path.join(outdir, "results.json"))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
